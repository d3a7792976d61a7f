"""Column names, types and nullability of catalog tables, read from where the data lives.

Parquet files answer from their footers (no data read); PostgreSQL and MariaDB from
``information_schema.columns``; Spark catalog tables from Spark. Results are cached per
provider, so a session asks each source once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cbo.errors import CboError
from cbo.ir import types as T
from cbo.sources.catalog import Catalog, TableDef


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: T.DataType
    nullable: bool


class SchemaProvider:
    """Columns of catalog tables. With ``local_copies``, a JDBC table that has a Parquet copy is
    read from the copy: an engine that answers from the copies (DuckDB) needs no connection."""

    def __init__(self, catalog: Catalog, local_copies: bool = False):
        self.catalog = catalog
        self.local_copies = local_copies
        self._cache: dict[str, tuple[ColumnInfo, ...]] = {}

    def columns(self, table: TableDef) -> tuple[ColumnInfo, ...]:
        key = table.qualified_name
        if key not in self._cache:
            self._cache[key] = self._read(table)
        return self._cache[key]

    def _read(self, table: TableDef) -> tuple[ColumnInfo, ...]:
        source = self.catalog.source_of(table)
        if source.type == "spark":
            if table.path is not None:
                return _parquet_columns(table, table.path)
            return _spark_table_columns(table)
        if self.local_copies and table.parquet_copy is not None:
            return _parquet_columns(table, table.parquet_copy)
        if source.dialect == "postgres":
            return _postgres_columns(self.catalog, table)
        if source.dialect == "mysql":
            return _mariadb_columns(self.catalog, table)
        if table.parquet_copy is not None:
            return _parquet_columns(table, table.parquet_copy)
        raise CboError(f"table '{table.qualified_name}': cannot read the columns of a {source.dialect} table yet "
                       "(give it a parquet_copy)")


def _parquet_columns(table: TableDef, path: Path) -> tuple[ColumnInfo, ...]:
    import pyarrow.dataset as ds

    if table.format != "parquet" and table.path is not None:
        raise CboError(f"table '{table.qualified_name}': reading {table.format} schemas is not supported yet")
    if not path.exists():
        raise CboError(f"table '{table.qualified_name}': {path} does not exist")
    schema = ds.dataset(str(path), format="parquet").schema
    try:
        return tuple(ColumnInfo(f.name, T.from_arrow(f.type), f.nullable) for f in schema)
    except ValueError as exc:
        raise CboError(f"table '{table.qualified_name}': {exc}") from None


def _spark_table_columns(table: TableDef) -> tuple[ColumnInfo, ...]:
    from cbo.engines.spark import spark_session

    assert table.spark_table is not None
    spark = spark_session()
    fields = spark.table(table.spark_table).schema.fields
    return tuple(ColumnInfo(f.name, _from_spark(f.dataType.simpleString()), f.nullable) for f in fields)


def _from_spark(name: str) -> T.DataType:
    import re

    if name.startswith("decimal"):
        p, s = map(int, re.findall(r"\d+", name))
        return T.decimal(p, s)
    mapping = {"int": T.INTEGER, "smallint": T.INTEGER, "tinyint": T.INTEGER, "bigint": T.BIGINT, "double": T.DOUBLE,
               "float": T.DOUBLE, "string": T.VARCHAR, "boolean": T.BOOLEAN, "date": T.DATE, "timestamp": T.TIMESTAMP,
               "timestamp_ntz": T.TIMESTAMP}
    if name.startswith("varchar") or name.startswith("char"):
        return T.VARCHAR
    if name not in mapping:
        raise CboError(f"unsupported Spark column type {name}")
    return mapping[name]


POSTGRES_TYPES = {"bigint": T.BIGINT, "integer": T.INTEGER, "smallint": T.INTEGER, "double precision": T.DOUBLE,
                  "real": T.DOUBLE, "character varying": T.VARCHAR, "character": T.VARCHAR, "text": T.VARCHAR,
                  "boolean": T.BOOLEAN, "date": T.DATE, "timestamp without time zone": T.TIMESTAMP,
                  "timestamp with time zone": T.TIMESTAMP}


def _postgres_columns(catalog: Catalog, table: TableDef) -> tuple[ColumnInfo, ...]:
    from cbo.engines import postgres

    source = catalog.source_of(table)
    with postgres.connect(postgres.address_of(source), what=f"source '{source.name}'") as conn:
        rows = conn.execute(
            "select column_name, data_type, numeric_precision, numeric_scale, is_nullable "
            "from information_schema.columns where table_schema = %s and table_name = %s order by ordinal_position",
            (source.schema or "public", table.remote_name or table.name)).fetchall()
    if not rows:
        raise CboError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                       f"(looked for {source.remote_table(table)})")
    columns = []
    for name, data_type, precision, scale, nullable in rows:
        if data_type == "numeric":
            type_ = T.decimal(precision or 38, scale or 0)
        elif data_type in POSTGRES_TYPES:
            type_ = POSTGRES_TYPES[data_type]
        else:
            raise CboError(f"table '{table.qualified_name}': column {name} has unsupported type {data_type}")
        columns.append(ColumnInfo(name, type_, nullable == "YES"))
    return tuple(columns)


# MariaDB's information_schema.columns.data_type; tinyint(1) is MariaDB's boolean.
MARIADB_TYPES = {"bigint": T.BIGINT, "int": T.INTEGER, "mediumint": T.INTEGER, "smallint": T.INTEGER,
                 "tinyint": T.INTEGER, "double": T.DOUBLE, "float": T.DOUBLE, "varchar": T.VARCHAR,
                 "char": T.VARCHAR, "text": T.VARCHAR, "mediumtext": T.VARCHAR, "longtext": T.VARCHAR,
                 "tinytext": T.VARCHAR, "date": T.DATE, "datetime": T.TIMESTAMP, "timestamp": T.TIMESTAMP}


def _mariadb_columns(catalog: Catalog, table: TableDef) -> tuple[ColumnInfo, ...]:
    from cbo.engines import mariadb

    source = catalog.source_of(table)
    address = mariadb.address_of(source)
    database = source.schema or address.database
    with mariadb.connect(address, what=f"source '{source.name}'") as conn, conn.cursor() as cur:
        cur.execute(
            "select column_name, data_type, column_type, numeric_precision, numeric_scale, is_nullable "
            "from information_schema.columns where table_schema = %s and table_name = %s order by ordinal_position",
            (database, table.remote_name or table.name))
        rows = cur.fetchall()
    if not rows:
        raise CboError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                       f"(looked for {source.remote_table(table)})")
    columns = []
    for name, data_type, column_type, precision, scale, nullable in rows:
        if data_type == "decimal":
            type_ = T.decimal(precision or 38, scale or 0)
        elif column_type == "tinyint(1)":
            type_ = T.BOOLEAN
        elif data_type in MARIADB_TYPES:
            type_ = MARIADB_TYPES[data_type]
        else:
            raise CboError(f"table '{table.qualified_name}': column {name} has unsupported type {column_type}")
        columns.append(ColumnInfo(name, type_, nullable == "YES"))
    return tuple(columns)
