"""Statistics from PostgreSQL's own catalog: ``pg_class`` and ``pg_stats``, no table scan.

Conversions into the shared model:
* ``n_distinct`` > 0 is a count; < 0 is minus a fraction of the rows (``-0.5`` = half the rows
  are distinct), multiplied out here;
* ``most_common_vals`` / ``most_common_freqs`` map to MCVs (frequencies are shares of all
  rows in both);
* ``histogram_bounds`` b0..bn become n buckets, each holding an equal share of the rows that
  are neither NULL nor MCVs; bucket distinct counts split the non-MCV distinct count evenly;
* min and max come from the histogram's ends and the MCVs (PostgreSQL keeps no others);
  ``max_width`` is not kept by PostgreSQL and is reported as the average width.
Values arrive as text (cast through ``text[]``) and are typed by the column's type.
A row sample (``stats.sample``) is read with ``TABLESAMPLE BERNOULLI``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import psycopg
from psycopg import sql

from stats.model import Bucket, ColumnStats, TableStats, now_utc
from stats.sample import SAMPLE_SIZE, SEED, RowSample, choose_rows

KIND_BY_TYPE = {"smallint": "number", "integer": "number", "bigint": "number", "numeric": "number", "real": "number",
                "double precision": "number", "character varying": "string", "character": "string", "text": "string",
                "date": "date", "timestamp without time zone": "timestamp", "timestamp with time zone": "timestamp",
                "boolean": "boolean"}


def _typed(text: str | None, data_type: str) -> Any:
    if text is None:
        return None
    if data_type in ("smallint", "integer", "bigint"):
        return int(text)
    if data_type == "numeric":
        value = decimal.Decimal(text)
        return int(value) if value == value.to_integral_value() else float(value)
    if data_type in ("real", "double precision"):
        return float(text)
    if data_type == "date":
        return dt.date.fromisoformat(text)
    if data_type.startswith("timestamp"):
        return dt.datetime.fromisoformat(text)
    if data_type == "boolean":
        return text in ("t", "true")
    return text


def fingerprint(conn: psycopg.Connection, schema: str, table: str) -> str:
    row = conn.execute(
        "select c.relfilenode, coalesce(s.n_tup_ins, 0) + coalesce(s.n_tup_upd, 0) + coalesce(s.n_tup_del, 0) "
        "from pg_class c join pg_namespace n on n.oid = c.relnamespace "
        "left join pg_stat_user_tables s on s.relid = c.oid where n.nspname = %s and c.relname = %s",
        (schema, table)).fetchone()
    if row is None:
        raise LookupError(f"table {schema}.{table} not found")
    return f"pg:{row[0]}:{row[1]}"


ANALYZE_TARGET = 1000  # statistics target for ANALYZE run by cbo: a 300,000-row sample, 1000 MCVs/buckets


def collect(conn: psycopg.Connection, schema: str, table: str, name: str, *, analyze: bool = False,
            target: int = ANALYZE_TARGET, sample_size: int = SAMPLE_SIZE) -> TableStats:
    """Statistics of ``schema.table`` as PostgreSQL knows them.

    With ``analyze`` (or when the table was never analyzed) ANALYZE runs first, with
    ``default_statistics_target`` raised to ``target`` for this session only: PostgreSQL's
    default (100) samples 30,000 rows, too few for distinct counts within a few percent.
    """
    relation = conn.execute(
        "select c.reltuples, c.relpages, pg_total_relation_size(c.oid) from pg_class c "
        "join pg_namespace n on n.oid = c.relnamespace where n.nspname = %s and c.relname = %s",
        (schema, table)).fetchone()
    if relation is None:
        raise LookupError(f"table {schema}.{table} not found")
    if analyze or relation[0] < 0:
        conn.execute(sql.SQL("set default_statistics_target = {}").format(sql.Literal(int(target))))
        conn.execute(sql.SQL("analyze {}").format(sql.Identifier(schema, table)))
        conn.execute("reset default_statistics_target")
        relation = conn.execute(
            "select c.reltuples, c.relpages, pg_total_relation_size(c.oid) from pg_class c "
            "join pg_namespace n on n.oid = c.relnamespace where n.nspname = %s and c.relname = %s",
            (schema, table)).fetchone()
        assert relation is not None   # the table was found above
    rows = max(float(relation[0]), 0.0)
    types: dict[str, str] = dict(conn.execute(
        "select column_name, data_type from information_schema.columns where table_schema = %s and table_name = %s",
        (schema, table)).fetchall())
    found = conn.execute(
        "select attname, null_frac, avg_width, n_distinct, most_common_vals::text::text[], most_common_freqs, "
        "histogram_bounds::text::text[] from pg_stats where schemaname = %s and tablename = %s",
        (schema, table)).fetchall()
    columns: dict[str, ColumnStats] = {}
    for attname, null_frac, avg_width, n_distinct, mcv_vals, mcv_freqs, bounds in found:
        data_type = types.get(attname, "text")
        kind = KIND_BY_TYPE.get(data_type)
        if kind is None:
            continue
        distinct = float(n_distinct) if n_distinct >= 0 else -float(n_distinct) * rows
        mcv = tuple((_typed(v, data_type), float(f)) for v, f in zip(mcv_vals or [], mcv_freqs or []))
        typed_bounds = [_typed(b, data_type) for b in (bounds or [])]
        rest_rows = max(rows * (1 - float(null_frac) - sum(f for _, f in mcv)), 0.0)
        rest_distinct = max(distinct - len(mcv), 0.0)
        count = len(typed_bounds) - 1
        histogram = tuple(Bucket(typed_bounds[i], typed_bounds[i + 1], rest_rows / count,
                                 max(rest_distinct / count, 1.0)) for i in range(count)) if count > 0 else ()
        candidates = [v for v, _ in mcv] + typed_bounds
        columns[attname] = ColumnStats(
            name=attname, kind=kind, null_fraction=float(null_frac), distinct=distinct,
            min=min(candidates) if candidates else None, max=max(candidates) if candidates else None,
            avg_width=float(avg_width), max_width=int(avg_width), mcv=mcv, histogram=histogram)
    sample = _row_sample(conn, schema, table, {n: c.kind for n, c in columns.items()}, rows, sample_size) \
        if sample_size > 0 and columns else None
    return TableStats(table=name, row_count=rows, size_bytes=float(relation[2]), collected_at=now_utc(),
                      fingerprint=fingerprint(conn, schema, table), collector="postgres", columns=columns,
                      sample=sample)


def _row_sample(conn: psycopg.Connection, schema: str, table: str, kinds: dict[str, str], rows: float,
                size: int) -> RowSample:
    """A uniform sample of about ``size`` rows read with TABLESAMPLE BERNOULLI (repeatable)."""
    names = list(kinds)
    percent = min(100.0, 100.0 * 1.2 * size / max(rows, 1.0))
    query = sql.SQL("select {} from {} tablesample bernoulli ({}) repeatable ({})").format(
        sql.SQL(", ").join(sql.Identifier(n) for n in names), sql.Identifier(schema, table),
        sql.Literal(percent), sql.Literal(SEED))
    fetched = conn.execute(query).fetchall()
    keep = choose_rows(len(fetched), size)
    return RowSample({n: [fetched[i][j] for i in keep] for j, n in enumerate(names)}, kinds, rows)
