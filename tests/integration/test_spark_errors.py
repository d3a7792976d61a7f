"""Spark's failures reduced to their cause in one line (``cbo.engines.spark.spark_failure``)."""

from __future__ import annotations

import pytest


def test_a_failed_job_gives_spark_s_condition_and_message(spark):
    with pytest.raises(Exception) as caught:  # a Py4J error: "An error occurred while calling oNN..."
        spark.sql("select 1 div (id - id) from range(3)").collect()
    from cbo.engines.spark import spark_failure

    reason = spark_failure(caught.value)
    assert reason is not None and "\n" not in reason
    assert reason.startswith("Division by zero") and reason.endswith("(DIVIDE_BY_ZERO)"), reason
    assert "SQLSTATE" not in reason and "collectToPython" not in reason


def test_an_analysis_error_gives_its_condition(spark):
    with pytest.raises(Exception) as caught:  # PySpark's AnalysisException
        spark.sql("select no_such_column from range(3)").collect()
    from cbo.engines.spark import spark_failure

    reason = spark_failure(caught.value)
    assert reason is not None and reason.endswith("(UNRESOLVED_COLUMN.WITH_SUGGESTION)"), reason
    assert "no_such_column" in reason


def test_other_errors_are_not_spark_s():
    from cbo.engines.spark import spark_failure

    assert spark_failure(ValueError("x")) is None
