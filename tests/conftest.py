"""Shared test set-up.

The test session uses its own cache directory (``.cache/test`` in the checkout, or
``$CBO_TEST_CACHE_DIR``) whatever the environment holds, so it never touches a user's data or
server, and so data generated once is reused by later runs. Tests
marked ``integration`` start real engines: Spark in local mode (one session for the whole run)
and cbo's throwaway PostgreSQL (and MariaDB, for the federated3 placement).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# The same commit always runs the same cases: property tests draw from a seed derived from each
# test, and no example database carries failures from one run into the next. A failure is
# reproduced by rerunning; fresh exploration is ``HYPOTHESIS_PROFILE=explore`` (or the
# equivalence benchmark), which draws anew each run. Nor does the machine's load decide a run:
# no per-example deadline and no "generation is slow" health check, both wall-clock verdicts
# that a busy machine fails on the same cases a quiet one passes.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
TEST_CACHE = Path(os.environ.get("CBO_TEST_CACHE_DIR") or ROOT / ".cache" / "test").resolve()

# Variables that point cbo at a user's own state. A user who exported CBO_CACHE_DIR must not
# find the test data in their cache, nor their local server stopped when the run ends; their
# CBO_CATALOG, CBO_COST_PROFILE or CBO_STATS_DIR must not change what the tests plan; and their PostgreSQL
# credentials and libpq settings (PGPASSWORD, PGHOST, PGSERVICE, ...) must not reach the test
# server's connections. Set unconditionally (not setdefault) before any cbo module is imported,
# and inherited by the cbo commands that tests run as subprocesses.
USER_STATE_VARIABLES = ("CBO_CATALOG", "CBO_COST_PROFILE", "CBO_STATS_DIR")
for _name in [n for n in os.environ if n in USER_STATE_VARIABLES or n.startswith("PG")]:
    del os.environ[_name]
os.environ["CBO_CACHE_DIR"] = str(TEST_CACHE)

TEST_SF = 0.01


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    """Cases the reference engine could not answer: reported, never a failure of cbo."""
    from tests.random_tables import REFERENCE_FALLBACKS

    if not REFERENCE_FALLBACKS:
        return
    terminalreporter.section(f"reference engine fallbacks: {len(REFERENCE_FALLBACKS)}")
    for what, sql in dict.fromkeys(REFERENCE_FALLBACKS):
        label = {"sqlite": "DuckDB failed internally, SQLite answered",
                 "sqlite-plan": "DuckDB failed internally on cbo's SQL, SQLite ran it",
                 "skipped": "DuckDB failed internally and SQLite cannot run it; case not checked"}[what]
        terminalreporter.write_line(f"{label}: {sql[:160]}{' ...' if len(sql) > 160 else ''}")


_MARIADB_RUNNING_AT_START: list[bool] = []


def _test_mariadb_running() -> bool:
    if not (TEST_CACHE / "mariadb" / "server.json").exists():
        return False
    from cbo.connectors.mariadb.server import LocalMariaDB

    return LocalMariaDB(TEST_CACHE / "mariadb").status() is not None


def _test_cluster_running() -> bool:
    if not (TEST_CACHE / "spark-cluster" / "server.json").exists():
        return False
    from cbo.engines.spark_cluster import LocalSparkCluster

    return LocalSparkCluster(TEST_CACHE / "spark-cluster").status() is not None


_CLUSTER_RUNNING_AT_START: list[bool] = []


def pytest_sessionstart(session):  # type: ignore[no-untyped-def]
    _MARIADB_RUNNING_AT_START.append(_test_mariadb_running())
    _CLUSTER_RUNNING_AT_START.append(_test_cluster_running())


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    """Stop the test cache's Spark cluster (an interrupted cluster test's) and its MariaDB (a cbo
    command run as a subprocess may have started it, outside the tpch_federated3 fixture) if
    they were not running when this session began; their data stays for the next run. A server
    already running then is left alone: a nested test session (a test running pytest in a
    subprocess over the same test cache) must not stop the outer session's servers. Only
    servers whose state is under the test cache are touched."""
    if _CLUSTER_RUNNING_AT_START and not _CLUSTER_RUNNING_AT_START[0] and \
            (TEST_CACHE / "spark-cluster" / "server.json").exists():
        from cbo.engines.spark_cluster import LocalSparkCluster

        LocalSparkCluster(TEST_CACHE / "spark-cluster").stop()
    if _MARIADB_RUNNING_AT_START and not _MARIADB_RUNNING_AT_START[0] and _test_mariadb_running():
        from cbo.connectors.mariadb.server import LocalMariaDB

        LocalMariaDB(TEST_CACHE / "mariadb").stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def tpch_catalogs() -> Iterator[dict[str, Path]]:
    """TPC-H at SF 0.01 in Parquet and the local PostgreSQL, with the three placement catalogs.

    The test run's server is stopped at the end; its cluster stays for the next run. It is
    named by the test cache's path, so no other server is ever stopped.
    """
    from cbo.connectors.postgres.server import LocalPostgres
    from cbo.workloads import tpch

    yield tpch.prepare(TEST_SF, postgres="local")
    LocalPostgres(TEST_CACHE / "postgres").stop()


@pytest.fixture(scope="session")
def tpch_federated3(tpch_catalogs) -> Iterator[Path]:
    """The federated3 catalog at SF 0.01: PostgreSQL and cbo's throwaway MariaDB of the test
    cache (stopped at the end, its data kept for the next run) beside the Parquet files."""
    from cbo.connectors.mariadb.server import LocalMariaDB
    from cbo.workloads import tpch

    yield tpch.prepare(TEST_SF, postgres="local", mariadb="local")["federated3"]
    LocalMariaDB(TEST_CACHE / "mariadb").stop()


@pytest.fixture(scope="session")
def spark():
    """The one Spark session of the test run (starting one takes about 9 s)."""
    from cbo.sources.catalog import SparkSettings
    from cbo.engines.spark import spark_session, stop_session

    session = spark_session(SparkSettings(master="local[2]", driver_memory="4g",
                                          conf={"spark.sql.shuffle.partitions": "4"}))
    yield session
    stop_session()


@pytest.fixture(scope="session")
def tpch_parquet_catalog() -> Path:
    """TPC-H at SF 0.01 as Parquet only (no engine started): the all-spark catalog."""
    from cbo.paths import cache_dir, scale_factor_label
    from cbo.workloads import tpch

    dataset, _ = tpch.generate(TEST_SF, cache_dir() / "tpch" / scale_factor_label(TEST_SF))
    directory = dataset.directory / "catalogs-parquet"
    return tpch.write_catalogs(dataset, None, directory)["all-spark"]


@pytest.fixture(scope="session")
def tpcds_parquet_catalog() -> Path:
    """TPC-DS at SF 0.01 as Parquet only (no engine started): the all-spark catalog."""
    from cbo.paths import cache_dir, scale_factor_label
    from cbo.workloads import tpcds

    dataset, _ = tpcds.generate(TEST_SF, cache_dir() / "tpcds" / scale_factor_label(TEST_SF))
    directory = dataset.directory / "catalogs-parquet"
    return tpcds.write_catalogs(dataset, None, directory)["all-spark"]
