"""Loading Parquet files into a MariaDB database, all or nothing.

The MariaDB counterpart of :mod:`cbo.connectors.postgres.loader`. Tables are created in a scratch
database, filled, given their foreign keys, and only then moved into the target database with
one ``RENAME TABLE`` (atomic in MariaDB): an interrupted load leaves the old database (or none)
and never a half-filled one. A JSON manifest kept as the database's comment says what was loaded, so a
second load of the same data is skipped.

Rows travel as parameterized multi-row INSERTs (PyMySQL escapes every value): slower than
``LOAD DATA``, whose CSV cannot tell an empty string from NULL without an escape scheme of its
own, but exact for any string. Databases use ``utf8mb4_nopad_bin``, so text compares as in
Spark (case-sensitive, trailing spaces significant). Statistics are left to the collector
(``ANALYZE TABLE ... PERSISTENT FOR ALL``, :mod:`cbo.connectors.mariadb.statistics`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from cbo.catalog_types import TableKeys
from cbo.connectors.loading import arrow_kind, parquet_batches, quiet_duckdb
from cbo.connectors.mariadb.client import Connection, identifier, sql_string
from cbo.errors import CboError

BATCH_ROWS = 5_000
COLLATION = "utf8mb4_nopad_bin"
LONGEST_VARCHAR = 16_000  # characters; longer strings go into TEXT (VARCHARs share a 64 KB row)


_MARIADB_TYPES = {"int32": "INT", "int64": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN", "date": "DATE",
                  "timestamp": "DATETIME(6)", "timestamptz": "DATETIME(6)"}


def mariadb_type(arrow_type: pa.DataType, longest: int) -> str:
    """The MariaDB column type that holds an Arrow type's values exactly (``longest``: the
    longest string in the column, which sizes a VARCHAR)."""
    kind = arrow_kind(arrow_type)
    if kind == "decimal":
        if arrow_type.precision > 65:
            raise CboError(f"no MariaDB type for {arrow_type} (DECIMAL holds at most 65 digits)")
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if kind == "string":
        return f"VARCHAR({max(longest, 1)})" if longest <= LONGEST_VARCHAR else "LONGTEXT"
    if kind is None:
        raise CboError(f"no MariaDB type for Arrow type {arrow_type}")
    return _MARIADB_TYPES[kind]


def loaded_manifest(conn: Connection, database: str) -> dict[str, Any] | None:
    with conn.cursor() as cur:
        cur.execute("select schema_comment from information_schema.schemata where schema_name = %s", (database,))
        row = cur.fetchone()
    if not row or not row[0]:
        return None
    try:
        return json.loads(row[0])
    except ValueError:
        return None


def load_parquet_database(conn: Connection, database: str, tables: Mapping[str, Path],
                          keys: Mapping[str, TableKeys], manifest: dict,
                          progress: Callable[[str], None] = lambda _: None) -> bool:
    """Load ``tables`` (name -> Parquet file) into ``database``; return False if already loaded.

    Primary keys are declared with the tables; foreign keys among ``tables`` are added after the
    load (to tables outside it they cannot be: they live in another source).
    """
    if loaded_manifest(conn, database) == manifest:
        return False
    scratch = f"{database}__loading"
    with conn.cursor() as cur:
        cur.execute(f"drop database if exists {identifier(scratch)}")
        cur.execute(f"create database {identifier(scratch)} character set utf8mb4 collate {COLLATION}")
        cur.execute("set foreign_key_checks = 0")
        for name, path in tables.items():
            progress(f"loading {name}")
            _create_and_fill(cur, scratch, name, path, keys.get(name, TableKeys()))
        for name in tables:
            for number, fk in enumerate(keys.get(name, TableKeys()).foreign_keys, start=1):
                if fk.references not in tables:
                    continue
                cur.execute(f"alter table {identifier(scratch, name)} add constraint "
                            f"{identifier(f'{name}_fk{number}')} foreign key ({_columns(fk.columns)}) "
                            f"references {identifier(scratch, fk.references)} ({_columns(fk.referenced_columns)})")
        cur.execute("set foreign_key_checks = 1")
        cur.execute(f"drop database if exists {identifier(database)}")
        cur.execute(f"create database {identifier(database)} character set utf8mb4 collate {COLLATION}")
        renames = ", ".join(f"{identifier(scratch, n)} to {identifier(database, n)}" for n in tables)
        cur.execute(f"rename table {renames}")
        # The manifest goes last: its presence means the load completed.
        cur.execute(f"alter database {identifier(database)} comment = "
                    f"{sql_string(json.dumps(manifest, sort_keys=True))}")
        cur.execute(f"drop database {identifier(scratch)}")
    return True


def _columns(names: Sequence[str]) -> str:
    return ", ".join(identifier(n) for n in names)


def _create_and_fill(cur: Any, database: str, name: str, path: Path, keys: TableKeys) -> None:
    schema = pq.read_schema(path)
    source = exp.Anonymous(this="read_parquet", expressions=[exp.Literal.string(str(path))])
    strings = [f.name for f in schema if mariadb_type(f.type, 1).startswith("VARCHAR")]
    longest: dict[str, int] = {}
    if strings:
        lengths = exp.select(*[exp.func("coalesce", exp.func("max", exp.func("length", exp.column(n, quoted=True))),
                                        exp.Literal.number(1)) for n in strings]).from_(source)
        row = quiet_duckdb().sql(lengths.sql(dialect="duckdb")).fetchall()[0]
        longest = dict(zip(strings, (int(v) for v in row)))
    columns = [f"{identifier(f.name)} {mariadb_type(f.type, longest.get(f.name, 1))}"
               f"{'' if f.nullable else ' NOT NULL'}" for f in schema]
    if keys.primary_key:
        columns.append(f"primary key ({_columns(keys.primary_key)})")
    cur.execute(f"create table {identifier(database, name)} ({', '.join(columns)}) engine = InnoDB")
    placeholders = ", ".join(["%s"] * len(schema))
    insert = f"insert into {identifier(database, name)} values ({placeholders})"
    for batch in parquet_batches(path, BATCH_ROWS):
        rows = list(zip(*(column.to_pylist() for column in batch.columns)))
        if rows:
            cur.executemany(insert, rows)
