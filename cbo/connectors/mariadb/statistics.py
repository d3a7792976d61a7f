"""Statistics from MariaDB's engine-independent tables: ``mysql.table_stats`` and ``mysql.column_stats``.

The MariaDB counterpart of ``cbo.connectors.postgres.statistics``, with the same interface
(``collect``, ``fingerprint``). ``ANALYZE TABLE t PERSISTENT FOR ALL`` fills both tables; cbo runs it (when
asked to, or when the table has none) with JSON histograms (``histogram_type = JSON_HB``, up to
254 buckets) over all rows (``analyze_sample_percentage = 100``).

Conversions into the shared model:
* the row count is ``table_stats.cardinality`` (exact after ANALYZE; InnoDB's
  ``information_schema.tables.table_rows`` is an estimate that moves between calls);
* ``nulls_ratio`` is the NULL fraction; ``avg_frequency`` is rows per distinct non-NULL value,
  so distinct = rows × (1 − nulls_ratio) / avg_frequency; ``avg_length`` is the average width;
* ``min_value`` and ``max_value`` are kept as text and typed by the column's type;
* a JSON_HB bucket holds ``size`` (a share of the non-NULL rows) of the values from its
  ``start`` up to the next bucket's start (the last bucket names its ``end``). A bucket with one
  distinct value is a popular value: it becomes an MCV (frequency as a share of all rows, as
  PostgreSQL's). The other buckets form the histogram; MariaDB builds none for a column that
  leads an index (its keys), which then has only min, max and distinct.
A row sample (``stats.sample``) is read with a seeded ``RAND() < p`` filter.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import TYPE_CHECKING, Any

from cbo.connectors.mariadb.client import Connection, identifier
from stats.model import Bucket, ColumnStats, TableStats, now_utc
from stats.sample import SAMPLE_SIZE, SEED, RowSample, choose_rows

if TYPE_CHECKING:
    pass

HISTOGRAM_BUCKETS = 254  # JSON_HB takes at most 255

KIND_BY_TYPE = {"tinyint": "number", "smallint": "number", "mediumint": "number", "int": "number",
                "bigint": "number", "decimal": "number", "float": "number", "double": "number",
                "varchar": "string", "char": "string", "text": "string", "tinytext": "string",
                "mediumtext": "string", "longtext": "string", "date": "date", "datetime": "timestamp",
                "timestamp": "timestamp"}


def _typed(text: Any, data_type: str, column_type: str) -> Any:
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if column_type == "tinyint(1)":
        return text not in ("0", "")
    if data_type in ("tinyint", "smallint", "mediumint", "int", "bigint"):
        return int(text)
    if data_type == "decimal":
        value = decimal.Decimal(text)
        return int(value) if value == value.to_integral_value() else float(value)
    if data_type in ("float", "double"):
        return float(text)
    if data_type == "date":
        return dt.date.fromisoformat(text[:10])
    if data_type in ("datetime", "timestamp"):
        return dt.datetime.fromisoformat(text)
    return text


def _kind(data_type: str, column_type: str) -> str | None:
    return "boolean" if column_type == "tinyint(1)" else KIND_BY_TYPE.get(data_type)


def fingerprint(conn: Connection, database: str, table: str) -> str:
    """Changes when the table is re-created (a reload) or its storage grows or shrinks.

    InnoDB keeps no change counter that survives a restart (``update_time`` is NULL after one),
    so the creation time and the data and index sizes stand for one.
    """
    with conn.cursor() as cur:
        cur.execute("select create_time, data_length, index_length from information_schema.tables "
                    "where table_schema = %s and table_name = %s", (database, table))
        row = cur.fetchone()
    if row is None:
        raise LookupError(f"table {database}.{table} not found")
    created = row[0].isoformat() if row[0] is not None else ""
    return f"mariadb:{created}:{row[1]}:{row[2]}"


def collect(conn: Connection, database: str, table: str, name: str, *, analyze: bool = False,
            buckets: int = HISTOGRAM_BUCKETS, sample_size: int = SAMPLE_SIZE) -> TableStats:
    """Statistics of ``database.table`` as MariaDB knows them (ANALYZE first when asked or missing)."""
    with conn.cursor() as cur:
        cur.execute("select data_length + index_length from information_schema.tables "
                    "where table_schema = %s and table_name = %s", (database, table))
        relation = cur.fetchone()
        if relation is None:
            raise LookupError(f"table {database}.{table} not found")
        cur.execute("select cardinality from mysql.table_stats where db_name = %s and table_name = %s",
                    (database, table))
        counted = cur.fetchone()
        if analyze or counted is None or counted[0] is None:
            # Session settings only: the server's defaults stay as they are for other clients.
            cur.execute("set session histogram_type = 'JSON_HB', histogram_size = %s, "
                        "analyze_sample_percentage = 100", (int(buckets),))
            cur.execute(f"analyze table {identifier(database, table)} persistent for all")
            cur.fetchall()
            cur.execute("select cardinality from mysql.table_stats where db_name = %s and table_name = %s",
                        (database, table))
            counted = cur.fetchone()
        rows = float(counted[0]) if counted and counted[0] is not None else 0.0
        cur.execute("select column_name, data_type, column_type from information_schema.columns "
                    "where table_schema = %s and table_name = %s", (database, table))
        types = {n: (d, c) for n, d, c in cur.fetchall()}
        cur.execute("select column_name, min_value, max_value, nulls_ratio, avg_length, avg_frequency, hist_type, "
                    "histogram from mysql.column_stats where db_name = %s and table_name = %s", (database, table))
        found = cur.fetchall()
    columns: dict[str, ColumnStats] = {}
    for column, low, high, nulls_ratio, avg_length, avg_frequency, hist_type, histogram in found:
        data_type, column_type = types.get(column, ("text", "text"))
        kind = _kind(data_type, column_type)
        if kind is None:
            continue
        null_fraction = float(nulls_ratio or 0)
        non_null = rows * (1 - null_fraction)
        distinct = non_null / float(avg_frequency) if avg_frequency else 0.0
        mcv, buckets_found = _histogram(histogram if hist_type == "JSON_HB" else None, non_null, rows,
                                        data_type, column_type)
        columns[column] = ColumnStats(
            name=column, kind=kind, null_fraction=null_fraction, distinct=distinct,
            min=_typed(low, data_type, column_type), max=_typed(high, data_type, column_type),
            avg_width=float(avg_length or 0), max_width=int(avg_length or 0), mcv=mcv, histogram=buckets_found)
    sample = _row_sample(conn, database, table, {n: c.kind for n, c in columns.items()}, rows, sample_size) \
        if sample_size > 0 and columns else None
    return TableStats(table=name, row_count=rows, size_bytes=float(relation[0] or 0), collected_at=now_utc(),
                      fingerprint=fingerprint(conn, database, table), collector="mariadb", columns=columns,
                      sample=sample)


def _histogram(text: Any, non_null: float, rows: float, data_type: str, column_type: str) -> tuple[
        tuple[tuple[Any, float], ...], tuple[Bucket, ...]]:
    """MCVs and buckets from a JSON_HB histogram (see the module's docstring)."""
    if not text:
        return (), ()
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    entries = json.loads(text).get("histogram_hb", [])
    mcv: list[tuple[Any, float]] = []
    buckets: list[Bucket] = []
    for index, entry in enumerate(entries):
        lower = _typed(entry["start"], data_type, column_type)
        if "end" in entry:
            upper = _typed(entry["end"], data_type, column_type)
        elif index + 1 < len(entries):
            upper = _typed(entries[index + 1]["start"], data_type, column_type)
        else:
            upper = lower
        share = float(entry["size"])
        ndv = float(entry.get("ndv", 1))
        if ndv <= 1:
            mcv.append((lower, share * non_null / rows if rows else 0.0))
        else:
            buckets.append(Bucket(lower, upper, share * non_null, ndv))
    return tuple(mcv), tuple(buckets)


def _row_sample(conn: Connection, database: str, table: str, kinds: dict[str, str], rows: float,
                size: int) -> RowSample:
    """A uniform sample of about ``size`` rows: a seeded ``RAND() < p`` filter (repeatable for
    the same table contents), then exactly ``size`` of those kept."""
    names = list(kinds)
    fraction = min(1.0, 1.2 * size / max(rows, 1.0))
    with conn.cursor() as cur:
        cur.execute(f"select {', '.join(identifier(n) for n in names)} from {identifier(database, table)} "
                    f"where rand({int(SEED)}) < %s", (fraction,))
        fetched = cur.fetchall()
    keep = choose_rows(len(fetched), size)
    return RowSample({n: [_sample_value(fetched[i][j], kinds[n]) for i in keep] for j, n in enumerate(names)},
                     kinds, rows)


def _sample_value(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "number" and isinstance(value, decimal.Decimal):
        return float(value)
    if kind == "boolean":
        return bool(value)
    return value
