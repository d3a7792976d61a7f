"""The equivalence benchmark's ``pushdown`` family, a few seeded cases (the large runs are
``python -m benchmarks.equivalence --family pushdown``): real PostgreSQL and MariaDB servers of
the test cache, Spark, and the three join pushdown strategies against DuckDB."""

from __future__ import annotations

from benchmarks.equivalence.__main__ import Run
from benchmarks.equivalence.pushdown import STRATEGIES, PushdownChecker
from tests.conftest import TEST_CACHE


def test_a_few_seeded_pushdown_cases_match(spark, tmp_path):  # type: ignore[no-untyped-def]
    checker = PushdownChecker(tmp_path, TEST_CACHE / "equivalence")
    try:
        run = Run("pushdown", checker, checker.cases(), None)
        run.batch(3, seed=5)
    finally:
        checker.close(stop_spark=False)
    # each of a case's queries over its rows counts as a case
    assert run.cases >= 3 and not run.failures, run.failures
    assert len(run.distinct) <= run.cases and run.by_reference
    unanswered = checker.reference_counts()["unanswered"]
    assert run.plans == (run.cases - unanswered) * len(STRATEGIES)
