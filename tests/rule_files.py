"""Rule tests as data (CockroachDB's ``opt/xform/testdata/rules``): where a rule fires and where
it does not, one readable file per rule family under ``tests/testdata/rules``.

A case is a directive line, the SQL, ``----``, and the expected output::

    # Q17's shape: part joined on its key below the aggregation of lineitem.
    opt expect=PushTableIntoAggregate rows:part=200
    select ...
    ----
    - Project[...]  (est. rows 10)
        - ...

Directives:

* ``opt``: the chosen plan (EXPLAIN's tree with strategies and estimated rows);
* ``memo``: the memo (groups, expressions, costs; ``*`` marks the winners).

Options on the directive line:

* ``expect=Rule[,Rule]``: each rule fired (a transformation rule added an expression or merged
  groups; an implementation rule gave an alternative). ``expect-not=Rule[,Rule]``: none did.
* ``stats=NAME``: the statistics, by name, from ``tests/testdata/stats`` (default ``tpch-sf1``);
  ``stats=none`` plans without any (every estimate a default).
* ``rows:TABLE=N``: inline statistics: the table's statistics scaled to ``N`` rows (distinct
  counts capped at ``N``, histogram rows scaled, value frequencies kept).
* ``jdbc=DIALECT``: the tables live in one JDBC source of that dialect (``postgres``, ``mysql``, ``sqlite``)
  instead of Parquet, for the connector rules (planned only: the answer is still DuckDB's);
  ``jdbc_tables=a,b``: only those tables, the others stay in Parquet; ``jdbc_disable=a,b`` /
  ``jdbc_enable=a,b``: the source's capability overrides (``[sources.NAME.pushdown]``).
* ``name=value``: an optimizer setting (``cbo.settings``), as ``--set`` takes it.

The schema is TPC-H's (``lake.*`` tables of the SF 0.01 Parquet catalog). ``CBO_REWRITE=1``
rewrites the expected outputs (the expect options are still checked); review the diff.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from cbo.connectors import by_dialect
from cbo.settings import OptimizerSettings, parse_assignments
from tests.plan_files import read_blocks

RULES = Path(__file__).parent / "testdata" / "rules"
STATS = Path(__file__).parent / "testdata" / "stats"
DIRECTIVES = ("opt", "memo")


@dataclass
class RuleCase:
    path: Path
    line: int
    comments: list[str]
    directive: str
    options: list[str]
    sql: str
    expected: str
    expect: list[str] = field(default_factory=list)
    expect_not: list[str] = field(default_factory=list)
    stats: str = "tpch-sf1"
    rows: dict[str, float] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    jdbc: str | None = None                     # the dialect of a JDBC source holding the tables
    jdbc_tables: tuple[str, ...] = ()           # only these tables in it (default: all)
    jdbc_disable: tuple[str, ...] = ()          # its capability overrides
    jdbc_enable: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"

    def optimizer_settings(self) -> OptimizerSettings:
        return OptimizerSettings().with_values(self.settings)


def _parse_options(case: RuleCase) -> None:
    for item in case.options:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"{case.name}: an option is written name=value, not {item!r}")
        if name == "expect":
            case.expect += [r for r in value.split(",") if r]
        elif name == "expect-not":
            case.expect_not += [r for r in value.split(",") if r]
        elif name == "stats":
            case.stats = value
        elif name == "jdbc":
            case.jdbc = value
        elif name == "jdbc_tables":
            case.jdbc_tables = tuple(t for t in value.split(",") if t)
        elif name in ("jdbc_disable", "jdbc_enable"):
            setattr(case, name, tuple(t for t in value.split(",") if t))
        elif name.startswith("rows:"):
            case.rows[name[len("rows:"):]] = float(value)
        else:
            case.settings.update(parse_assignments([item]))


def read_rule_cases(path: Path) -> list[RuleCase]:
    cases = []
    for b in read_blocks(path, DIRECTIVES):
        case = RuleCase(path, b.line, b.comments, b.words[0], b.words[1:], b.sql, b.expected)
        _parse_options(case)
        cases.append(case)
    return cases


def write_rule_cases(path: Path, cases: list[RuleCase], outputs: dict[int, str]) -> None:
    blocks = []
    for case in cases:
        head = [*case.comments, " ".join([case.directive, *case.options])]
        blocks.append("\n".join(head + [case.sql, "----", outputs.get(case.line, case.expected)]))
    path.write_text("\n\n".join(blocks) + "\n")


def scaled(stats, rows: float):  # type: ignore[no-untyped-def]
    """A table's statistics as if it had ``rows`` rows, with the same value distributions."""
    factor = rows / stats.row_count if stats.row_count else 0.0
    columns = {}
    for name, column in stats.columns.items():
        buckets = tuple(dataclasses.replace(b, rows=b.rows * factor, distinct=min(b.distinct, max(b.rows * factor, 1.0)))
                        for b in column.histogram)
        # Scaled counts are made up, never counted: no uniqueness may be read from them.
        columns[name] = dataclasses.replace(column, distinct=min(column.distinct, rows), histogram=buckets,
                                            distinct_exact=False)
    groups = {k: min(v, rows) for k, v in stats.column_groups.items()}
    return dataclasses.replace(stats, row_count=rows, size_bytes=(stats.size_bytes or 0.0) * factor or None,
                               columns=columns, column_groups=groups, sample=None, sample_file=None)


def with_jdbc_source(catalog, stats: dict, case: RuleCase):  # type: ignore[no-untyped-def]
    """The catalog with (some of) its tables in a JDBC source of ``case.jdbc``'s dialect, and the
    statistics under the tables' new names. Nothing connects to it: rule cases only plan."""
    if case.jdbc is None:
        return catalog, stats
    (lake,) = catalog.sources.values()
    remote = dataclasses.replace(lake, name="remote", type="jdbc", connector=by_dialect(case.jdbc), url="jdbc:none",
                                 tables={},
                                 pushdown_disable=case.jdbc_disable, pushdown_enable=case.jdbc_enable)
    keep, moved = {}, {}
    for name, table in lake.tables.items():
        if not case.jdbc_tables or name in case.jdbc_tables:
            moved[name] = dataclasses.replace(table, source="remote", path=None, parquet_copy=table.path)
            if f"{lake.name}.{name}" in stats:
                stats[f"remote.{name}"] = stats[f"{lake.name}.{name}"]
        else:
            keep[name] = table
    sources = {"remote": dataclasses.replace(remote, tables=moved)}
    if keep:
        sources[lake.name] = dataclasses.replace(lake, tables=keep)
    return dataclasses.replace(catalog, sources=sources), stats
