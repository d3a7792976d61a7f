"""Small random tables of two nullable integer columns, as Parquet for cbo's catalog and as
DuckDB tables for the reference answer: the ground both property tests stand on."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cbo.answers import compare
from cbo.catalog import parse_catalog
from cbo.ir.operators import Plan
from cbo.sqlgen import to_sql


class RandomTables:
    def __init__(self, directory: Path, tables: dict[str, tuple[str, str]]):
        self.directory = directory
        self.tables = tables
        lines = []
        for name in tables:
            lines += [f"[sources.lake.tables.{name}]", f'path = "{name}.parquet"']
        text = '[sources.lake]\ntype = "spark"\n' + "\n".join(lines) + "\n"
        self.catalog = parse_catalog(text, directory / "catalog.toml")

    def load(self, data: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:
        """Write the drawn rows as each table's Parquet file; a DuckDB connection holding them."""
        connection = duckdb.connect()
        for name, (first, second) in self.tables.items():
            columns = list(zip(*data[name])) if data[name] else [(), ()]
            table = pa.table({first: pa.array(columns[0], pa.int32()), second: pa.array(columns[1], pa.int32())})
            pq.write_table(table, self.directory / f"{name}.parquet")
            connection.execute(f"create table {name} as select * from read_parquet('{self.directory / name}.parquet')")
        return connection


def assert_plans_answer(connection: duckdb.DuckDBPyConnection, sql: str, data: dict[str, list[tuple]],
                        plans: list[Plan], names: tuple[str, ...]) -> None:
    """Each plan, rendered to SQL and run on DuckDB, returns the multiset of rows ``sql`` does."""
    expected = connection.execute(sql).fetchall()
    for plan in plans:
        actual = connection.execute(to_sql(plan, names, "duckdb")).fetchall()
        verdict = compare(expected, actual, ordered=False)
        assert verdict.matches, f"{verdict.detail}\nquery: {sql}\ntables: {data}\nplan:\n{plan}"
