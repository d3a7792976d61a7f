"""Statistics for a catalog: which collector serves each table, where they are stored, freshness.

Spark-source tables are collected with the Spark collector; a JDBC table by its connector
(``Connector.collect``: PostgreSQL's and MariaDB's own statistics, ``ANALYZE`` first with
``analyze_source``; SQLite's by a scan). Each catalog has its own store
directory under the cache (``$CBO_STATS_DIR`` moves them all). A table whose stored statistics match its data's current
fingerprint is skipped unless ``force``: a run that was killed half-way is completed by the
next one, and the store stays readable throughout (every file is written atomically).
Column groups: the multi-column keys and foreign keys declared (or read from the database).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cbo.catalog_types import Catalog, TableDef
from cbo.connectors import NotSupported, connector_of
from cbo.errors import CatalogError, CboError
from cbo.paths import cache_dir
from stats.model import COLLECTION_VERSION, TableStats
from stats.store import StatsStore

if TYPE_CHECKING:
    from cbo.engines.spark import Step


@dataclass(frozen=True)
class Analyzed:
    table: str
    status: str       # collected | fresh
    seconds: float
    rows: float
    path: Path


def stats_root() -> Path:
    """Where the stores live: ``$CBO_STATS_DIR``, else ``stats`` under the cache directory. A
    separate root lets statistics be collected again (another method, an experiment) beside the
    data without replacing the ones in use."""
    explicit = os.environ.get("CBO_STATS_DIR")
    return Path(explicit).expanduser().resolve() if explicit else cache_dir() / "stats"


def store_for(catalog: Catalog) -> StatsStore:
    location = str(catalog.path.resolve()) if catalog.path else "in-memory"
    digest = hashlib.sha256(location.encode()).hexdigest()[:10]
    stem = catalog.path.stem if catalog.path else "catalog"
    return StatsStore(stats_root() / f"{stem}-{digest}")


def fingerprint(catalog: Catalog, table: TableDef) -> str:
    """Identifies the data: file sizes and modification times, or the source's (its connector's)."""
    try:
        return _fingerprint(catalog, table)
    except LookupError:   # the collectors' "table not found"
        raise _missing(catalog, table) from None


def _missing(catalog: Catalog, table: TableDef) -> CatalogError:
    source = catalog.source_of(table)
    return CatalogError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                        f"(looked for {source.remote_table(table)}): check the catalog's schema and table names")


def _fingerprint(catalog: Catalog, table: TableDef) -> str:
    source = catalog.source_of(table)
    if source.type == "spark":
        if table.path is None:
            return f"spark-table:{table.spark_table}"
        files = [table.path] if table.path.is_file() else sorted(p for p in table.path.rglob("*") if p.is_file())
        digest = hashlib.sha256()
        for path in files:
            info = path.stat()
            digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode())
        return "files:" + digest.hexdigest()[:20]
    try:
        return connector_of(source).fingerprint(source, table)
    except NotSupported as exc:
        raise CboError(f"table '{table.qualified_name}': {exc}") from None


def column_groups(table: TableDef) -> list[tuple[str, ...]]:
    groups = [table.primary_key] + list(table.unique_keys) + [fk.columns for fk in table.foreign_keys]
    unique: list[tuple[str, ...]] = []
    for group in groups:
        if len(group) > 1 and tuple(group) not in unique:
            unique.append(tuple(group))
    return unique


def outdated_by(stats: TableStats) -> str | None:
    """Why stored statistics, fresh against the data, must still be collected again (an older
    cbo made them), or None. They stay usable meanwhile: estimates read them as they are."""
    if stats.sample_file is None:
        return "stored statistics have no row sample (collected by an older cbo)"
    if stats.collection_version < COLLECTION_VERSION:
        return (f"stored statistics were collected by an older cbo (method {stats.collection_version}, "
                f"now {COLLECTION_VERSION}: MCVs noise-tested)")
    return None


def analyze(catalog: Catalog, tables: list[str] | None = None, *, sample: float = 1.0, analyze_source: bool = False,
            force: bool = False, progress: Callable[[str], None] = lambda _: None,
            step: Step = nullcontext) -> list[Analyzed]:
    """Collect the statistics of ``tables`` (default: all) where missing, stale or ``force``d;
    ``progress`` hears of each table, ``step`` of Spark's start (``cbo.engines.spark``)."""
    from cbo.sources.metadata import with_database_keys

    catalog = with_database_keys(catalog)
    chosen = [catalog.table(name) for name in tables] if tables else list(catalog.tables())
    store = store_for(catalog)
    for leftover in store.clean():
        progress(f"removed {leftover.name}, a temporary file of an analyze that did not finish")
    results = []
    for index, table in enumerate(chosen, start=1):
        started = time.perf_counter()
        current = fingerprint(catalog, table)
        loaded = store.load(table.qualified_name, current)
        if loaded.problem:
            progress(loaded.problem)
        outdated = outdated_by(loaded.stats) if loaded.stats is not None and not force else None
        if outdated is None and loaded.damaged and not force:
            outdated = "stored statistics lack their row sample"
        if outdated is not None:
            progress(f"[{index}/{len(chosen)}] {table.qualified_name}: {outdated}; collecting again")
        elif loaded.stats is not None and not force:
            results.append(Analyzed(table.qualified_name, "fresh", 0.0, loaded.stats.row_count,
                                    store.path(table.qualified_name)))
            progress(f"[{index}/{len(chosen)}] {table.qualified_name}: statistics are fresh")
            continue
        progress(f"[{index}/{len(chosen)}] {table.qualified_name}: collecting ...")
        try:
            stats = _collect(catalog, table, current, sample, analyze_source, step)
        except LookupError:
            raise _missing(catalog, table) from None
        path = store.save(stats)
        seconds = time.perf_counter() - started
        progress(f"[{index}/{len(chosen)}] {table.qualified_name}: {stats.row_count:,.0f} rows, "
                 f"{len(stats.columns)} columns in {seconds:.1f} s")
        results.append(Analyzed(table.qualified_name, "collected", seconds, stats.row_count, path))
    return results


def _collect(catalog: Catalog, table: TableDef, current: str, sample: float, analyze_source: bool,
             step: Step) -> TableStats:
    source = catalog.source_of(table)
    if source.type == "spark":
        from cbo.engines.spark import read_table, spark_session
        from stats.spark_collector import collect

        spark = spark_session(catalog.spark, step=step)
        frame = read_table(spark, catalog, table)
        size = _size(table.path) if table.path is not None else None
        return collect(frame, table.qualified_name, current, size_bytes=size, fraction=sample,
                       column_groups=column_groups(table))
    try:
        return connector_of(source).collect(source, table, analyze=analyze_source)
    except NotSupported as exc:
        raise CboError(f"table '{table.qualified_name}': {exc}") from None


def _size(path: Path) -> float:
    if path.is_file():
        return float(path.stat().st_size)
    return float(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))


def load_all(catalog: Catalog, check_fresh: bool = False) -> tuple[dict[str, TableStats], list[str]]:
    """Stored statistics of the catalog's tables, and the problems met (never raises for bad files)."""
    store = store_for(catalog)
    found, problems = {}, []
    for table in catalog.tables():
        loaded = store.load(table.qualified_name, fingerprint(catalog, table) if check_fresh else None)
        if loaded.problem:
            problems.append(loaded.problem)
        if loaded.stats is not None:
            found[table.qualified_name] = loaded.stats
    return found, problems


def load_checked(catalog: Catalog, *, remote: bool = False) -> tuple[dict[str, TableStats], dict[str, str]]:
    """Stored statistics of the catalog's tables, as ``load_all`` reads them, and by table what
    is wrong with them: a file that is unusable (ignored) or incomplete (its row sample), and
    statistics that are stale (the data changed since they were collected; still used, as
    PostgreSQL uses its own until the next ANALYZE). Staleness is checked for tables in files
    (their sizes and times) and, with ``remote``, for tables in databases (a query each)."""
    store = store_for(catalog)
    found: dict[str, TableStats] = {}
    notes: dict[str, str] = {}
    for table in catalog.tables():
        name = table.qualified_name
        loaded = store.load(name)
        if loaded.problem:
            notes[name] = loaded.problem
        if loaded.stats is None:
            continue
        found[name] = loaded.stats
        source = catalog.source_of(table)
        if source.type != "spark" and not remote:
            continue
        try:
            current = fingerprint(catalog, table)
        except (CboError, OSError):
            continue   # the data cannot be read now: running the query will say so
        if current != loaded.stats.fingerprint:
            notes[name] = (f"statistics of {name} are stale (its data changed since they were collected, "
                           f"{loaded.stats.collected_at}): estimates may be off; run `cbo analyze {name}`")
    return found, notes


__all__ = ["analyze", "load_all", "load_checked", "store_for", "fingerprint"]
