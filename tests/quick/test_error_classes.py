"""Three kinds of failure, told apart: the user's (one located line, exit 2), the engine's (its
cause, exit 2) and cbo's own bugs (an internal error, exit 1, the traceback under --debug).
The engine's exceptions here are DuckDB's own, raised by running SQL on it."""

from __future__ import annotations

import duckdb
import pytest

from cbo.app import cli
from cbo.app.failures import engine_failure
from cbo.app.session import Session
from cbo.errors import CboError, EngineError, InternalError
from cbo.sources.catalog import load_catalog


def raised(sql: str) -> Exception:
    with pytest.raises(duckdb.Error) as caught:
        duckdb.connect().execute(sql).fetchall()
    return caught.value


def test_sql_the_engine_cannot_parse_or_bind_is_cbos_bug():
    for sql in ("select from from", "select c1 from (select 1 as c2) t"):
        failure = engine_failure("duckdb", raised(sql), "cause")
        assert isinstance(failure, InternalError) and not isinstance(failure, CboError)
        assert "the SQL cbo generated" in str(failure)


def test_a_failure_while_running_is_the_engines():
    for sql in ("select 1 // 0", "select cast('x' as integer)", "select error('scalar subquery returned more than one row')"):
        failure = engine_failure("duckdb", raised(sql), "the cause")
        assert isinstance(failure, EngineError) and str(failure) == "query failed on duckdb: the cause"


def test_cbos_own_exceptions_are_not_the_engines():
    assert engine_failure("duckdb", KeyError("c1"), "c1") is None
    assert engine_failure("duckdb", AssertionError("no plan"), "no plan") is None


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


def test_a_bug_while_rendering_is_not_reported_as_a_query_failure(catalog, monkeypatch):
    from cbo import sqlgen

    def broken(self, plan, names=None):  # type: ignore[no-untyped-def]
        raise KeyError("a column the renderer lost")

    monkeypatch.setattr(sqlgen.SqlRenderer, "statement", broken)
    with pytest.raises(KeyError):
        Session(catalog, engine="duckdb").query("select n_name from nation")


def test_the_cli_reports_each_kind(catalog, monkeypatch, capsys):
    from cbo import sqlgen

    code = cli.main(["query", "--catalog", str(catalog.path), "--engine", "duckdb", "select 1 / 0"])
    assert code == 2 and capsys.readouterr().err.strip().startswith("cbo: error: query failed on duckdb: ")

    code = cli.main(["query", "--catalog", str(catalog.path), "--engine", "duckdb", "select x from nation"])
    assert code == 2 and "unknown column 'x'" in capsys.readouterr().err

    def broken(self, plan, names=None):  # type: ignore[no-untyped-def]
        raise InternalError("DuckDB could not bind the SQL cbo generated: Binder Error: c1")

    monkeypatch.setattr(sqlgen.SqlRenderer, "statement", broken)
    code = cli.main(["query", "--catalog", str(catalog.path), "--engine", "duckdb", "select n_name from nation"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("cbo: internal error: InternalError: DuckDB could not bind"), err
    assert "Traceback" not in err
    code = cli.main(["--debug", "query", "--catalog", str(catalog.path), "--engine", "duckdb", "select 1 from nation"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" in err and err.strip().splitlines()[-1].startswith("cbo: internal error:")
