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


def test_spark_refusing_cbos_sql_is_cbos_bug_and_a_failed_job_is_the_engines(spark):
    """``cbo.app.failures``: Spark's own exceptions, classified."""
    from cbo.app.failures import engine_failure
    from cbo.engines.spark import spark_failure
    from cbo.errors import EngineError, InternalError

    for sql in ("select no_such_column from range(3)", "select from from"):
        with pytest.raises(Exception) as caught:
            spark.sql(sql).collect()
        failure = engine_failure("spark", caught.value, spark_failure(caught.value) or "")
        assert isinstance(failure, InternalError) and "the SQL cbo generated" in str(failure), failure
    with pytest.raises(Exception) as caught:
        spark.sql("select 1 div (id - id) from range(3)").collect()
    failure = engine_failure("spark", caught.value, spark_failure(caught.value) or "")
    assert isinstance(failure, EngineError) and str(failure).startswith("query failed on spark: Division by zero")
