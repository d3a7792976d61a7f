"""Internal errors are bugs: the probe's commands through the CLI (``cbo.app.cli.main``, in this
process) give the right answer or one line ``cbo: error: ...``, never ``cbo: internal error``.

The probe ran hostile and odd input against cbo (bad SQL, SQL other engines answer, very large
queries, broken statistics and catalogs); each command here is one of its findings. An answer is
checked against DuckDB running the reference SQL on the same tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cbo.answers import compare
from cbo.app import cli
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import store_for
from tests import deep_queries as deep

ANSWER, ERROR = "answer", "error"

# (arguments after `cbo query --engine duckdb`, what is expected, the reference SQL for an answer
# or a piece of the error line)
PROBES = [
    (["select n_name from nation order by n_name fetch first 2 rows only"], ANSWER,
     "select n_name from nation order by n_name limit 2"),
    (["select n_name from nation order by n_name offset 20 rows fetch first 2 rows only"], ANSWER,
     "select n_name from nation order by n_name limit 2 offset 20"),
    (["select count(*) from lineitem tablesample bernoulli (1)"], ERROR, "TABLESAMPLE is not supported"),
    (["select count(*) from nation a outer join region b on a.n_regionkey = b.r_regionkey"], ERROR,
     "OUTER JOIN needs LEFT, RIGHT or FULL"),
    (["select count(*) from nation where n_name in ('13', , '29')"], ERROR, "an item of the list is missing"),
    (["select , sum(n_nationkey) from nation"], ERROR, "an item of the list is missing"),
    (["select 'a' 'b' from nation"], ERROR, "two string literals in a row"),
    (["--dialect", "postgres", "select count(*) from nation n, region n"], ERROR, "specified more than once"),
    (["select 7 / 2, 1 / 0"], ERROR, "Division by zero"),
    (["--dialect", "trino", "select 7 / 2"], ANSWER, "select 3"),
    (["--dialect", "postgres", "select 30 / 63 - 82"], ANSWER, "select -82"),
    (["--dialect", "duckdb", "select 7 / 2, 1 / 0"], ANSWER, "select 7 / 2, 1 / 0"),
    (["select count(*) from orders where o_orderkey in (select o_orderkey from lineitem group by l_orderkey "
      "having sum(l_quantity) > 300)"], ANSWER, None),
    (["select count(*) from lineitem l1, orders o where o.o_orderkey = l1.l_orderkey and exists (select distinct * "
      "from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)"], ANSWER, None),
    ([deep.or_chain(200)], ANSWER, None),
    ([deep.and_chain(200)], ANSWER, None),
    ([deep.parentheses(60)], ANSWER, None),
    ([deep.nested_in(30)], ANSWER, None),
    ([deep.nested_scalar(50)], ANSWER, None),
    ([deep.long_sum(300)], ANSWER, None),
    ([deep.parentheses(2000)], ERROR, "parentheses nested more than"),
    (["select foo(n_name) from nation"], ERROR, "unknown function foo"),
    (["select nullif(n_regionkey, 2) from nation"], ANSWER, None),
    (["SELECT 4 FROM (nation AS x CROSS JOIN nation y)"], ANSWER, None),
    (["SELECT n_nationkey AS n_regionkey FROM nation GROUP BY n_nationkey HAVING n_regionkey > 20"], ANSWER, None),
    (["select total(n_nationkey) from nation"], ERROR, "unknown function total"),
    (["select group_concat(n_name) from nation"], ERROR, "function group_concat is not supported"),
    (["SELECT n_name FROM nation WHERE 1 IN (SELECT 1)"], ANSWER, None),
    (["SELECT n_name FROM nation WHERE EXISTS (SELECT 1 WHERE 1 = 1)"], ANSWER, None),
    (["--set", "disabled_rules=ImplementScan", "select count(*) from nation"], ERROR,
     "a required implementation rule"),
]


@pytest.fixture(scope="module")
def duckdb(tpch_parquet_catalog):
    engine = DuckDBEngine(load_catalog(tpch_parquet_catalog))
    yield engine
    engine.close()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(code: int, err: str, expected: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("cbo: error: "), err
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("args, outcome, expected", PROBES, ids=lambda v: str(v)[:60] if isinstance(v, list) else None)
def test_probe_command(tpch_parquet_catalog, duckdb, capsys, args, outcome, expected):
    code, out, err = run(capsys, "query", "--catalog", str(tpch_parquet_catalog), "--engine", "duckdb",
                         "--format", "json", *args)
    assert "internal error" not in err, err
    if outcome == ERROR:
        assert_one_error_line(code, err, expected)
        return
    assert code == 0, err
    rows = [tuple(r) for r in json.loads(out)["rows"]]
    _, reference, _ = duckdb.run(expected or args[-1])
    plain = [tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in r)
             for r in reference]
    readable = [tuple({"Infinity": float("inf"), "-Infinity": float("-inf")}.get(v, v) if isinstance(v, str) else v
                      for v in r) for r in rows]
    verdict = compare(plain, readable, ordered=False)
    assert verdict.matches, verdict.detail


def test_probe_files(tpch_parquet_catalog, capsys, tmp_path: Path):
    """A file with a UTF-8 byte-order mark runs; one that is not UTF-8 is named."""
    bom = tmp_path / "bom.sql"
    bom.write_bytes(b"\xef\xbb\xbfselect count(*) from nation")
    code, out, err = run(capsys, "query", "--catalog", str(tpch_parquet_catalog), "--engine", "duckdb", "-f", str(bom))
    assert code == 0 and "25" in out, err
    latin = tmp_path / "latin.sql"
    latin.write_bytes("select 'caf\u00e9' from nation".encode("latin-1"))
    code, _, err = run(capsys, "query", "--catalog", str(tpch_parquet_catalog), "--engine", "duckdb", "-f", str(latin))
    assert_one_error_line(code, err, f"{latin} is not UTF-8 text: byte 0xe9 at offset 11")


def test_probe_json_has_no_infinity_or_nan(tpch_parquet_catalog, capsys):
    code, out, err = run(capsys, "query", "--catalog", str(tpch_parquet_catalog), "--engine", "duckdb",
                         "--dialect", "duckdb", "--format", "json", "select 1e0 / 0 as a, -1 / 0 as b, 0 / 0 as c")
    assert code == 0, err
    assert json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))["rows"] == \
        [["Infinity", "-Infinity", "NaN"]]


def test_probe_catalogs_and_statistics(tpch_parquet_catalog, capsys, tmp_path: Path):
    """An empty Parquet directory, a statistics file of the wrong shape; a catalog whose URL and
    password file contradict each other."""
    empty = tmp_path / "empty.parquet"
    empty.mkdir()
    catalog = tmp_path / "c.toml"
    catalog.write_text(tpch_parquet_catalog.read_text() + f'\n[sources.lake.tables.e]\npath = "{empty}"\n')
    code, _, err = run(capsys, "query", "--catalog", str(catalog), "--engine", "duckdb", "select count(*) from e")
    assert_one_error_line(code, err, f"{empty} holds no Parquet files")
    code, _, err = run(capsys, "catalog", "check", str(catalog))
    assert_one_error_line(code, err, f"{empty} holds no Parquet files")

    store = store_for(load_catalog(catalog))
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path("lake.nation").write_text("[]")
    code, out, err = run(capsys, "explain", "--catalog", str(catalog), "select count(*) from nation")
    assert code == 0 and "unusable statistics file (not a JSON object but list)" in out, err
    assert "internal error" not in err

    server = tmp_path / "postgres"
    server.mkdir()
    (server / "server.json").write_text("{}")
    (server / "password").write_text("secret\n")
    contradicting = tmp_path / "pg.toml"
    contradicting.write_text(f'[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://127.0.0.1:5432/sales"\n'
                             f'user = "alice"\npassword_file = "{server / "password"}"\n[sources.pg.tables.t]\n')
    code, _, err = run(capsys, "catalog", "check", str(contradicting))
    assert_one_error_line(code, err, "password_file is cbo's local PostgreSQL's")
    assert "database 'sales' and user 'alice'" in err and "secret" not in err
