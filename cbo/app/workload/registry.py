"""The named workloads: each is one entry saying where its queries and its data come from.

An entry prepares its data when asked (generated and loaded once into cbo's cache, as ``cbo
datagen`` does; later runs find it there) and returns a :class:`Workload` with its catalog. A new
workload is one more entry: a function from the options to its queries and catalogs.

* ``tpch``: the 22 TPC-H queries (``cbo.workloads.tpch_sql``), data by ``tpchgen-cli`` at
  ``--sf``, in any of TPC-H's placements (``all-spark``, ``all-postgres``, ``federated``,
  ``federated3``); the text runs unchanged on Spark, DuckDB and PostgreSQL.
* ``tpcds``: the 99 TPC-DS queries (``cbo.workloads.tpcds_queries``), data by ``tpcgen-cli``
  at ``--sf`` in TPC-DS's placements; the text is DuckDB's, transpiled for Spark and PostgreSQL.
* ``stats``, ``stats2``: the two seeded STATS workloads of COUNT(*) queries over the STATS data
  (``cbo.workloads.stats_queries``, ``stats_queries2``; ``--count`` queries, ``--seed``),
  placed in Parquet (``all-spark``) or in cbo's local PostgreSQL (``all-postgres``).
* ``existential``: the existential family of ``IN`` subqueries over TPC-H's customer and orders
  (``cbo.workloads.existential``), named ``e01`` ... ``e15``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from cbo.app.workload.workloads import Progress, Workload, WorkloadOptions, numbered, read_folder
from cbo.errors import CboError
from cbo.frontend.parse import DEFAULT_DIALECT

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"
TPCH_PLACEMENTS = ("all-spark", "all-postgres", "federated", "federated3")


@dataclass(frozen=True)
class NamedWorkload:
    name: str
    summary: str
    prepare: Callable[[WorkloadOptions, Progress], Workload]
    query_dir: Path | None = None      # a folder that is this workload when given as SOURCE

    def load(self, options: WorkloadOptions, progress: Progress) -> Workload:
        return self.prepare(options, progress)


def _placement(name: str, options: WorkloadOptions, allowed: tuple[str, ...]) -> str:
    if options.placement not in allowed:
        raise CboError(f"workload {name}: placement {options.placement!r} is not one of its own "
                       f"({', '.join(allowed)})")
    return options.placement


def _tpch(options: WorkloadOptions, progress: Progress) -> Workload:
    from cbo.workloads import tpch
    from cbo.workloads.tpch_queries import DIALECT, QUERY_DIR, all_queries

    placement = _placement("tpch", options, TPCH_PLACEMENTS)
    catalogs = tpch.prepare(options.sf, postgres=None if placement == "all-spark" else "local",
                            mariadb="local" if placement == "federated3" else None, progress=progress)
    queries = numbered([(q.name, q.sql) for q in all_queries()])
    return Workload("tpch", "tpch", queries, dialect=DIALECT, as_written=frozenset({"spark", "duckdb", "postgres"}),
                    catalog=catalogs[placement], catalogs=dict(catalogs), options=options,
                    facts={"query_dir": str(QUERY_DIR)})


def _tpcds(options: WorkloadOptions, progress: Progress) -> Workload:
    from cbo.workloads import tpcds
    from cbo.workloads.tpcds_queries import DIALECT, QUERY_DIR, all_queries

    placement = _placement("tpcds", options, tpcds.PLACEMENTS)
    catalogs = tpcds.prepare(options.sf, postgres=None if placement == "all-spark" else "local", progress=progress)
    queries = numbered([(q.name, q.sql) for q in all_queries()])
    # DuckDB's text (its tpcds extension's): Spark and PostgreSQL get it transpiled
    return Workload("tpcds", "tpcds", queries, dialect=DIALECT, as_written=frozenset({DIALECT}),
                    catalog=catalogs[placement], catalogs=dict(catalogs), options=options,
                    facts={"query_dir": str(QUERY_DIR)})


def _stats(which: str) -> Callable[[WorkloadOptions, Progress], Workload]:
    def prepare(options: WorkloadOptions, progress: Progress) -> Workload:
        from cbo.paths import cache_dir
        from cbo.workloads import stats_data

        placement = _placement(which, options, ("all-spark", "all-postgres"))
        if which == "stats":
            from cbo.workloads.stats_queries import SEED, generate
        else:
            from cbo.workloads.stats_queries2 import SEED, generate
        out = cache_dir() / "stats-data"
        server = None
        if placement == "all-postgres":
            from cbo.connectors.postgres.server import LocalPostgres

            server = LocalPostgres().start()
        prepared = stats_data.prepare(out, server, progress)
        catalogs = {f"all-{name}": path for name, path in prepared.items()}   # its placements, named
        count = options.count or 200
        seed = SEED if options.seed is None else options.seed
        progress(f"generating {count} {which} queries (seed {seed})")
        generated = generate(out, count, seed)
        # The generator quotes names as the SQL standard does ("users"): DuckDB and PostgreSQL
        # read that as written; Spark gets it transpiled (backquotes).
        return Workload(which, which, numbered([(q.name, q.sql) for q in generated]),
                        as_written=frozenset({"duckdb", "postgres"}),
                        catalog=catalogs[placement], catalogs=catalogs, options=options,
                        facts={"seed": seed, "count": count})
    return prepare


def _existential(options: WorkloadOptions, progress: Progress) -> Workload:
    from cbo.workloads import tpch
    from cbo.workloads.existential import cases

    _placement("existential", options, ("all-spark",))
    catalogs = tpch.prepare(options.sf, postgres=None, progress=progress)
    found = cases()
    return Workload("existential", "existential", numbered([(f"e{i:02d}", c.sql) for i, c in enumerate(found, 1)],
                                                           [c.name for c in found]),
                    as_written=frozenset({"spark", "duckdb", "postgres"}), catalog=catalogs["all-spark"],
                    catalogs=dict(catalogs), options=options)


WORKLOADS: dict[str, NamedWorkload] = {w.name: w for w in (
    NamedWorkload("tpch", "the 22 TPC-H queries; data generated at --sf, in --placement", _tpch,
                  query_dir=WORKLOADS_DIR / "tpch_sql"),
    NamedWorkload("tpcds", "the 99 TPC-DS queries (DuckDB's text); data generated at --sf, in --placement", _tpcds,
                  query_dir=WORKLOADS_DIR / "tpcds_sql"),
    NamedWorkload("stats", "seeded COUNT(*) queries over the STATS data (STATS-CEB's shape); --count, --seed",
                  _stats("stats")),
    NamedWorkload("stats2", "the second STATS workload: foreign keys meeting at shared keys; --count, --seed",
                  _stats("stats2")),
    NamedWorkload("existential", "the existential family: IN subqueries over TPC-H customer and orders, at --sf",
                  _existential),
)}


def names() -> list[str]:
    return list(WORKLOADS)


def find(source: str) -> NamedWorkload | None:
    """The named workload ``source`` is: its name, or its own query folder."""
    if source in WORKLOADS:
        return WORKLOADS[source]
    try:
        path = Path(source).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    if not path.is_dir():
        return None
    for workload in WORKLOADS.values():
        if workload.query_dir is not None and (path == workload.query_dir.resolve()
                                               or _same_files(path, workload.query_dir)):
            return workload
    return None


def _same_files(folder: Path, own: Path) -> bool:
    """A copy of a workload's query folder (a checkout's, when cbo is installed elsewhere) is
    that workload too: the same files with the same text."""
    def contents(where: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in where.glob("*.sql")}

    try:
        theirs = contents(folder)
        return bool(theirs) and own.is_dir() and theirs == contents(own)
    except OSError:
        return False


def listing() -> str:
    width = max(len(name) for name in WORKLOADS)
    lines = []
    for workload in WORKLOADS.values():
        lines.append(f"{workload.name:<{width}}  {workload.summary}")
    return "\n".join(lines)


def resolve(source: str, options: WorkloadOptions, *, dialect: str | None = None,
            progress: Progress = lambda _: None) -> Workload:
    """The workload ``source`` names: a named workload (prepared: data generated, catalog
    written) or a folder of ``.sql`` files. ``dialect`` overrides the dialect of a folder's
    queries (a named workload knows its own)."""
    named = find(source)
    if named is not None:
        workload = named.load(options, progress)
        return workload if dialect is None else replace(workload, dialect=dialect)
    folder = Path(source).expanduser()
    if not folder.exists():
        known = ", ".join(names())
        raise CboError(f"workload {source!r}: no such folder, nor a named workload ({known})")
    return Workload(folder.resolve().name, str(folder.resolve()), read_folder(folder),
                    dialect=dialect or DEFAULT_DIALECT)
