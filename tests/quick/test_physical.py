"""Physical planning: properties, enforcers, strategies, the cost profile and oracle cardinalities.

Plans are made at TPC-H SF 1 statistics (tests/testdata/stats/tpch-sf1) over the SF 0.01
catalog's schema, as the plan files are.
"""

from __future__ import annotations

import json
import math

import pytest

from cbo.cost import CostProfile
from cbo.errors import CboError
from cbo.estimate import Estimator
from cbo.ir.operators import Aggregate, Join
from cbo.physical.algorithm import JOIN_ALGORITHMS, Algorithm
from cbo.physical.properties import Delivered, Required
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS

LINEITEM_ORDERS_BY_ORDER = """
select l_orderkey, o_orderdate, sum(l_quantity) from lineitem, orders
where l_orderkey = o_orderkey group by l_orderkey, o_orderdate"""


@pytest.fixture(scope="module")
def estimator() -> Estimator:
    store = StatsStore(TPCH_STATS)
    return Estimator({t: store.load(t).stats for t in store.tables()})


def plan(catalog, estimator, sql, **settings):  # type: ignore[no-untyped-def]
    planner = Planner(load_catalog(catalog), estimator=estimator,
                      settings=OptimizerSettings().with_values(settings))
    return planner.plan(sql)


def test_delivered_properties_satisfy_what_spark_requires():
    a, b = frozenset({1, 5}), frozenset({2})
    on_ab = Delivered("hash", (a, b))
    assert on_ab.satisfies(Required("hash", (5, 2)))          # 1 and 5 were made equal by a join
    assert not on_ab.satisfies(Required("hash", (2, 1)))      # co-partitioning is positional
    assert not on_ab.satisfies(Required("hash", (1,)))
    assert on_ab.satisfies(Required("clustered", (1, 2, 3)))  # a subset of the grouping columns
    assert not on_ab.satisfies(Required("clustered", (1, 3)))
    assert Delivered("single").satisfies(Required("clustered", (7,)))
    assert not Delivered().satisfies(Required("broadcast"))
    sorted_ab = Delivered("hash", (a,), (a, b))
    assert sorted_ab.satisfies(Required("hash", (1,), (1, 2)))
    assert not sorted_ab.satisfies(Required("hash", (1,), (2,)))
    # a projection that drops every column of a partitioning position loses the partitioning
    assert on_ab.renamed({1: {10}, 2: {20}}).partitioning == (frozenset({10}), frozenset({20}))
    assert on_ab.renamed({1: {10}}).distribution == "any"


def test_shuffled_join_partitioning_is_reused_by_the_aggregation(tpch_parquet_catalog, estimator):
    planned = plan(tpch_parquet_catalog, estimator, LINEITEM_ORDERS_BY_ORDER, broadcast_limit_bytes=0)
    (join,) = [n for n in planned.physical.operators() if isinstance(n.logical, Join)]
    (aggregate,) = [n for n in planned.physical.operators() if isinstance(n.logical, Aggregate)]
    assert join.algorithm in (Algorithm.SHUFFLED_HASH_JOIN, Algorithm.SORT_MERGE_JOIN)
    # both join inputs are shuffled on the key; the aggregation needs no shuffle of its own
    assert all(e.startswith("shuffle(") for e in join.exchanges())
    assert aggregate.algorithm is Algorithm.FINAL_AGGREGATE
    assert aggregate.exchanges() == [""] and aggregate.inputs[0] is join


def test_broadcast_limit_is_respected(tpch_parquet_catalog, estimator):
    from benchmarks.tpch.queries import select
    def build_sizes(planned) -> list[float]:
        # the build side of each broadcast hash join: its broadcast exchange's estimated bytes
        return [n.inputs[1].bytes for n in planned.physical.operators() if n.algorithm is Algorithm.BROADCAST_HASH_JOIN]

    for query in select(["q5", "q9", "q18"]):
        default = plan(tpch_parquet_catalog, estimator, query.sql)
        small = plan(tpch_parquet_catalog, estimator, query.sql, broadcast_limit_bytes=1000)
        assert small.optimized.cost >= default.optimized.cost
        builds, big = build_sizes(small), build_sizes(default)
        assert all(b <= 1000 for b in builds), query.name
        assert any(b > 1000 for b in big), query.name   # the default limit allows larger ones


def test_chosen_plan_quantities_price_to_its_cost(tpch_parquet_catalog, estimator):
    from benchmarks.tpch.queries import all_queries

    for query in all_queries():
        planned = plan(tpch_parquet_catalog, estimator, query.sql)
        optimized = planned.optimized
        constants = Planner(load_catalog(tpch_parquet_catalog)).optimizer().profile.constants
        model_price = sum(constants[n] * v for n, v in optimized.quantities.items())
        assert model_price == pytest.approx(optimized.cost, rel=1e-9), query.name


def test_cost_profile_round_trip_and_bad_files(tmp_path):
    profile = CostProfile(constants={"scan_byte": 3e-9, "task": 0.01}, source="test")
    path = tmp_path / "spark.json"
    profile.save(path)
    loaded = CostProfile.load(path)
    assert loaded.constants["scan_byte"] == 3e-9 and loaded.constants["task"] == 0.01
    assert not list(tmp_path.glob("*.tmp"))
    path.write_text("{not json")
    with pytest.raises(CboError, match=r"spark.json is not valid JSON \(line 1"):
        CostProfile.load(path)
    path.write_text(json.dumps({"constants": {"scan_byte": -1}}))
    with pytest.raises(CboError, match="scan_byte must be a non-negative number"):
        CostProfile.load(path)
    path.write_text(json.dumps({"constants": {"warp_drive": 1}}))
    with pytest.raises(CboError, match="unknown quantities warp_drive"):
        CostProfile.load(path)
    with pytest.raises(CboError, match="cannot read cost profile"):
        CostProfile.load(tmp_path / "missing.json")


def test_constants_change_the_choice(tpch_parquet_catalog, estimator, tmp_path):
    """A profile where broadcasting costs a fortune has no broadcast joins."""
    path = tmp_path / "expensive-broadcast.json"
    CostProfile(constants={"broadcast_byte": 1.0, "broadcast_row": 1.0}).save(path)
    from benchmarks.tpch.queries import select

    planned = plan(tpch_parquet_catalog, estimator, select(["q5"])[0].sql, cost_profile=str(path))
    assert Algorithm.BROADCAST_HASH_JOIN not in {n.algorithm for n in planned.physical.operators()}


def test_partition_count_follows_scanned_bytes():
    profile = CostProfile(cores=2, target_partition_bytes=100.0, max_partitions=50)
    assert profile.partitions(10.0) == 4          # at least two per core
    assert profile.partitions(1000.0) == 10
    assert profile.partitions(1e9) == 50


def test_oracle_cardinalities_are_exact(tpch_parquet_catalog):
    from cbo.engines.duckdb_engine import DuckDBEngine

    catalog = load_catalog(tpch_parquet_catalog)
    sql = ("select n_name, count(*) from customer, nation, orders where c_nationkey = n_nationkey "
           "and o_custkey = c_custkey and o_totalprice > 100000 group by n_name")
    planner = Planner(catalog, settings=Planner(catalog).settings.with_values({"cardinalities": "oracle"}))
    planned = planner.plan(sql)
    duck = DuckDBEngine(catalog)
    for group in planned.optimized.memo.groups:
        from cbo.estimate.oracle import concrete
        from cbo.sqlgen import to_sql

        body = to_sql(concrete(group.first), tuple(f"c{i}" for i in range(len(group.output))), "duckdb")
        _, rows, _ = duck.run(f"select count(*) from ({body}) t")
        assert group.rows == rows[0][0], f"G{group.id}"
    # one count per distinct subplan: groups whose first expressions render alike share it
    assert 0 < planner.oracle().queries_run <= len(planned.optimized.memo.groups)
    # without statistics the ordinary estimate of the filtered join is a guess, not the count
    plain = Planner(catalog).plan(sql)
    assert plain.optimized.root.rows != planned.optimized.root.rows


def test_the_fast_join_price_equals_the_priced_quantities():
    # The search prices joins without building their quantities; both must agree exactly.
    import random

    from cbo.cost import CostModel
    from cbo.ir import types as T
    from cbo.ir.expressions import Column, ColumnRef, compare
    from cbo.ir.operators import Scan

    model = CostModel(partitions=8)
    a, b = Column(1, "a", T.BIGINT, True), Column(2, "b", T.BIGINT, True)
    join = Join("inner", Scan("l", (a,), ("a",)), Scan("r", (b,), ("b",)), compare("eq", ColumnRef(a), ColumnRef(b)))
    rng = random.Random(3)
    for _ in range(200):
        out = (rng.uniform(0, 1e8), rng.uniform(1, 200))
        inputs = [(rng.uniform(0, 1e8), rng.uniform(1, 200)), (rng.uniform(0, 1e9), rng.uniform(1, 400))]
        for strategy in JOIN_ALGORITHMS:
            fast = model.local(join, strategy, out, inputs)
            slow = model.price(model.quantities(join, strategy, out, inputs))
            assert math.isclose(fast, slow, rel_tol=1e-12), (strategy, fast, slow)


def test_join_kind_local_is_local_to_the_last_bit():
    # The rules' floors price a join with ``join_kind_local`` (no input list), the search its
    # alternatives with ``local``: a floor one bit above the alternative's own floor could
    # skip the join that ties with the winner.
    import random

    from cbo.cost import CostModel
    from cbo.ir import types as T
    from cbo.ir.expressions import Column, ColumnRef, compare
    from cbo.ir.operators import Scan

    model = CostModel(partitions=8)
    a, b = Column(1, "a", T.BIGINT, True), Column(2, "b", T.BIGINT, True)
    condition = compare("eq", ColumnRef(a), ColumnRef(b))
    rng = random.Random(11)
    for kind in ("inner", "left", "semi", "anti", "mark"):
        join = Join(kind, Scan("l", (a,), ("a",)), Scan("r", (b,), ("b",)), condition,
                    mark=Column(3, "m", T.BOOLEAN, True) if kind == "mark" else None)
        for _ in range(100):
            out = (rng.choice([0.0, 1.0, rng.uniform(0, 1e8)]), rng.uniform(1, 200))
            left = (rng.choice([0.0, 1.0, rng.uniform(0, 1e8)]), rng.uniform(1, 200))
            right = (rng.choice([0.0, 1.0, rng.uniform(0, 1e9)]), rng.uniform(1, 400))
            for strategy in JOIN_ALGORITHMS:
                assert model.join_kind_local(kind, strategy, out, left, right) == \
                    model.local(join, strategy, out, [left, right]), (kind, strategy)


def test_the_join_floor_is_the_least_price_of_every_strategy_and_side():
    # The search orders and prunes joins by ``join_floor`` before implementing them: it must be
    # exactly the least of the strategies' prices, either side building (not merely close: it
    # decides which alternative of equal cost is found first).
    import random

    from cbo.cost import CostModel

    model = CostModel(partitions=8)
    rng = random.Random(5)
    for _ in range(500):
        out = (rng.choice([0.0, 1.0, rng.uniform(0, 1e8)]), rng.uniform(1, 200))
        inputs = [(rng.choice([0.0, 1.0, rng.uniform(0, 1e8)]), rng.uniform(1, 200)),
                  (rng.choice([0.0, 1.0, rng.uniform(0, 1e9)]), rng.uniform(1, 400))]
        swapped = [inputs[1], inputs[0]]
        least = min(model._join_price(strategy, out, sides) for sides in (inputs, swapped)
                    for strategy in JOIN_ALGORITHMS if strategy is not Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN)
        assert model.join_floor(out, inputs) == least, (out, inputs)


def test_join_floors_are_join_floor_of_each_join_to_the_last_bit():
    # The search bounds a group's joins with ``join_floors`` at once: any difference from
    # ``join_floor`` would reorder equal bounds and change which plan is found first.
    import random

    from cbo.cost import CostModel

    model = CostModel(partitions=8)
    rng = random.Random(7)
    for _ in range(50):
        out = (rng.choice([0.0, 1.0, rng.uniform(0, 1e8)]), rng.uniform(1, 200))
        lefts = [rng.choice([0.0, 1.0, 2.0, rng.uniform(0, 1e8)]) for _ in range(20)]
        rights = [rng.choice([0.0, 1.0, 2.0, rng.uniform(0, 1e9)]) for _ in range(19)] + [lefts[-1]]
        expected = [model.join_floor(out, [(a, 8.0), (b, 16.0)]) for a, b in zip(lefts, rights)]
        assert model.join_floors(out, lefts, rights) == expected
