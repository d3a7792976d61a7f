"""What ``cbo workload run`` reads before anything runs: configurations, a folder of queries, the
named workloads (TPC-DS lighting up when its module exists), dialects, and plan shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbo.app.workload import registry
from cbo.app.workload.configs import Config, Kind, parse_configs
from cbo.app.workload.engines import node_estimates, plan_shape, transpile
from cbo.app.workload.timing import ParseFailure
from cbo.app.workload.registry import resolve
from cbo.app.workload.workloads import WorkloadOptions, read_folder
from cbo.errors import CboError


def test_configurations_parse_with_settings_and_commas_in_values():
    configs = parse_configs("cbo,cbo:cardinalities=oracle,join_reordering_strategy=NONE,spark-default,"
                            "cbo:disabled_rules=ReorderJoins,SortMergeJoin,duckdb", timeout_s=5.0)
    assert [c.label for c in configs] == ["cbo", "cbo:cardinalities=oracle,join_reordering_strategy=NONE",
                                          "spark-default", "cbo:disabled_rules=ReorderJoins,SortMergeJoin", "duckdb"]
    assert [c.kind for c in configs] == [Kind.CBO, Kind.CBO, Kind.SPARK_DEFAULT, Kind.CBO, Kind.DUCKDB]
    assert configs[1].settings_dict == {"cardinalities": "oracle", "join_reordering_strategy": "NONE"}
    assert configs[3].settings_dict == {"disabled_rules": "ReorderJoins,SortMergeJoin"}
    assert configs[1].plans_untimed and not configs[0].plans_untimed
    assert all(c.timeout_s == 5.0 for c in configs)
    assert Config.from_json(configs[1].to_json()) == configs[1]


@pytest.mark.parametrize("text, message", [
    ("cbo,spark-fast", "unknown configuration 'spark-fast'"),
    ("cbo:no_such_setting=1", "configuration cbo:no_such_setting=1: unknown setting 'no_such_setting'"),
    ("cbo:cardinalities=psychic", "cardinalities must be one of"),
    ("cbo,duckdb,cbo", "configuration cbo given twice"),
    ("cbo:=3", "a setting is written name=value"),
    (",", "no configuration given"),
])
def test_bad_configurations_are_one_line_errors(text, message):
    with pytest.raises(CboError, match=message):
        parse_configs(text)


def test_a_folder_is_read_in_natural_order_and_bad_files_are_named(tmp_path: Path):
    for name, text in (("q10.sql", "select 10"), ("q2.sql", "-- two\nselect 2;\n"), ("a.sql", "select 'a'")):
        (tmp_path / name).write_text(text)
    (tmp_path / "notes.txt").write_text("not a query")
    queries = read_folder(tmp_path)
    assert [q.name for q in queries] == ["a", "q2", "q10"]
    assert queries[1].sql == "-- two\nselect 2" and [q.index for q in queries] == [0, 1, 2]
    workload = resolve(str(tmp_path), WorkloadOptions(), dialect="duckdb")
    assert workload.dialect == "duckdb" and workload.catalog is None
    assert [q.name for q in workload.select(["Q02", "a"]).queries] == ["q2", "a"]
    assert workload.select(["q10"]).queries[0].index == 2   # the rotation keeps the whole workload's position
    with pytest.raises(CboError, match="no query named 'q3'"):
        workload.select(["q3"])
    (tmp_path / "empty.sql").write_text("-- nothing here\n")
    with pytest.raises(CboError, match="empty.sql: holds no query"):
        read_folder(tmp_path)
    with pytest.raises(CboError, match="no such folder, nor a named workload"):
        resolve(str(tmp_path / "missing"), WorkloadOptions())


def test_a_named_workloads_own_folder_or_a_copy_of_it_is_that_workload(tmp_path: Path):
    own = registry.WORKLOADS_DIR / "tpch_sql"
    assert registry.find(str(own)).name == "tpch"
    assert registry.find("tpch").name == "tpch"
    for path in own.glob("*.sql"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    assert registry.find(str(tmp_path)).name == "tpch"        # a checkout's copy, cbo installed elsewhere
    (tmp_path / "q01.sql").write_text("select 1")
    assert registry.find(str(tmp_path)) is None               # edited: a folder of its own


def test_tpcds_is_one_entry_whose_duckdb_text_is_transpiled_for_spark(tmp_path: Path, monkeypatch):
    from cbo.app.workload.engines import Engines
    from cbo.sources.catalog import Catalog
    from cbo.workloads import tpcds

    made = []
    monkeypatch.setattr(tpcds, "prepare", lambda sf, postgres=None, progress=None: made.append((sf, postgres)) or
                        {"all-spark": tmp_path / "all-spark.toml", "federated": tmp_path / "federated.toml"})
    workload = resolve("tpcds", WorkloadOptions(sf=0.5, placement="federated"))
    assert made == [(0.5, "local")] and workload.catalog == tmp_path / "federated.toml"
    assert len(workload.queries) == 99 and workload.dialect == "duckdb" and workload.as_written == {"duckdb"}
    assert registry.find(str(registry.WORKLOADS_DIR / "tpcds_sql")).name == "tpcds"
    engines = Engines(Catalog({}), workload)
    q01 = workload.queries[0]
    assert engines.text(q01, "duckdb") == q01.sql                 # as written
    assert engines.text(q01, "spark") == transpile(q01.sql, "duckdb", "spark") != q01.sql
    with pytest.raises(CboError, match="placement 'federated3' is not one of its own"):
        resolve("tpcds", WorkloadOptions(placement="federated3"))


def test_a_placement_a_workload_does_not_have_is_refused():
    with pytest.raises(CboError, match="workload existential: placement 'federated' is not one of its own"):
        resolve("existential", WorkloadOptions(placement="federated"))


def test_text_is_transpiled_for_other_engines_and_unreadable_text_is_a_parse_failure():
    assert transpile('SELECT COUNT(*) FROM "users" AS u', "trino", "spark") == "SELECT COUNT(*) FROM `users` AS u"
    with pytest.raises(ParseFailure, match="sqlglot cannot transpile it from duckdb to spark"):
        transpile("select from where (", "duckdb", "spark")


EXPLAIN = """- Sort[count#18 DESC NULLS LAST]  (global_sort; est. rows 336)
    - Aggregate[group by [c_name#2], count#18 := count(*)]  (partial_final; est. rows 1,000)
          optimizer: eager aggregation onto [o_custkey#10]: join 498.0 KB / that side 117.2 KB = 4.25
        - InnerJoin[(o_custkey#10 = c_custkey#1)]  (broadcast_hash; inputs: - | broadcast; est. rows 15,000)
            - Scan[lake.orders]  (est. rows 15,000)
            - Scan[lake.customer]  (est. rows 1,500)
Shuffle partitions: 4
Cost profile: spark.json (fitted on 60 queries; costs 1 x 2 cores), for local mode"""


def test_a_plans_shape_keeps_operators_and_strategies_and_drops_what_moves_with_statistics():
    shape = plan_shape(EXPLAIN)
    assert shape.splitlines() == [
        "- Sort[count DESC NULLS LAST]  (global_sort)",
        "    - Aggregate[group by [c_name], count := count(*)]  (partial_final)",
        "        - InnerJoin[(o_custkey = c_custkey)]  (broadcast_hash; inputs: - | broadcast)",
        "            - Scan[lake.orders]",
        "            - Scan[lake.customer]",
        "Shuffle partitions: 4"]
    # another estimate, other column numbers: the same plan; another strategy: another plan
    assert plan_shape(EXPLAIN.replace("15,000)", "9,999)").replace("#10", "#77")) == shape
    assert plan_shape(EXPLAIN.replace("broadcast_hash", "sort_merge")) != shape


def _scan(table: str, rows: float) -> dict:
    return {"operator": "Scan", "table": table, "estimated_rows": rows, "children": []}


def test_estimates_are_keyed_by_what_a_node_computes():
    tree = {"operator": "InnerJoin", "estimated_rows": 10.0, "children": [
        _scan("lake.orders", 5.0),
        {"operator": "Filter", "estimated_rows": 2.0, "children": [_scan("lake.orders", 5.0)]}]}
    assert node_estimates(tree) == {"InnerJoin[lake.orders,lake.orders]{Filterx1}": 10.0, "Scan[lake.orders]": 5.0,
                                    "Filter[lake.orders]": 2.0, "Scan[lake.orders]#2": 5.0}
    # the same join in another order, through a projection: the same sub-plan
    swapped = {"operator": "InnerJoin", "estimated_rows": 10.0, "children": [
        {"operator": "Project", "estimated_rows": 2.0, "children": [
            {"operator": "Filter", "estimated_rows": 2.0, "children": [_scan("lake.orders", 5.0)]}]},
        _scan("lake.orders", 5.0)]}
    assert "InnerJoin[lake.orders,lake.orders]{Filterx1}" in node_estimates(swapped)
    # over an aggregation pushed below it: another sub-plan
    eager = {"operator": "InnerJoin", "estimated_rows": 3.0, "children": [
        {"operator": "Aggregate", "estimated_rows": 3.0, "children": [_scan("lake.orders", 5.0)]},
        _scan("lake.customer", 5.0)]}
    assert list(node_estimates(eager))[0] == "InnerJoin[lake.customer,lake.orders]{Aggregatex1}"
