"""Large queries plan and answer as DuckDB does; past cbo's limits the error names the limit
(``cbo.limits``); nested IN subqueries keep the memo linear in their depth."""

from __future__ import annotations

import pytest

from cbo import limits
from cbo.answers import compare
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from tests import deep_queries as deep


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.fixture(scope="module")
def engines(catalog):
    duckdb = DuckDBEngine(catalog)
    yield Session(catalog, engine="duckdb"), duckdb
    duckdb.close()


@pytest.mark.parametrize("kind", deep.SIZES)
def test_large_queries_plan_and_answer_as_duckdb(engines, kind):
    session, duckdb = engines
    sql = deep.BUILDERS[kind](deep.SIZES[kind])
    _, rows = session.query(sql)
    _, expected, _ = duckdb.run(sql)
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, verdict.detail


def test_the_limits_themselves_plan(engines):
    session, duckdb = engines
    for sql in (deep.long_sum(limits.MAX_EXPRESSION_DEPTH + 1), deep.parentheses(limits.MAX_PARENTHESES - 1)):
        _, rows = session.query(sql)
        _, expected, _ = duckdb.run(sql)
        assert compare(expected, rows, ordered=False).matches


@pytest.mark.parametrize("sql, limit", [
    (deep.long_sum(limits.MAX_EXPRESSION_DEPTH + 2),
     f"an expression nested more than {limits.MAX_EXPRESSION_DEPTH} deep"),
    (deep.parentheses(limits.MAX_PARENTHESES + 1), f"parentheses nested more than {limits.MAX_PARENTHESES} deep"),
    (deep.nested_in(limits.MAX_SUBQUERY_DEPTH), f"queries nested more than {limits.MAX_SUBQUERY_DEPTH} deep"),
])
def test_past_a_limit_the_error_names_it(catalog, sql, limit):
    with pytest.raises(CboError) as caught:
        Planner(catalog).plan(sql)
    assert limit in str(caught.value) and "cbo's limit" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_and_or_chains_have_no_length_limit(catalog):
    Planner(catalog).plan(deep.or_chain(5000))


def test_nested_in_keeps_the_memo_linear_in_its_depth(catalog):
    """Table pushdown once moved each outer table into each nested DISTINCT that 3.1 made (every
    level's key is in one equivalence class): a DISTINCT and a join region per subset of the
    outer tables, 504 join pairs at 4 levels, 5,372 at 5, 51,759 at 6."""
    planner = Planner(catalog)
    pairs = {n: planner.plan(deep.nested_in(n)).optimized.memo.counters.join_pairs for n in (4, 8, 16)}
    assert pairs[16] <= 4 * pairs[8] <= 16 * pairs[4] and pairs[16] < 200, pairs


def test_ctrl_c_stops_the_work_on_the_deep_stack():
    """Ctrl-C reaches only the main thread; the planning on the deep stack stops too, rather
    than running on after the caller has given up."""
    import _thread
    import signal
    import threading
    import time

    started, finished = threading.Event(), threading.Event()
    stop = time.monotonic() + 60   # bounded: a missed interrupt fails the test, never hangs it

    def busy() -> None:
        started.set()
        try:
            while time.monotonic() < stop:   # pure Python work, as planning is
                sum(range(1_000))
        finally:
            finished.set()

    def interrupt() -> None:
        started.wait(30)
        _thread.interrupt_main()

    # Another library may have taken SIGINT (PySpark does); Python's own handler for this test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            limits.deep(busy)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert finished.wait(10), "the work on the deep stack went on after Ctrl-C"
    assert time.monotonic() < stop, "Ctrl-C never reached the work on the deep stack"
