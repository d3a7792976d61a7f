"""Seed 001's hint ``/* #distinct@ tab = col1,col2 # */``: read as the seed writes it, anywhere in
the query, turned into a unique key of the table's scans; anything else that mentions
``#distinct`` is a one-line warning and changes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cbo.frontend.hints import read_hints
from cbo.ir.operators import AssumedKey, Scan, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog


@pytest.mark.parametrize("comment", [
    " #distinct@ tab1 = col1,col2#",          # the seed's own example
    "#distinct@tab1=col1,col2#",
    "  #distinct@   tab1 =  col1 ,  col2  #  ",
    " #distinct tab1 = col1,col2 #",          # the regex's \@*: no @
    " #distinct@@ tab1 = col1,col2 #",
])
def test_the_seeds_forms_are_read(comment):
    hints, warnings = read_hints([comment])
    assert warnings == []
    assert [(h.table, h.columns) for h in hints] == [("tab1", ("col1", "col2"))]


@pytest.mark.parametrize("comment", [
    " #distinct@ tab1 = col1,col2 ",          # no closing #
    " #distinct@ tab1 col1 #",                # no =
    " #distinct@ = col1 #",                   # no table
    " #distinct@ tab1 = #",                   # no column
    " #distinct@ tab1 = col1,,col2 #",
    " #DISTINCT@ tab1 = col1 #",              # the marker's case
])
def test_malformed_hints_warn(comment):
    hints, warnings = read_hints([comment])
    assert hints == []
    assert len(warnings) == 1 and "hint ignored" in warnings[0] and "#distinct@ table = col1,col2 #" in warnings[0]


def test_comments_without_the_marker_are_not_hints():
    assert read_hints([" a comment ", " distinct values # 3 "]) == ([], [])


@pytest.fixture(scope="module")
def planner(tpch_parquet_catalog):
    return Planner(load_catalog(tpch_parquet_catalog))


def _assumed(planner: Planner, sql: str) -> tuple[dict[str, list[tuple[tuple[str, ...], str]]], tuple[str, ...]]:
    bound, normalized, _, warnings = planner._logical(sql)
    keys: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for scan in walk(bound):
        if isinstance(scan, Scan):
            keys.setdefault(scan.table, []).extend((tuple(c.name for c in k.columns), k.source)
                                                   for k in scan.assumed_keys)
    return keys, warnings


@pytest.mark.parametrize("sql", [
    "/* #distinct@ supplier = s_name # */ select s_acctbal from supplier",
    "select s_acctbal /* #distinct@ supplier = s_name # */ from supplier",
    "select s_acctbal from supplier -- #distinct@ supplier = s_name #",
    "select s_acctbal from supplier s /* #distinct@ s = S_NAME # */",            # an alias; any case of the column
    "select s_acctbal from lake.supplier /* #distinct@ lake.supplier = s_name # */",
])
def test_a_hint_anywhere_becomes_a_key_of_the_scan(planner, sql):
    keys, warnings = _assumed(planner, sql)
    assert warnings == ()
    assert keys["lake.supplier"] == [(("s_name",), "hint")]


def test_a_hint_is_a_unique_key_but_not_a_not_null_column(planner):
    bound, _, _, _ = planner._logical("select s_name from supplier /* #distinct@ supplier = s_name, s_phone # */")
    scan = next(s for s in walk(bound) if isinstance(s, Scan))
    key = frozenset(c for c in scan.columns if c.name in ("s_name", "s_phone"))
    assert key in scan.unique_keys
    assert isinstance(scan.assumed_keys[0], AssumedKey)
    assert scan.not_null == frozenset(c for c in scan.columns if not c.nullable) | {scan.keys[0][0]}


def test_a_hint_every_reference_of_the_table_gets(planner):
    keys, _ = _assumed(planner, "select 1 from supplier a, supplier b where a.s_suppkey = b.s_suppkey "
                                "/* #distinct@ b = s_name # */")
    assert keys["lake.supplier"] == [(("s_name",), "hint")] * 2


def test_a_hint_on_a_declared_key_adds_nothing(planner):
    keys, warnings = _assumed(planner, "select 1 from supplier /* #distinct@ supplier = s_suppkey, s_name # */")
    assert keys == {"lake.supplier": []} and warnings == ()


@pytest.mark.parametrize("sql, why", [
    ("select 1 from supplier /* #distinct@ suplier = s_name # */", "the query reads no table named suplier"),
    ("select 1 from supplier /* #distinct@ part = p_name # */", "the query reads no table named part"),
    ("select 1 from supplier /* #distinct@ supplier = s_nam # */", "lake.supplier has no column s_nam"),
    ("with c as (select * from supplier) select 1 from c /* #distinct@ c = s_name # */",
     "c is not a table of the catalog"),
    ("select 1 from (select s_name from supplier) d /* #distinct@ d = s_name # */", "d is not a table of the catalog"),
    ("select 1 from supplier /* #distinct@ supplier s_name # */", "is not /* #distinct@ table = col1,col2 # */"),
])
def test_an_unusable_hint_is_one_warning_and_no_key(planner, sql, why):
    keys, warnings = _assumed(planner, sql)
    assert keys.get("lake.supplier", []) == []
    assert len(warnings) == 1 and why in warnings[0], warnings


def test_a_hint_word_in_a_string_is_no_hint(planner):
    assert _assumed(planner, "select '/* #distinct@ supplier = x # */' from supplier") == ({"lake.supplier": []}, ())


def test_the_cli_prints_the_warning_on_stderr_and_in_explain(tpch_parquet_catalog):
    sql = "select count(*) from supplier /* #distinct@ supplier = nope # */"
    warning = "hint /* #distinct@ supplier = nope # */ ignored: lake.supplier has no column nope"
    result = subprocess.run([sys.executable, "-m", "cbo", "explain", "--engine", "duckdb", "--catalog",
                             str(tpch_parquet_catalog), sql], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"cbo: warning: {warning}"
    assert result.stdout.strip().splitlines()[-1] == f"Warning: {warning}"
    result = subprocess.run([sys.executable, "-m", "cbo", "query", "--engine", "duckdb", "--format", "csv",
                             "--catalog", str(tpch_parquet_catalog), sql], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"cbo: warning: {warning}"
    assert result.stdout.split()[-1] == "100"


@pytest.mark.parametrize("hint, keyed", [("", False), ("/* #distinct@ supplier = s_name # */", True)])
def test_seed_003s_rule_reads_the_hinted_key(planner, hint, keyed):
    """3.1 (DISTINCT above the inner join) needs a non-null key of the left side among its
    columns, else it numbers the rows: s_name (NOT NULL in the Parquet files) is one only by the hint."""
    from cbo.ir.operators import Aggregate, Project

    planned = planner.plan("select s_name, s_acctbal from supplier "
                           f"where s_name in (select c_name from customer) {hint}")
    memo = planned.optimized.memo
    added = [e for g in memo for e in g.expressions if memo.added_by.get(e) == "SemiJoinToInnerDistinctAbove"]
    assert added
    # Keyed: DISTINCT on the left side's columns; else the numbered rows' DISTINCT, projected back.
    assert all(isinstance(e, Aggregate if keyed else Project) for e in added)
