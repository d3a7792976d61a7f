"""The SQLite connector: a database file as a JDBC source, read through xerial's sqlite-jdbc.

A catalog names the file by URL (``url = "jdbc:sqlite:/path/to/file.db"``) or as a database of
cbo's local SQLite directory (``local_server = true`` and ``schema = "NAME"``: the file
``<cache>/sqlite/NAME.db``; ``cbo sqlite start`` makes the directory, and a database file
there is what ``cbo postgres start`` is to PostgreSQL: the "server" is a file, nothing runs).
Spark reads it with Debian's ``libxerial-sqlite-jdbc-java``; cbo's own client (metadata,
statistics, loading) is Python's ``sqlite3`` on the same SQLite library.

**What SQLite answers as Spark and DuckDB do, and what it does not** (``capabilities``):

* *Type affinity.* A column holds values of any storage class; a ``DECIMAL`` column's values
  are binary floating point (REAL, or INTEGER when integral). A decimal of at most 15 digits is
  stored, compared and read back exactly, but a sum, an average or arithmetic over decimals
  would be rounded: ``Capabilities.float_decimals`` keeps those in Spark, and the loader refuses
  wider decimals. CAST is not pushed (its result follows affinity, not the target type).
* *Integer division* truncates (``7 / 2`` is 3): division and modulus are not pushed.
* *NULL ordering:* SQLite sorts NULLs first in ascending order (as Spark does; DuckDB and
  PostgreSQL last). Every pushed ORDER BY names its NULL order explicitly (``NULLS LAST``), so
  a pushed top-N keeps the rows cbo's order keeps.
* *LIKE* is case-insensitive for ASCII by default: every connection Spark opens sets
  ``case_sensitive_like`` (a URL parameter of the driver), and LIKE has no escape character,
  which is cbo's meaning. ``upper`` and ``lower`` fold ASCII only: not pushed; nor is
  ``substring``, whose positions before the first character count differently.
* *Dates are text* (``'1995-03-15'``, ISO order is date order): comparisons and ``min``/``max``
  are pushed, a date literal is ``DATE('...')``, ``extract(year ...)`` is ``strftime('%Y',
  ...)`` cast to an integer; date arithmetic is not pushed. The driver parses the text with
  ``date_string_format=yyyy-MM-dd``. Timestamps (text whose precision the driver cannot parse
  back) are refused when loading and reading.
* A pushed query's result columns carry no declared type, so Spark is told each one's type
  (``customSchema``), as it is for a table read.

Joins: a pushed inner-join tree is one flat FROM list (``JoinOrder.FLAT``) that SQLite's
planner orders itself (it builds automatic indexes for joins without one). Reads are not split
into key ranges (one file). Statistics are collected by scanning (``collect``): exact counts,
distinct counts, widths and most common values, and a histogram and row sample from a
deterministic sample, as ``stats.spark_collector`` does.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlglot import exp

from cbo.catalog_types import ColumnInfo, ForeignKey, ServerAddress, Source, TableDef, TableKeys
from cbo.connectors.base import Connector, JoinOrder, RemoteCosts
from cbo.connectors.capabilities import (
    COMMON_AGGREGATES,
    FLOAT_DECIMAL_DIGITS,
    Capabilities,
)
from cbo.connectors.loading import arrow_kind, parquet_batches
from cbo.errors import CboError, SourceUnreachable
from cbo.ir import types as T
from cbo.ir.expressions import Call
from cbo.sqlgen import LikeEscape, SqlDialect
from stats.histogram import BUCKETS, MCV_SIZE, build_histogram, choose_mcv, with_distinct
from stats.model import ColumnStats, TableStats, now_utc
from stats.sample import SAMPLE_SIZE, RowSample, choose_rows

DRIVER_JAR = Path("/usr/share/java/sqlite-jdbc.jar")
# Set on every connection Spark opens (xerial reads them from the URL): LIKE compares case
# as Spark does, a DATE column's text parses as a date, and the file is opened read-only (SQLite
# would create a missing file, empty, and answer "no such table").
SPARK_URL_SETTINGS = {"case_sensitive_like": "true", "date_string_format": "yyyy-MM-dd", "open_mode": "1"}
DEFAULT_DATABASE = "cbo"
SAMPLE_ROWS = 100_000      # the sample a histogram is built from (as stats.spark_collector's)
BATCH_ROWS = 50_000
MANIFEST_TABLE = "cbo_manifest"


class SQLiteDialect(SqlDialect):
    """sqlglot's ``sqlite`` rendering, with EXTRACT (which SQLite lacks) as ``strftime``."""

    def function(self, call: Call, args: list[exp.Expr]) -> exp.Expr | None:
        if call.name.startswith("extract_"):
            part = {"extract_year": "%Y", "extract_month": "%m", "extract_day": "%d"}[call.name]
            text = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(part), args[0]])
            return exp.Cast(this=text, to=exp.DataType.build("INTEGER"))
        return None


def _spark_type(type_: T.DataType) -> str:
    """A cbo type in Spark's DDL (a reader's ``customSchema``)."""
    if type_.name == "decimal":
        return f"DECIMAL({type_.precision},{type_.scale})"
    names = {"integer": "INT", "bigint": "BIGINT", "double": "DOUBLE", "varchar": "STRING", "boolean": "BOOLEAN",
             "date": "DATE", "timestamp": "TIMESTAMP"}
    return names[type_.name]


def _custom_schema(columns: Sequence[tuple[str, T.DataType]]) -> str:
    return ", ".join(f"`{name.replace('`', '``')}` {_spark_type(type_)}" for name, type_ in columns)


class SQLiteConnector(Connector):
    dialect = "sqlite"
    title = "SQLite"
    subprotocols = ("sqlite",)
    sql = SQLiteDialect("sqlite", like=LikeEscape.PLAIN)
    capabilities = Capabilities(
        join_kinds=frozenset({"inner", "left", "semi", "anti", "null_aware_anti"}),
        functions=frozenset({"eq", "neq", "lt", "lte", "gt", "gte", "add", "subtract", "multiply", "negate",
                             "is_not_distinct_from", "like", "trim", "length", "abs", "concat",
                             "extract_year", "extract_month", "extract_day"}),
        forms=frozenset({"AND", "OR", "NOT", "IN", "BETWEEN", "IS_NULL", "COALESCE", "CASE"}),
        aggregates=COMMON_AGGREGATES,
        boolean_output=True, float_decimals=True)
    rule_name = "PushSubplanToSQLite"
    # A guess until calibrated: SQLite works on one thread inside the driver's process.
    remote_costs = RemoteCosts(row=1e-7, agg_row=2e-7)
    join_order = JoinOrder.FLAT
    driver_class = "org.sqlite.JDBC"
    driver_jar = DRIVER_JAR
    parallel_reads = False
    server_command = "sqlite"
    schemas = False   # a URL names the file; ``schema`` names a file of the local SQLite directory

    # -- rendering and Spark's reader ------------------------------------------------------------

    def remote_table(self, source: Source, table: TableDef) -> exp.Table:
        # the file is the database: no schema qualifies a table
        return exp.Table(this=exp.to_identifier(table.remote_name or table.name, quoted=True))

    def spark_url(self, url: str) -> str:
        path, _, query = url.partition("?")
        kept = [p for p in query.split("&") if p and p.split("=", 1)[0] not in SPARK_URL_SETTINGS]
        return f"{path}?{'&'.join(kept + [f'{k}={v}' for k, v in SPARK_URL_SETTINGS.items()])}"

    def query_options(self, whole_result: bool, columns: tuple[tuple[str, T.DataType], ...]) -> dict[str, str]:
        return {"customSchema": _custom_schema(columns)}

    def table_options(self, source: Source, table: TableDef) -> dict[str, str]:
        return {"customSchema": _custom_schema([(c.name, c.type) for c in self.columns(source, table)])}

    # -- what the file knows of its tables -------------------------------------------------------

    def columns(self, source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
        with self.connect(source) as conn:
            try:
                found = _columns(conn, table.remote_name or table.name)
            except CboError as exc:
                raise CboError(f"table '{table.qualified_name}': {exc}") from None
        if not found:
            raise CboError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                           f"(looked for {table.remote_name or table.name} in {self.path_of(source)})")
        return found

    def keys(self, source: Source) -> dict[str, TableKeys]:
        with self.connect(source) as conn:
            return {name: _keys(conn, table.remote_name or name) for name, table in source.tables.items()}

    def fingerprint(self, source: Source, table: TableDef) -> str:
        """The file's size and modification time (and its write-ahead log's): a write anywhere
        in the file makes every table's statistics stale, which a scan soon renews."""
        path = self.path_of(source)
        parts = []
        for candidate in (path, path.with_name(path.name + "-wal")):
            if candidate.exists():
                info = candidate.stat()
                parts.append(f"{info.st_size}:{info.st_mtime_ns}")
        if not parts:
            raise SourceUnreachable(f"source '{source.name}': {path} does not exist")
        return "sqlite:" + ":".join(parts)

    def collect(self, source: Source, table: TableDef, *, analyze: bool = False) -> TableStats:
        if analyze:   # SQLite's own planner statistics (sqlite_stat1), for the queries cbo pushes
            with self.connect(source, write=True) as conn:
                conn.execute(f"ANALYZE {_quoted(table.remote_name or table.name)}")
                conn.commit()
        with self.connect(source) as conn:
            stats = collect(conn, table.remote_name or table.name, table.qualified_name)
        return replace(stats, fingerprint=self.fingerprint(source, table))

    # -- the database file -----------------------------------------------------------------------

    def path_of(self, source: Source) -> Path:
        """The database file of ``source``."""
        url = source.jdbc_url()
        return Path(url[len("jdbc:sqlite:"):].split("?", 1)[0])

    @contextmanager
    def connect(self, source: Source, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection to the source's file, read-only unless ``write`` (never creates one)."""
        path = self.path_of(source)
        if not path.is_file():
            raise SourceUnreachable(f"source '{source.name}': the SQLite database {path} does not exist")
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode={'rw' if write else 'ro'}", uri=True)
        try:
            yield conn
        finally:
            conn.close()

    def local_server(self, root: Path | None = None) -> LocalSQLite:
        return LocalSQLite(root or self.default_server_root())

    def running_server(self, source: Source) -> ServerAddress:
        assert source.local_server is not None
        directory = self.local_server(source.local_server)
        if directory.status() is None:
            command = "cbo sqlite start"
            if source.local_server.resolve() != self.default_server_root().resolve():
                command = f"CBO_CACHE_DIR={source.local_server.parent} {command}"
            raise SourceUnreachable(f"source '{source.name}' is cbo's local SQLite ({source.local_server}), which "
                                    f"has not been created: start it with `{command}`")
        return directory.database(source.schema or DEFAULT_DATABASE)

    def probe(self, source: Source) -> str | None:
        try:
            path = self.path_of(source)
        except CboError as exc:
            return str(exc)
        return None if path.is_file() else f"the SQLite database {path} does not exist"


SQLITE = SQLiteConnector()


# -- cbo's local SQLite: a directory of database files ---------------------------------------------


@dataclass(frozen=True)
class SQLiteFile:
    """One database file of the local SQLite directory (a ``ServerAddress``: no login)."""

    path: str

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:sqlite:{self.path}"

    @property
    def url(self) -> str:
        return f"sqlite:{self.path}"

    @property
    def user(self) -> str | None:
        return None

    def password(self) -> str | None:
        return None

    def describe(self) -> list[str]:
        return [f"ready: {self.url}", f"  jdbc url:  {self.jdbc_url}",
                f"  directory: {Path(self.path).parent} (a catalog's schema = \"NAME\" is NAME.db there)"]

    def summary(self) -> str:
        return f"ready: {self.url} (directory {Path(self.path).parent})"


class LocalSQLite:
    """cbo's local SQLite: the directory ``<cache>/sqlite`` whose ``NAME.db`` files are
    databases. ``start`` makes the directory and its default database; nothing runs, so
    ``stop`` has nothing to stop and ``status`` says whether the directory exists."""

    def __init__(self, root: Path):
        self.root = root.resolve()

    def database(self, name: str = DEFAULT_DATABASE) -> SQLiteFile:
        return SQLiteFile(str(self.root / f"{name}.db"))

    def start(self) -> SQLiteFile:
        self.root.mkdir(parents=True, exist_ok=True)
        default = self.database()
        sqlite3.connect(default.path).close()   # creates the empty default database
        return default

    def stop(self) -> bool:
        return False   # a file: nothing runs

    def state(self) -> SQLiteFile | None:
        return self.status()

    def status(self) -> SQLiteFile | None:
        return self.database() if self.root.is_dir() else None

    def destroy(self) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)


# -- metadata ---------------------------------------------------------------------------------------


def _quoted(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect="sqlite")


def cbo_type(declared: str) -> T.DataType | None:
    """cbo's type for a column's declared type (None: one cbo cannot read exactly)."""
    text = declared.strip().upper()
    found = re.fullmatch(r"(DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", text)
    if found:
        precision, scale = int(found.group(2)), int(found.group(3) or 0)
        return T.decimal(precision, scale) if precision <= FLOAT_DECIMAL_DIGITS else None
    base = text.split("(", 1)[0].strip()
    if base == "BIGINT":
        return T.BIGINT
    if "INT" in base:
        return T.INTEGER
    if base in ("REAL", "DOUBLE", "DOUBLE PRECISION", "FLOAT"):
        return T.DOUBLE
    if base in ("TEXT", "VARCHAR", "CHAR", "CHARACTER", "CLOB", "STRING", "NVARCHAR", "VARYING CHARACTER"):
        return T.VARCHAR
    if base == "DATE":
        return T.DATE
    if base == "BOOLEAN":
        return T.BOOLEAN
    return None


def _columns(conn: sqlite3.Connection, table: str) -> tuple[ColumnInfo, ...]:
    found = []
    for _, name, declared, notnull, _, primary in conn.execute(f"PRAGMA table_info({_quoted(table)})"):
        type_ = cbo_type(declared or "")
        if type_ is None:
            raise CboError(f"column {name} has type {declared or '(none)'}, which cbo does not read from SQLite "
                           f"(integers, doubles, decimals of at most {FLOAT_DECIMAL_DIGITS} digits, text, "
                           "dates and booleans)")
        found.append(ColumnInfo(name, type_, not notnull and not primary))
    return tuple(found)


def _keys(conn: sqlite3.Connection, table: str) -> TableKeys:
    info = list(conn.execute(f"PRAGMA table_info({_quoted(table)})"))
    primary = tuple(name for _, name, _, _, _, position in sorted(info, key=lambda r: r[5]) if position)
    uniques = []
    for _, index, unique, origin, _ in conn.execute(f"PRAGMA index_list({_quoted(table)})"):
        if unique and origin == "u":
            uniques.append(tuple(r[2] for r in conn.execute(f"PRAGMA index_info({_quoted(index)})")))
    grouped: dict[int, list[tuple[str, str, str]]] = {}
    for key_id, _, target, column, referenced, *_ in conn.execute(f"PRAGMA foreign_key_list({_quoted(table)})"):
        grouped.setdefault(key_id, []).append((target, column, referenced))
    foreign = tuple(ForeignKey(tuple(c for _, c, _ in parts), parts[0][0], tuple(r for _, _, r in parts))
                    for _, parts in sorted(grouped.items()))
    return TableKeys(primary, foreign, tuple(uniques))


# -- statistics -------------------------------------------------------------------------------------

KIND = {"integer": "number", "bigint": "number", "decimal": "number", "double": "number", "varchar": "string",
        "date": "date", "boolean": "boolean"}


def _value(value: Any, kind: str) -> Any:
    """A stored value as the statistics model holds it (dates as dates, not text)."""
    if value is None:
        return None
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "boolean":
        return bool(value)
    if kind == "number" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def collect(conn: sqlite3.Connection, table: str, name: str, *, sample_rows: int = SAMPLE_ROWS,
            buckets: int = BUCKETS, mcv_size: int = MCV_SIZE, row_sample_size: int = SAMPLE_SIZE) -> TableStats:
    """Statistics of ``table`` by scanning: one aggregate query for the row count and each
    column's non-NULL and distinct counts, bounds and widths; each column's most common values
    counted exactly; a deterministic sample of about ``sample_rows`` rows (every row of a table
    no larger) for the histograms and the row sample."""
    columns = [c for c in _columns(conn, table) if c.type.name in KIND]
    kinds = {c.name: KIND[c.type.name] for c in columns}
    source = _quoted(table)
    parts = ["count(*)"]
    for column in columns:
        q = _quoted(column.name)
        parts += [f"count({q})", f"count(distinct {q})", f"min({q})", f"max({q})"]
        parts += [f"avg(length({q}))", f"max(length({q}))"] if kinds[column.name] == "string" else ["0", "0"]
    row = conn.execute(f"select {', '.join(parts)} from {source}").fetchone()
    rows = float(row[0])
    sample = _sample(conn, source, kinds, int(rows), sample_rows)
    sample_size = len(sample[columns[0].name]) if columns else 0
    fraction = min(1.0, sample_size / rows) if rows else 1.0
    stats: dict[str, ColumnStats] = {}
    for index, column in enumerate(columns):
        kind = kinds[column.name]
        non_null, distinct, low, high, width, max_width = row[1 + 6 * index: 7 + 6 * index]
        q = _quoted(column.name)
        counted = conn.execute(f"select {q}, count(*) from {source} where {q} is not null group by {q} "
                               f"order by count(*) desc, {q} limit {int(mcv_size)}").fetchall()
        mcv = choose_mcv([(_value(v, kind), float(n)) for v, n in counted], float(distinct), float(non_null), rows,
                         mcv_size, sample_rows=int(rows))
        represented = max(non_null - sum(f for _, f in mcv) * rows, 0.0)
        histogram = build_histogram(sample[column.name], {v for v, _ in mcv}, represented, fraction, buckets) \
            if represented > 0 else ()
        if fraction < 1:
            histogram = with_distinct(histogram, max(distinct - len(mcv), 0.0))
        fixed = 8.0 if kind != "string" else float(width or 0)
        stats[column.name] = ColumnStats(
            name=column.name, kind=kind, null_fraction=(1 - non_null / rows) if rows else 0.0,
            distinct=float(distinct), min=_value(low, kind), max=_value(high, kind), avg_width=fixed,
            max_width=int(max_width or 0) if kind == "string" else 8, mcv=tuple(mcv), histogram=histogram,
            distinct_exact=True)
    keep = choose_rows(sample_size, row_sample_size)
    row_sample = RowSample({c.name: [sample[c.name][i] for i in keep] for c in columns}, kinds, rows) \
        if row_sample_size > 0 and columns else None
    return TableStats(table=name, row_count=rows, size_bytes=None, collected_at=now_utc(), fingerprint="",
                      collector="sqlite", columns=stats, sample=row_sample)


def _sample(conn: sqlite3.Connection, source: str, kinds: dict[str, str], rows: int,
            size: int) -> dict[str, list[Any]]:
    """About ``size`` rows, the same ones each time for the same table: every row whose rowid
    falls in a multiplicative hash's lowest ``size / rows`` share (every row when the table is
    no larger)."""
    names = list(kinds)
    query = f"select {', '.join(_quoted(n) for n in names)} from {source}"
    fetched = None
    if rows > size:
        buckets = 1_000_003
        try:
            fetched = conn.execute(f"{query} where ((rowid * 2654435761) % {buckets}) < "
                                   f"{max(1, int(buckets * size / rows))}").fetchall()
        except sqlite3.OperationalError:   # a WITHOUT ROWID table: every row, still the same each time
            fetched = None
    if fetched is None:
        fetched = conn.execute(query).fetchall()
    return {n: [_value(r[i], kinds[n]) for r in fetched] for i, n in enumerate(names)}


# -- loading ----------------------------------------------------------------------------------------

_TYPES = {"int32": "INTEGER", "int64": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN", "date": "DATE",
          "string": "TEXT"}


def sqlite_type(arrow_type: Any) -> str:
    """The declared type of a column holding an Arrow type's values (read back by ``cbo_type``)."""
    kind = arrow_kind(arrow_type)
    if kind == "decimal":
        if arrow_type.precision > FLOAT_DECIMAL_DIGITS:
            raise CboError(f"no SQLite type holds {arrow_type} exactly (decimals are binary floating point there: "
                           f"at most {FLOAT_DECIMAL_DIGITS} digits)")
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if kind not in _TYPES:
        raise CboError(f"no SQLite type for Arrow type {arrow_type} (cbo's SQLite connector holds integers, "
                       "doubles, decimals, text, dates and booleans)")
    return _TYPES[kind]


def _stored(value: Any) -> Any:
    """A Parquet value as SQLite stores it: dates as ISO text, decimals as the nearest double."""
    if isinstance(value, dt.datetime):
        raise CboError("timestamps are not held in SQLite sources")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def loaded_manifest(path: Path) -> dict[str, Any] | None:
    """What the database file says was loaded into it (``load_parquet_database``), or None."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute(f"select manifest from {MANIFEST_TABLE}").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    try:
        return json.loads(row[0]) if row else None
    except ValueError:
        return None


def load_parquet_database(path: Path, tables: Mapping[str, Path], keys: Mapping[str, TableKeys],
                          manifest: dict[str, Any], progress: Callable[[str], None] = lambda _: None) -> bool:
    """Make ``path`` the SQLite database of ``tables`` (name -> Parquet file), with their keys
    (foreign keys among ``tables``), analyzed; False when it already holds ``manifest``.

    All or nothing: the database is built in a file beside ``path`` and moved over it in one
    rename, so an interrupted load leaves the old file (or none), never a half-filled one."""
    if loaded_manifest(path) == manifest:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".loading")
    scratch.unlink(missing_ok=True)
    conn = sqlite3.connect(scratch)
    try:
        for name, parquet in tables.items():
            progress(f"loading {name}")
            _create_and_fill(conn, name, parquet, keys.get(name, TableKeys()), set(tables))
        progress("analyzing")
        conn.execute("ANALYZE")
        conn.execute(f"create table {MANIFEST_TABLE} (manifest TEXT)")
        conn.execute(f"insert into {MANIFEST_TABLE} values (?)", (json.dumps(manifest, sort_keys=True),))
        conn.commit()
    except BaseException:
        conn.close()
        scratch.unlink(missing_ok=True)
        raise
    conn.close()
    os.replace(scratch, path)
    return True


def _create_and_fill(conn: sqlite3.Connection, name: str, path: Path, keys: TableKeys, loaded: set[str]) -> None:
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    columns = [f"{_quoted(f.name)} {sqlite_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in schema]
    if keys.primary_key:
        columns.append(f"PRIMARY KEY ({', '.join(_quoted(c) for c in keys.primary_key)})")
    for fk in keys.foreign_keys:
        if fk.references in loaded:   # a key to a table elsewhere cannot be declared here
            columns.append(f"FOREIGN KEY ({', '.join(_quoted(c) for c in fk.columns)}) REFERENCES "
                           f"{_quoted(fk.references)} ({', '.join(_quoted(c) for c in fk.referenced_columns)})")
    conn.execute(f"CREATE TABLE {_quoted(name)} ({', '.join(columns)})")
    insert = f"INSERT INTO {_quoted(name)} VALUES ({', '.join('?' * len(schema))})"
    for batch in parquet_batches(path, BATCH_ROWS):
        values = [[_stored(v) for v in column.to_pylist()] for column in batch.columns]
        conn.executemany(insert, zip(*values))
