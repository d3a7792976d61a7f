"""The loaders' column types per Arrow type: one classification (``loaders.arrow_kind``), named
in each database's words."""

from __future__ import annotations

import pyarrow as pa
import pytest

from cbo.errors import CboError
from cbo.connectors.postgres.loader import postgres_type
from cbo.connectors.mariadb.loader import LONGEST_VARCHAR, mariadb_type

CASES = [
    (pa.int16(), "integer", "INT"), (pa.int32(), "integer", "INT"), (pa.int64(), "bigint", "BIGINT"),
    (pa.uint64(), "bigint", "BIGINT"), (pa.decimal128(15, 2), "numeric(15,2)", "DECIMAL(15,2)"),
    (pa.float64(), "double precision", "DOUBLE"), (pa.bool_(), "boolean", "BOOLEAN"), (pa.date32(), "date", "DATE"),
    (pa.timestamp("us"), "timestamp", "DATETIME(6)"), (pa.timestamp("us", tz="UTC"), "timestamptz", "DATETIME(6)"),
    (pa.string(), "varchar", "VARCHAR(25)"), (pa.large_string(), "varchar", "VARCHAR(25)"),
]


@pytest.mark.parametrize("arrow_type, postgres, mariadb", CASES)
def test_each_loader_names_the_type(arrow_type: pa.DataType, postgres: str, mariadb: str) -> None:
    assert postgres_type(arrow_type) == postgres
    assert mariadb_type(arrow_type, 25) == mariadb


def test_long_strings_and_unknown_types() -> None:
    assert mariadb_type(pa.string(), LONGEST_VARCHAR + 1) == "LONGTEXT"
    with pytest.raises(CboError, match="DECIMAL holds at most 65"):
        mariadb_type(pa.decimal256(70, 2), 0)
    with pytest.raises(CboError, match="no PostgreSQL type"):
        postgres_type(pa.binary())
    with pytest.raises(CboError, match="no MariaDB type"):
        mariadb_type(pa.binary(), 0)
