"""Cost that knows the cluster (``cbo.cost.cluster``): a profile scaled to a cluster's shape, a
profile fitted on that shape chosen when there is one, and the planner costing with them.

No Spark here: shapes are given (``cbo.engines.spark.cluster_shape`` reads them from a running
session; the cluster test checks that EXPLAIN on the 2-worker cluster names its shape)."""

from __future__ import annotations

import pytest

from cbo.cost import CostModel, CostProfile
from cbo.cost.cluster import PARALLEL, ClusterShape, describe_profile, profile_for, scaled, shape_profile_path
from cbo.engines.spark import parse_bytes
from cbo.errors import SetupError
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import Required
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from tests.quick.test_physical import estimator  # noqa: F401  (the fixture: TPC-H SF 1 statistics)

LOCAL = CostProfile(executors=1, cores=2, source="/somewhere/spark.json")
EIGHT = ClusterShape(executors=2, cores=4, shuffle_partitions=400, master="spark://h:7077")


def test_work_in_tasks_spreads_over_the_cluster_s_cores():
    on_cluster = scaled(LOCAL, EIGHT)
    for name, value in LOCAL.constants.items():
        expected = value * 2 / 8 if name in PARALLEL else value
        assert on_cluster.constants[name] == pytest.approx(expected), name
    # the driver's share of a broadcast, a database's reading, the fixed cost: not spread
    for name in ("broadcast_row", "jdbc_row", "jdbc_byte", "query"):
        assert on_cluster.constants[name] == LOCAL.constants[name]
    assert (on_cluster.executors, on_cluster.cores, on_cluster.max_partitions) == (2, 4, 400)
    assert on_cluster.partitions(0.0) == 16      # two per core of the cluster
    assert "scaled from 1x2 to 2x4" in on_cluster.source


def test_a_broadcast_is_sent_to_every_executor():
    # 2 executors of 1 core: as many cores as the local profile, so the same constants, but a
    # broadcast travels twice, and a shuffle does not
    two = scaled(LOCAL, ClusterShape(executors=2, cores=1))
    assert dict(two.constants) == dict(LOCAL.constants)
    local, cluster = CostModel(LOCAL), CostModel(two)
    size = (1e6, 40.0)
    broadcast, shuffle = Required("broadcast"), Required("hash", (1,))
    assert cluster.price(cluster.distribute(broadcast, size)) > local.price(local.distribute(broadcast, size))
    assert cluster.price(cluster.distribute(shuffle, size)) == local.price(local.distribute(shuffle, size))


def test_a_profile_fitted_on_the_shape_is_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    assert profile_for(LOCAL, None) is LOCAL                      # local mode: as it is
    assert "scaled" in profile_for(LOCAL, EIGHT).source           # no profile for 2x4 yet
    fitted = CostProfile(constants={"scan_byte": 1e-10}, executors=2, cores=4, fit={"training_queries": 60})
    path = shape_profile_path(EIGHT)
    assert path == tmp_path / "profiles" / "spark-2x4.json"
    fitted.save(path)
    chosen = profile_for(LOCAL, EIGHT)
    assert chosen.source == str(path) and chosen.constants["scan_byte"] == 1e-10
    assert chosen.max_partitions == 400
    assert describe_profile(chosen) == "spark-2x4.json (fitted on 60 queries; costs 2 x 4 cores)"
    # another shape still gets the default scaled
    assert "scaled" in profile_for(LOCAL, ClusterShape(executors=4, cores=4)).source


def test_the_planner_costs_for_the_cluster(tpch_parquet_catalog, estimator, tmp_path, monkeypatch):  # noqa: F811
    from benchmarks.tpch.queries import select

    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CBO_COST_PROFILE", raising=False)
    catalog = load_catalog(tpch_parquet_catalog)
    sql = select(["q5"])[0].sql
    local = Planner(catalog, estimator=estimator).plan(sql)
    asked = []

    def shape() -> ClusterShape:
        asked.append(1)
        return EIGHT

    planner = Planner(catalog, estimator=estimator, cluster=shape)
    on_cluster = planner.plan(sql)
    planner.plan(sql)
    assert asked == [1], "the shape is read once"
    assert on_cluster.cluster == EIGHT and local.cluster is None
    assert (on_cluster.profile.executors, on_cluster.profile.cores) == (2, 4)
    assert (local.profile.executors, local.profile.cores) == (1, 2)
    # the same work on four times the cores: the Spark-side part of the cost shrinks
    assert on_cluster.optimized.cost < local.optimized.cost
    assert on_cluster.partitions >= 16

    # a cluster with broadcasts off gets no broadcast join from cbo either
    off = Planner(catalog, estimator=estimator, cluster=ClusterShape(2, 4, broadcast_threshold=-1)).plan(sql)
    assert Algorithm.BROADCAST_HASH_JOIN in {n.algorithm for n in on_cluster.physical.operators()}
    assert Algorithm.BROADCAST_HASH_JOIN not in {n.algorithm for n in off.physical.operators()}


def test_a_named_profile_is_scaled_not_swapped(tpch_parquet_catalog, estimator, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    CostProfile(executors=2, cores=4, constants={"scan_byte": 5e-9}).save(shape_profile_path(EIGHT))
    mine = tmp_path / "mine.json"
    CostProfile(executors=1, cores=2, constants={"scan_byte": 8e-9}).save(mine)
    planner = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator, cluster=EIGHT,
                      settings=Planner(load_catalog(tpch_parquet_catalog)).settings.with_values(
                          {"cost_profile": str(mine)}))
    profile = planner.profile()
    assert profile.constants["scan_byte"] == pytest.approx(2e-9) and "mine.json scaled" in profile.source


def test_spark_byte_strings():
    assert parse_bytes("10MB") == parse_bytes("10m") == parse_bytes("10485760b") == 10 * 2**20
    assert parse_bytes("-1") == -1 and parse_bytes("1g") == 2**30
    with pytest.raises(SetupError, match="not a size in bytes: 'lots'"):
        parse_bytes("lots")


def test_shape_descriptions():
    assert EIGHT.key == "2x4"
    assert EIGHT.describe() == ("2 executors x 4 cores on spark://h:7077; shuffle partitions 400, "
                                "broadcast threshold 10 MiB")
    assert ClusterShape(1, 1, broadcast_threshold=-1).describe() == \
        "1 executor x 1 core; shuffle partitions 200, broadcast threshold off"
