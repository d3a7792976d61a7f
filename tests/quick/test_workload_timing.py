"""The workload runner's timing rules (``cbo.app.workload.timing``), which ``cbo workload run`` and
``benchmarks.tpch.run`` share: a cold run before the warm-ups that is never kept, the order
rotated by the query's position and round and reversed every other round, more rounds for short
queries, ``--long-warm-up`` deciding for the whole query, and failures and timeouts recorded by
kind without stopping the other configurations.

The runs here are plain Python functions that log their configuration and answer fixed rows on a
fake clock: this checks the bookkeeping of the rules, not any engine (the integration tests run
the rules on Spark, DuckDB and PostgreSQL)."""

from __future__ import annotations

import pytest

from cbo.app.workload.timing import (
    ParseFailure,
    RunTimedOut,
    Timed,
    TimingRules,
    measure,
    new_record,
    planned_rounds,
    rotated,
)
from cbo.errors import CboError

CONFIGS = ["spark-default", "spark-dsv2", "postgres"]
ROWS = [(1,)]


class Fake:
    """Each configuration takes its given seconds on a fake clock and answers ROWS (or what
    ``answers`` says), logging its runs."""

    def __init__(self, seconds: dict[str, float] | None = None, answers: dict | None = None):
        self.seconds = seconds or {}
        self.answers = answers or {}
        self.calls: list[str] = []
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def runs(self, configs: list[str]) -> dict:
        def run(config: str):  # type: ignore[no-untyped-def]
            def go():  # type: ignore[no-untyped-def]
                self.calls.append(config)
                self.now += self.seconds.get(config, 0.0)
                answer = self.answers.get(config, ROWS)
                if isinstance(answer, BaseException):
                    raise answer
                return answer
            return go
        return {c: run(c) for c in configs}


def _measure(position: int, fake: Fake, configs: list[str] = CONFIGS, repeat: int = 2,
             long_warm_up: float | None = None, expected=ROWS, budget: float = 0.0) -> dict:  # type: ignore[no-untyped-def]
    rules = TimingRules(repeat=repeat, max_rounds=repeat, budget_s=budget, long_warm_up_s=long_warm_up)
    return measure(new_record("q"), position, fake.runs(configs), expected, False, rules, clock=fake.clock)


def test_the_order_rotates_with_the_query_position():
    assert [_measure(n, Fake())["order"][0] for n in (0, 1, 2, 3)] == \
        ["spark-default", "spark-dsv2", "postgres", "spark-default"]
    assert rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    assert rotated([], 3) == []


def test_the_first_configuration_runs_once_cold_then_warms_up_and_runs_rounds_like_the_others():
    fake = Fake()
    record = _measure(1, fake)
    order = ["spark-dsv2", "postgres", "spark-default"]
    assert record["order"] == order
    # cold run, the warm-ups in order, then round 0 (same order) and round 1 (one further on,
    # reversed: spark-default now runs after postgres's successor, not after postgres)
    assert fake.calls == ["spark-dsv2"] + order + order + ["spark-dsv2", "spark-default", "postgres"]
    assert {c: len(t) for c, t in record["times"].items()} == {c: 2 for c in CONFIGS}
    assert all(record["matches"].values()) and "cold_run_s" in record and record["checked"] is True


def test_with_long_warm_up_the_cold_run_is_never_the_kept_time():
    # every warm-up "takes longer" than 0 s: each configuration keeps exactly its warm-up run,
    # which for the first one is its second run, not the cold one
    fake = Fake({c: 1.0 for c in CONFIGS})
    record = _measure(2, fake, long_warm_up=0.0)
    assert record["order"][0] == "postgres"
    assert fake.calls == ["postgres", "postgres", "spark-default", "spark-dsv2"]
    assert record["warm_up_kept"] == sorted(CONFIGS)
    assert {c: len(t) for c, t in record["times"].items()} == {c: 1 for c in CONFIGS}


def test_long_warm_ups_are_kept_for_the_whole_query_or_not_at_all():
    # two configurations over the 5 s limit, one just under it: none is kept (a per-configuration
    # rule kept 7.7 s for one plan and gave its twin at 4.9 s the best of its rounds)
    fake = Fake({"spark-default": 7.7, "spark-dsv2": 4.9, "postgres": 6.0})
    record = _measure(0, fake, long_warm_up=5.0)
    assert "warm_up_kept" not in record
    assert {c: len(t) for c, t in record["times"].items()} == {c: 2 for c in CONFIGS}
    assert len(fake.calls) == 1 + 3 + 2 * 3
    # every one over the limit: each keeps its warm-up and does not run again
    fake = Fake({"spark-default": 7.7, "spark-dsv2": 5.1, "postgres": 6.0})
    record = _measure(0, fake, long_warm_up=5.0)
    assert record["warm_up_kept"] == sorted(CONFIGS)
    assert record["seconds"] == {"spark-default": 7.7, "spark-dsv2": 5.1, "postgres": 6.0}
    assert len(fake.calls) == 1 + 3


def test_short_queries_get_more_timed_rounds():
    assert planned_rounds(3, 9, 10.0, 1.6) == 6      # a 0.4 s query in four configurations
    assert planned_rounds(3, 9, 10.0, 0.2) == 9      # capped
    assert planned_rounds(3, 9, 10.0, 20.0) == 3     # long queries keep --repeat
    assert planned_rounds(1, 9, 0.0, 1.0) == 1       # no budget: exactly --repeat
    fake = Fake({c: 0.1 for c in CONFIGS})   # a warm-up round of 0.3 s fits 5 rounds in 1.65 s
    record = measure(new_record("q"), 0, fake.runs(CONFIGS), ROWS, False, TimingRules(2, 9, 1.65), clock=fake.clock)
    assert record["rounds"] == 5 and all(len(t) == 5 for t in record["times"].values())


def test_failures_are_recorded_by_kind_and_the_others_run_on():
    answers = {"spark-default": ParseFailure("sqlglot cannot transpile it"), "spark-dsv2": [(2,)],
               "postgres": RunTimedOut(0.5)}
    fake = Fake(answers=answers)
    record = _measure(0, fake, configs=CONFIGS + ["duckdb"])
    assert record["failures"] == {"spark-default": "parse", "spark-dsv2": "wrong_answer", "postgres": "timeout"}
    assert record["problems"]["spark-default"] == "sqlglot cannot transpile it"
    assert record["problems"]["spark-dsv2"]   # the comparison's detail
    assert record["timeouts"] == {"postgres": 0.5} and "postgres" not in record["times"]
    assert record["matches"]["spark-dsv2"] is False and record["matches"]["duckdb"] is True
    assert set(record["seconds"]) == {"duckdb"}
    # a failed or timed-out configuration is not run again: the parse failure showed at its
    # warm-up (after the unchecked cold run), the wrong answer at its first timed run, the
    # timeout at its warm-up
    assert fake.calls.count("postgres") == 1 and fake.calls.count("spark-default") == 2
    assert fake.calls.count("spark-dsv2") == 2 and fake.calls.count("duckdb") == 3


def test_an_error_is_an_error_and_no_reference_means_unchecked():
    fake = Fake(answers={"postgres": CboError("query failed on postgres: division by zero")})
    record = _measure(0, fake, expected=None)
    assert record["failures"] == {"postgres": "error"}
    assert record["problems"]["postgres"] == "query failed on postgres: division by zero"
    assert record["checked"] is False and record["matches"] == {"postgres": False}


def test_a_run_measured_elsewhere_reports_its_own_seconds():
    fake = Fake(answers={"a": Timed(ROWS, 0.25)}, seconds={"a": 10.0})
    record = _measure(0, fake, configs=["a"])
    assert record["times"] == {"a": [0.25, 0.25]} and record["seconds"] == {"a": 0.25}


def test_rules_are_checked():
    with pytest.raises(CboError, match="at least 1"):
        TimingRules(repeat=0)
    assert TimingRules.from_json(TimingRules(2, 5, 3.0, 9.0).to_json()) == TimingRules(2, 5, 3.0, 9.0)
