"""The table of what cbo does not support (docs/guide/sql.md) is what cbo does.

Every row's example is planned in its dialect against TPC-H's tables: it must be refused with
exactly the error the table shows, in one line, and DuckDB must accept or reject the example as
the table's DuckDB column says (the Spark column is not rechecked here: it needs a JVM).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "sql.md"
_CELL = re.compile(r"`([^`]*)`")


def refusal_rows() -> list[tuple[str, str, str, str, str]]:
    """(construct, sql, dialect, error, duckdb) of each row of the page's refusal table."""
    text = PAGE.read_text()
    section = text[text.index("## What cbo does not support"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 5 or cells[0] in ("construct", "---"):
            continue
        construct, example, error, duckdb, _ = cells
        sql = _CELL.findall(example)[0]
        dialect = re.search(r"--dialect (\w+)", example)
        rows.append((construct, sql, dialect.group(1) if dialect else "trino", _CELL.findall(error)[0], duckdb))
    return rows


ROWS = refusal_rows()


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.fixture(scope="module")
def duckdb(catalog):
    engine = DuckDBEngine(catalog)
    yield engine
    engine.close()


def test_the_table_lists_the_refusals_the_brief_names():
    constructs = " ".join(construct for construct, *_ in ROWS)
    assert len(ROWS) >= 40
    for words in ("two levels out", "LEFT/RIGHT/FULL JOIN in a subquery", "fewer column aliases",
                  "row constructor IN a subquery", "LATERAL"):
        assert words in constructs


@pytest.mark.parametrize("construct, sql, dialect, error, in_duckdb", ROWS, ids=[r[0][:50] for r in ROWS])
def test_each_refusal_is_the_documented_one_line_error(catalog, duckdb, construct, sql, dialect, error, in_duckdb):
    with pytest.raises(CboError) as caught:
        Planner(catalog, dialect=dialect).plan(sql)
    message = str(caught.value)
    assert "\n" not in message
    assert message == error, f"{construct}: cbo says {message!r}, the page {error!r}"
    accepted = True
    try:
        duckdb.run(sql)
    except Exception:   # any failure of DuckDB's: parser, binder or catalog
        accepted = False
    assert in_duckdb == ("yes" if accepted else "no"), f"{construct}: DuckDB {'accepts' if accepted else 'rejects'} it"
