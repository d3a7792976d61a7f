"""What an exception raised while an engine ran cbo's plan is: the engine's failure, or cbo's.

cbo binds and checks a query before any engine sees it, then hands the engine SQL (or a
DataFrame) that it generated. So an engine that cannot *parse or resolve* that SQL (DuckDB's
parser and binder errors, Spark's ParseException and AnalysisException) has found a bug in cbo:
an :class:`InternalError`. An engine that fails while *running* it (an arithmetic error, a value
that does not convert, ``raise_error`` of a scalar subquery with two rows, memory, a JDBC source
gone away, a file missing) reports something about the query, the data or the machine: an
:class:`EngineError` carrying the engine's cause. Anything not from the engine's library is cbo's
own code failing and is raised as it is.
"""

from __future__ import annotations

from cbo.errors import EngineError, InternalError

# Spark analysis errors about the files a table reads, not about cbo's SQL.
_SPARK_DATA_CONDITIONS = ("PATH_NOT_FOUND", "UNABLE_TO_INFER_SCHEMA", "FAILED_READ_FILE")


def engine_failure(engine: str, exc: BaseException, reason: str, doing: str = "query") -> Exception | None:
    """``exc`` (raised while ``engine`` ran cbo's plan; ``reason``: its cause in one line) as an
    EngineError or an InternalError; None when it is not the engine's."""
    if engine == "duckdb":
        import duckdb

        if not isinstance(exc, duckdb.Error):
            return None
        if isinstance(exc, (duckdb.ParserException, duckdb.BinderException, duckdb.SyntaxException)):
            return InternalError(f"DuckDB could not {'parse' if isinstance(exc, duckdb.ParserException) else 'bind'} "
                                 f"the SQL cbo generated: {reason}")
        return EngineError(f"{doing} failed on duckdb: {reason}")
    from pyspark.errors import AnalysisException, ParseException, PySparkException

    if isinstance(exc, ParseException):
        return InternalError(f"Spark could not parse the SQL cbo generated: {reason}")
    if isinstance(exc, AnalysisException) and not any(c in reason for c in _SPARK_DATA_CONDITIONS):
        return InternalError(f"Spark could not resolve the SQL cbo generated: {reason}")
    from py4j.protocol import Py4JError

    if isinstance(exc, (PySparkException, Py4JError)):
        return EngineError(f"{doing} failed on {engine}: {reason}")
    return None
