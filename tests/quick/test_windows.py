"""Window functions through cbo's plan on DuckDB against DuckDB on the original SQL.

Each query is planned by cbo and rendered as DuckDB SQL; its answer must equal DuckDB's on the
original text. The data (``DATA``) has NULL partition keys, NULL and tied order keys and NULL
values, so partitions of NULLs, peers in RANGE frames, the NULL order of each direction, empty
frames and lag/lead's defaults all show. Row numbers and offsets are taken over orders without
ties (``id`` breaks them), so every answer is determined. The same cases run on Spark in
``tests/integration/test_windows_on_spark.py``. Forms cbo does not take fail with one line
naming the problem and its place.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.ir.operators import Window, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog

DATA = ("with t(id, g, k, x, y, s) as (values (1, 1, 1, 10, 1.5, 'a'), (2, 1, 2, null, 2.5, 'b'), "
        "(3, 1, 2, 30, null, null), (4, 1, 4, 40, 4.0, 'd'), (5, 2, null, 5, 1.0, 'e'), (6, 2, 1, 6, 2.0, 'f'), "
        "(7, 2, 1, null, 3.0, 'g'), (8, 3, 7, 7, 7.0, 'h'), (9, null, 1, 1, 1.0, 'i'), "
        "(10, null, null, null, null, null), (11, 2, null, 8, 2.5, 'k')) ")

CASES = {
    "ranking": "select id, row_number() over (partition by g order by k, id), rank() over (partition by g order by k), "
               "dense_rank() over (partition by g order by k), percent_rank() over (partition by g order by k), "
               "cume_dist() over (partition by g order by k), ntile(3) over (partition by g order by k, id), "
               "ntile(2) over (order by id) from t order by id",
    "null order": "select id, rank() over (order by k nulls first), rank() over (order by k desc), "
                  "rank() over (order by k desc nulls last), rank() over (order by k), "
                  "row_number() over (order by k desc nulls first, id) from t order by id",
    "default frames": "select id, sum(x) over (partition by g order by k), sum(x) over (partition by g), "
                      "count(x) over (order by k), count(*) over (order by k), avg(x) over (partition by g order by k), "
                      "min(s) over (partition by g order by k), max(x) over () from t order by id",
    "rows frames": "select id, sum(x) over (partition by g order by id rows between 1 preceding and 1 following), "
                   "sum(x) over (order by id rows between unbounded preceding and current row), "
                   "count(x) over (order by id rows between current row and unbounded following), "
                   "sum(x) over (order by id rows between 2 preceding and 1 preceding), "
                   "count(*) over (order by id rows between 2 preceding and 1 preceding), "
                   "max(x) over (order by id rows 1 preceding), "
                   "avg(y) over (partition by g order by id rows between 1 following and 3 following) "
                   "from t order by id",
    "range frames": "select id, sum(x) over (order by k range between 1 preceding and 1 following), "
                    "count(*) over (order by k range between unbounded preceding and current row), "
                    "sum(x) over (order by k nulls first range between current row and unbounded following), "
                    "count(*) over (order by y range between 0.5 preceding and 1.5 following), "
                    "sum(x) over (order by k desc range between 1 preceding and current row), "
                    "count(x) over (partition by g order by k range between 2 preceding and 0 following) "
                    "from t order by id",
    "offsets": "select id, lag(x) over (order by id), lag(x, 2, -1) over (partition by g order by id), "
               "lead(x, 1, 0) over (partition by g order by id), lag(x, 0) over (order by id), "
               "lead(s, 1, 'none') over (order by id), lead(y, 3) over (partition by g order by id) "
               "from t order by id",
    "values": "select id, first_value(x) over (partition by g order by id), "
              "last_value(x) over (partition by g order by k, id), "
              "last_value(s) over (partition by g order by id rows between unbounded preceding and unbounded following), "
              "first_value(y) over (order by id rows between 1 following and 2 following) from t order by id",
    "moments": "select id, stddev_samp(x) over (partition by g), var_pop(x) over (order by id rows between 1 preceding "
               "and current row), stddev_pop(y) over (partition by g order by k), variance(x) over () "
               "from t order by id",
    "over aggregates": "select g, sum(x), rank() over (order by sum(x) desc nulls last), sum(sum(x)) over (), "
                       "avg(count(*)) over (order by g nulls first rows between 1 preceding and current row) "
                       "from t group by g order by g nulls first",
    "in order by": "select id from t order by row_number() over (order by x desc nulls last, id)",
    "qualify": "select id, g from t qualify row_number() over (partition by g order by id) = 1 order by id",
    "qualify alias": "select id, g, row_number() over (partition by g order by id) rn from t qualify rn <= 2 "
                     "order by id",
    "named window": "select id, sum(x) over w, rank() over w, count(*) over (v order by id) from t "
                    "window w as (partition by g order by k), v as (partition by g) order by id",
    "top k": "select * from (select id, g, rank() over (partition by g order by x desc) r from t) q where r <= 2 "
             "order by id",
    "row_number top 1": "select * from (select id, g, row_number() over (partition by g order by id desc) r "
                        "from t) q where r = 1 order by id",
    "partition filter": "select * from (select id, g, sum(x) over (partition by g) s, "
                        "rank() over (partition by g order by id) r from t) q where g = 1 and r < 3 order by id",
    "distinct": "select distinct g, count(*) over (partition by g) from t order by g nulls last",
    "computed": "select id, sum(x * 2) over (partition by g % 2 order by k + 1, id), "
                "rank() over (partition by 1 order by 'a') from t order by id",
    "in subquery": "select g, max(r) from (select g, rank() over (partition by g order by k) r from t) q "
                   "group by g order by g nulls first",
    "several specs": "select id, sum(x) over (partition by g), sum(x) over (partition by g order by id), "
                     "rank() over (partition by g, k order by id), count(*) over (partition by k, g), "
                     "row_number() over (order by id desc) from t order by id",
    "empty input": "select id, rank() over (order by id), sum(x) over () from t where id > 100",
}


@pytest.fixture(scope="module")
def engines(tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    reference = DuckDBEngine(catalog)
    yield Session(catalog, engine="duckdb", dialect="duckdb"), reference
    reference.close()


@pytest.mark.parametrize("name", list(CASES))
def test_window_functions_answer_as_duckdb_does(engines, name):
    session, reference = engines
    sql = DATA + CASES[name]
    _, expected, _ = reference.run(sql)
    _, rows = session.query(sql)
    verdict = compare(expected, rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name}: {verdict.detail}\n{sql}"


def test_windows_over_tpch(engines):
    session, reference = engines
    sql = ("select n_name, r_name, count(*) over (partition by r_name), "
           "rank() over (partition by n_regionkey order by n_name desc), "
           "sum(n_nationkey) over (order by n_name rows between 2 preceding and current row) "
           "from nation join region on n_regionkey = r_regionkey order by n_name")
    _, expected, _ = reference.run(sql)
    _, rows = session.query(sql)
    assert compare(expected, rows, ordered=True).matches


def test_one_window_node_per_partition_and_order(tpch_parquet_catalog):
    planner = Planner(load_catalog(tpch_parquet_catalog), "duckdb")
    _, plan, _ = planner.logical("select n_name, rank() over (partition by n_regionkey order by n_name), "
                                 "sum(n_nationkey) over (partition by n_regionkey order by n_name), "
                                 "count(*) over (partition by n_regionkey), "
                                 "min(n_name) over (partition by n_regionkey) from nation")
    windows = [node for node in walk(plan) if isinstance(node, Window)]
    assert sorted(len(w.functions) for w in windows) == [2, 2]


def test_unread_windows_are_pruned(tpch_parquet_catalog):
    planner = Planner(load_catalog(tpch_parquet_catalog), "duckdb")
    _, plan, _ = planner.logical("select n_name from (select n_name, rank() over (order by n_name) r from nation) t")
    assert not any(isinstance(node, Window) for node in walk(plan))


@pytest.mark.parametrize("sql, expected", [
    ("select sum(n_nationkey) over (order by n_name groups between 1 preceding and current row) from nation",
     "GROUPS frames are not supported"),
    ("select sum(n_nationkey) over (order by n_name rows between 1 preceding and current row exclude current row) "
     "from nation", "EXCLUDE in a window frame is not supported"),
    ("select first_value(n_name ignore nulls) over (order by n_name) from nation",
     "IGNORE NULLS in a window function is not supported"),
    ("select sum(n_nationkey) filter (where n_nationkey > 1) over () from nation",
     "FILTER (WHERE ...) on a window aggregate is not supported"),
    ("select count(distinct n_regionkey) over () from nation", "DISTINCT in a window aggregate (count) is not supported"),
    ("select n_name from nation group by n_name, rank() over (order by n_name)",
     "window functions are not allowed in GROUP BY"),
    ("select n_regionkey from nation group by n_regionkey having rank() over (order by n_regionkey) > 1",
     "window functions are not allowed in HAVING"),
    ("select sum(rank() over (order by n_name)) from nation", "window functions are not allowed in the argument of sum"),
    ("select rank() over (order by sum(n_nationkey) over ()) from nation",
     "window functions are not allowed in a window function's arguments"),
    ("select ntile(0) over (order by n_name) from nation", "ntile's bucket count must be a positive integer constant"),
    ("select lag(n_name, n_nationkey) over (order by n_name) from nation",
     "lag's offset must be a non-negative integer constant"),
    ("select lag(n_name, 1, n_comment) over (order by n_name) from nation", "lag's default must be a constant"),
    ("select lag(n_nationkey, 1, 'x') over (order by n_name) from nation",
     "lag's default (varchar) does not match its value (bigint)"),
    ("select sum(n_nationkey) over (order by n_name, n_regionkey range between 1 preceding and current row) "
     "from nation", "a RANGE frame with an offset needs exactly one ORDER BY key, not 2"),
    ("select sum(n_nationkey) over (order by n_name range between 1 preceding and current row) from nation",
     "a RANGE frame with an offset needs a numeric ORDER BY key, not varchar"),
    ("select sum(n_nationkey) over (order by n_nationkey rows between 1 preceding and 3 preceding) from nation",
     "the frame starts after it ends (1 PRECEDING to 3 PRECEDING)"),
    ("select sum(n_nationkey) over (order by n_nationkey rows between current row and unbounded preceding) "
     "from nation", "a frame cannot start at CURRENT ROW or end at UNBOUNDED PRECEDING"),
    ("select sum(n_nationkey) over w from nation", "unknown window 'w'"),
    ("select sum(n_nationkey) over (w partition by n_name) from nation window w as (order by n_name)",
     "a window that refers to 'w' cannot add PARTITION BY"),
    ("select any_value(n_name) over () from nation", "any_value is not supported as a window function"),
    ("select percentile_cont(0.5) within group (order by n_nationkey) over () from nation",
     "unsupported window function"),
])
def test_unsupported_window_forms_are_refused_in_one_line(tpch_parquet_catalog, sql, expected):
    with pytest.raises(CboError) as caught:
        Planner(load_catalog(tpch_parquet_catalog), "duckdb").plan(sql)
    message = str(caught.value)
    assert message.startswith("line 1, column") and expected in message and "\n" not in message, message


# -- estimation -----------------------------------------------------------------------------------

def _window_of(scan, partition, order, functions):  # type: ignore[no-untyped-def]
    from cbo.ir.operators import SortKey

    return Window(scan, tuple(partition), tuple(SortKey(c) for c in order), tuple(functions))


@pytest.fixture(scope="module")
def sized():
    """A table whose partition p = i holds i rows (i = 1..40), x numbering them 1..i, and y a
    value with five distinct values per partition at most."""
    from cbo.estimate import Estimator
    from cbo.ir import types as T
    from cbo.ir.expressions import ColumnFactory
    from cbo.ir.operators import Scan
    from stats.from_values import table_stats

    rows = [(i, j, j % 5) for i in range(1, 41) for j in range(1, i + 1)]
    stats = {"t.w": table_stats("t.w", {"p": [r[0] for r in rows], "x": [r[1] for r in rows],
                                        "y": [r[2] for r in rows]}, sample_size=0)}
    factory = ColumnFactory()
    scan = Scan("t.w", tuple(factory.new(n, T.INTEGER) for n in "pxy"), ("p", "x", "y"))
    return Estimator(stats), scan, factory, rows


def test_a_window_passes_its_rows_and_columns_through(sized):
    from cbo.ir import types as T
    from cbo.ir.expressions import WindowCall

    estimator, scan, factory, rows = sized
    p, x, _ = scan.columns
    rank = factory.new("r", T.BIGINT, False)
    window = _window_of(scan, [p], [x], [(rank, WindowCall("rank", (), None, T.BIGINT))])
    estimate, base = estimator.estimate(window), estimator.estimate(scan)
    assert estimate.rows == base.rows == len(rows)
    assert estimate.column(p).distinct == base.column(p).distinct


def test_row_numbers_reach_the_largest_partition_and_a_top_k_keeps_min_size_k_per_partition(sized):
    from cbo.ir import types as T
    from cbo.ir.expressions import ColumnRef, Constant, WindowCall, compare
    from cbo.ir.operators import Filter

    estimator, scan, factory, rows = sized
    p, x, _ = scan.columns
    rn = factory.new("rn", T.BIGINT, False)
    window = _window_of(scan, [p], [x], [(rn, WindowCall("row_number", (), None, T.BIGINT))])
    column = estimator.estimate(window).column(rn)
    assert 30 <= column.distinct <= 60   # the largest partition holds 40 rows
    for k in (1, 5, 20):
        truth = sum(min(i, k) for i in range(1, 41))
        estimate = estimator.rows(Filter(window, compare("lte", ColumnRef(rn), Constant(k, T.INTEGER))))
        assert truth / 1.5 <= estimate <= truth * 1.5, (k, estimate, truth)
    # one partition of every row: 1..820
    whole = _window_of(scan, [], [x], [(rn, WindowCall("row_number", (), None, T.BIGINT))])
    assert estimator.rows(Filter(whole, compare("lte", ColumnRef(rn), Constant(10, T.INTEGER)))) == \
        pytest.approx(10, rel=0.2)


def test_window_aggregates_over_the_whole_partition_take_one_value_per_partition(sized):
    from cbo.ir import types as T
    from cbo.ir.expressions import ColumnRef, WindowCall
    from cbo.ir.windows import WHOLE_PARTITION

    estimator, scan, factory, rows = sized
    p, x, _ = scan.columns
    total = factory.new("s", T.BIGINT)
    count = factory.new("c", T.BIGINT, False)
    window = _window_of(scan, [p], [], [(total, WindowCall("sum", (ColumnRef(x),), WHOLE_PARTITION, T.BIGINT)),
                                        (count, WindowCall("count_star", (), WHOLE_PARTITION, T.BIGINT))])
    estimate = estimator.estimate(window)
    assert estimate.column(total).rows == pytest.approx(len(rows))
    assert estimate.column(count).distinct <= 60   # one count per partition, at most 40 values
