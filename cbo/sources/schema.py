"""Column names, types and nullability of catalog tables, read from where the data lives.

Parquet files answer from their footers (no data read); a JDBC table its connector
(``Connector.columns``: PostgreSQL and MariaDB from ``information_schema.columns``, SQLite from
``PRAGMA table_info``); Spark catalog tables from Spark. Results are cached per provider, so a
session asks each source once.
"""

from __future__ import annotations

from pathlib import Path

from cbo.catalog_types import Catalog, ColumnInfo, TableDef
from cbo.connectors import NotSupported, connector_of
from cbo.errors import CboError
from cbo.ir import types as T

__all__ = ["ColumnInfo", "SchemaProvider"]


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
        try:
            return connector_of(source).columns(source, table)
        except NotSupported as exc:
            if table.parquet_copy is not None:
                return _parquet_columns(table, table.parquet_copy)
            raise CboError(f"table '{table.qualified_name}': {exc}") from None


def _parquet_columns(table: TableDef, path: Path) -> tuple[ColumnInfo, ...]:
    import pyarrow.dataset as ds

    if table.format != "parquet" and table.path is not None:
        raise CboError(f"table '{table.qualified_name}': reading {table.format} schemas is not supported yet")
    if not path.exists():
        raise CboError(f"table '{table.qualified_name}': {path} does not exist")
    import pyarrow as pa

    try:
        dataset = ds.dataset(str(path), format="parquet")
        _ = dataset.schema   # read now: a file that is not Parquet fails here, named
    except (pa.ArrowException, OSError) as exc:
        raise CboError(f"table '{table.qualified_name}': {path} is not readable as Parquet "
                       f"({str(exc).strip().splitlines()[0][:200]})") from None
    if not dataset.files:
        raise CboError(f"table '{table.qualified_name}': {path} holds no Parquet files")
    schema = dataset.schema
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
