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
