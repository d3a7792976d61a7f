"""Loading Parquet files into a PostgreSQL schema, all or nothing.

Tables are created in a scratch schema, filled with COPY, given their keys, analyzed, and only
then swapped in for the target schema in one transaction: an interrupted load leaves the old
schema (or none) and never a half-filled one. A JSON manifest kept as the schema's comment says
what was loaded, so a second load of the same data is skipped.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from psycopg import sql

from cbo.catalog_types import TableKeys
from cbo.connectors.loading import arrow_kind, parquet_batches
from cbo.errors import CboError

BATCH_ROWS = 200_000


_POSTGRES_TYPES = {"int32": "integer", "int64": "bigint", "double": "double precision", "boolean": "boolean",
                   "date": "date", "timestamp": "timestamp", "timestamptz": "timestamptz", "string": "varchar"}


def postgres_type(arrow_type: pa.DataType) -> str:
    """The PostgreSQL column type that holds an Arrow type's values exactly."""
    kind = arrow_kind(arrow_type)
    if kind == "decimal":
        return f"numeric({arrow_type.precision},{arrow_type.scale})"
    if kind is None:
        raise CboError(f"no PostgreSQL type for Arrow type {arrow_type}")
    return _POSTGRES_TYPES[kind]


def loaded_manifest(conn: psycopg.Connection, schema: str) -> dict | None:
    row = conn.execute(
        "select obj_description(oid, 'pg_namespace') from pg_namespace where nspname = %s", (schema,)).fetchone()
    if not row or not row[0]:
        return None
    try:
        return json.loads(row[0])
    except ValueError:
        return None


def load_parquet_schema(conn: psycopg.Connection, schema: str, tables: Mapping[str, Path],
                        keys: Mapping[str, TableKeys], manifest: dict,
                        progress: Callable[[str], None] = lambda _: None) -> bool:
    """Load ``tables`` (name -> Parquet file) into ``schema``; return False if already loaded.

    ``manifest`` describes the data (e.g. generator and scale factor); the load is skipped when
    the schema already carries an equal manifest.
    """
    if loaded_manifest(conn, schema) == manifest:
        return False
    scratch = f"{schema}__loading"
    # In autocommit mode transaction() is a real BEGIN ... COMMIT of its own.
    conn.autocommit = True
    with conn.transaction():
        conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(scratch)))
        conn.execute(sql.SQL("create schema {}").format(sql.Identifier(scratch)))
        for name, path in tables.items():
            progress(f"loading {name}")
            _create_and_copy(conn, scratch, name, path)
        for name, table_keys in keys.items():
            if table_keys.primary_key:
                conn.execute(sql.SQL("alter table {} add primary key ({})").format(
                    sql.Identifier(scratch, name), _columns(table_keys.primary_key)))
        for name, table_keys in keys.items():
            for fk in table_keys.foreign_keys:
                conn.execute(sql.SQL("alter table {} add foreign key ({}) references {} ({})").format(
                    sql.Identifier(scratch, name), _columns(fk.columns),
                    sql.Identifier(scratch, fk.references), _columns(fk.referenced_columns)))
        progress("analyzing")
        for name in tables:
            conn.execute(sql.SQL("analyze {}").format(sql.Identifier(scratch, name)))
        conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("alter schema {} rename to {}").format(sql.Identifier(scratch), sql.Identifier(schema)))
        conn.execute(sql.SQL("comment on schema {} is {}").format(
            sql.Identifier(schema), sql.Literal(json.dumps(manifest, sort_keys=True))))
    return True


def _columns(names: Sequence[str]) -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(n) for n in names)


def _create_and_copy(conn: psycopg.Connection, schema: str, name: str, path: Path) -> None:
    arrow_schema = pq.read_schema(path)
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(field.name), sql.SQL(postgres_type(field.type)))
        for field in arrow_schema)
    target = sql.Identifier(schema, name)
    conn.execute(sql.SQL("create table {} ({})").format(target, columns))
    # pyarrow writes DuckDB's Arrow batches as CSV in which every string is quoted, so an empty
    # string stays distinct from NULL.
    options = pacsv.WriteOptions(include_header=False)
    copy_sql = sql.SQL("copy {} from stdin (format csv)").format(target)
    with conn.cursor() as cur, cur.copy(copy_sql) as copy:
        for batch in parquet_batches(path, BATCH_ROWS):
            buffer = io.BytesIO()
            pacsv.write_csv(batch, buffer, options)
            copy.write(buffer.getvalue())
