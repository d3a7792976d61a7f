"""``cbo.tpch_catalog``: the notebooks' data, in the cache ``$CBO_CACHE_DIR`` names (the test
cache here), with statistics; and the session's view of those statistics."""

from __future__ import annotations

import pytest

import cbo
from cbo.paths import cache_dir
from tests.conftest import TEST_CACHE


def test_tpch_catalog_lives_in_the_cache_with_statistics(spark):
    catalog = cbo.tpch_catalog(sf=0.01)
    assert cache_dir() == TEST_CACHE and catalog.is_relative_to(TEST_CACHE)
    assert catalog.name == "all-spark.toml"
    lines: list[str] = []
    assert cbo.tpch_catalog(sf=0.01, progress=lines.append) == catalog
    # The second call finds everything: no table is collected again.
    assert not [line for line in lines if "collecting" in line], lines

    session = cbo.Session(catalog, engine="duckdb")
    part = session.statistics("part")
    assert part.row_count == 2000
    size = part.columns["p_size"]
    assert size.distinct == pytest.approx(50, rel=0.05) and (size.mcv or size.histogram)
    figure = session.statistics_figure("part.p_size")
    assert figure.axes and "p_size" in figure.axes[0].get_title()
    with pytest.raises(cbo.CboError, match="no column 'p_sizes'"):
        session.statistics_figure("part.p_sizes")
    with pytest.raises(cbo.CboError, match="TABLE.COLUMN"):
        session.statistics_figure("p_size")


def test_federated3_catalog_and_its_pushdown_records(tpch_federated3):
    """``cbo.tpch_catalog(placement="federated3")`` over the servers ``cbo.LocalServers`` starts
    (here already running: the fixture's, which it must leave running), and
    ``Session.pushdown`` naming what Q5 sends to each source."""
    from benchmarks.tpch.queries import all_queries

    servers = cbo.LocalServers("postgres", "mariadb").start()
    assert servers.started == [] and servers.running() == {"postgres": True, "mariadb": True}
    catalog = cbo.tpch_catalog(sf=0.01, placement="federated3")
    assert catalog == tpch_federated3
    q5 = next(q.sql for q in all_queries() if q.name == "q05")
    records = cbo.Session(catalog).pushdown(q5)
    assert {(r.source, r.dialect) for r in records if r.pushed} == {("pg", "postgres"), ("maria", "mysql")}
    for record in records:
        assert record.sql.upper().startswith("SELECT") and record.tables
        assert all(t.startswith(record.source + ".") for t in record.tables)
    assert servers.stop() == [] and all(servers.running().values())


def test_bad_placement_and_server_names_are_errors():
    with pytest.raises(cbo.CboError, match="unknown placement 'lake'"):
        cbo.tpch_catalog(sf=0.01, placement="lake")
    with pytest.raises(cbo.CboError, match="unknown server 'oracle'"):
        cbo.LocalServers("postgres", "oracle")
