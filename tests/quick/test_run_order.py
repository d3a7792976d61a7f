"""``benchmarks.tpch.run``: the configuration that runs first on a query (on cold caches) has a
throwaway cold run before the warm-ups, so no configuration's kept or counted time is a cold one,
and which configuration goes first rotates from query to query (recorded in the JSON)."""

from __future__ import annotations

from benchmarks.tpch.run import Baselines, rotated, run_query
from cbo.workloads.tpch_queries import Query

CONFIGS = ["spark-default", "spark-dsv2", "postgres"]   # all run through Baselines.runner
ROWS = [(1,)]


class FakeBaselines(Baselines):
    """Every configuration 'runs' by logging its name and answering ROWS."""

    def __init__(self) -> None:
        super().__init__(tables=None, postgres=None, jdbc=True)  # type: ignore[arg-type]
        self.calls: list[str] = []

    def runner(self, config: str, sql: str):  # type: ignore[no-untyped-def]
        def run() -> list[tuple]:
            self.calls.append(config)
            return ROWS
        return run


class FakeReference:
    def run(self, sql: str):  # type: ignore[no-untyped-def]
        return None, ROWS, None


def _run(number: int, long_warm_up: float | None, repeat: int = 2) -> tuple[dict, list[str]]:
    baselines = FakeBaselines()
    record = run_query(Query(f"q{number:02d}", "select 1"), CONFIGS, repeat, {}, baselines, FakeReference(),
                       max_rounds=repeat, budget=0.0, long_warm_up=long_warm_up)
    return record, baselines.calls


def test_the_order_rotates_with_the_query_number():
    assert [_run(n, None)[0]["order"][0] for n in (1, 2, 3, 4)] == \
        ["spark-default", "spark-dsv2", "postgres", "spark-default"]
    assert rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    assert rotated([], 3) == []


def test_the_first_configuration_runs_once_cold_then_warms_up_and_runs_rounds_like_the_others():
    record, calls = _run(2, None, repeat=2)
    order = ["spark-dsv2", "postgres", "spark-default"]
    assert record["order"] == order
    # cold run, the warm-ups in order, then round 0 (same order) and round 1 (one further on)
    assert calls == ["spark-dsv2"] + order + order + ["postgres", "spark-default", "spark-dsv2"]
    assert {c: len(t) for c, t in record["times"].items()} == {c: 2 for c in CONFIGS}
    assert all(record["matches"].values()) and "cold_run_s" in record


def test_with_long_warm_up_the_cold_run_is_never_the_kept_time():
    # every warm-up "takes longer" than 0 s: each configuration keeps exactly its warm-up run,
    # which for the first one is its second run, not the cold one
    record, calls = _run(3, 0.0)
    assert record["order"][0] == "postgres"
    assert calls == ["postgres", "postgres", "spark-default", "spark-dsv2"]
    assert record["warm_up_kept"] == sorted(CONFIGS)
    assert {c: len(t) for c, t in record["times"].items()} == {c: 1 for c in CONFIGS}
