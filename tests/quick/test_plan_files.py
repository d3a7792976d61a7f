"""Chosen plans pinned as data files (tests/testdata/plans), at TPC-H SF 1 statistics.

The statistics are the SF 1 tables' stored statistics without their row samples
(tests/testdata/stats/tpch-sf1); the catalog is the SF 0.01 Parquet one, for the schema only.
``CBO_REWRITE=1`` rewrites the expected plans instead of comparing (see tests/plan_files.py).
"""

from __future__ import annotations

import os

import pytest

from cbo.sources.catalog import load_catalog
from cbo.estimate import Estimator
from cbo.app.explain import add_estimate, add_physical_details, describe, to_text
from cbo.planner import Planner
from stats.store import StatsStore
from tests.plan_files import PLANS, TPCH_STATS, Case, read_cases, write_cases

FILES = sorted(PLANS.glob("*.test"))
REWRITE = os.environ.get("CBO_REWRITE") == "1"


@pytest.fixture(scope="module")
def estimator() -> Estimator:
    store = StatsStore(TPCH_STATS)
    stats = {}
    for table in store.tables():
        loaded = store.load(table)
        assert loaded.stats is not None, loaded.problem
        stats[table] = loaded.stats
    assert len(stats) == 8
    return Estimator(stats)


def chosen_plan(case: Case, catalog_path, estimator: Estimator) -> str:  # type: ignore[no-untyped-def]
    planner = Planner(load_catalog(catalog_path), estimator=estimator, settings=case.optimizer_settings())
    planned = planner.plan(case.sql)

    def annotate(node, info):  # type: ignore[no-untyped-def]
        add_estimate(info, node, planned)
        add_physical_details(info, node, planned.operator(node))

    info = describe(planned.plan, annotate)
    info.details["shuffle_partitions"] = planned.partitions
    return to_text(info)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_plan_file(path, tpch_parquet_catalog, estimator):
    cases = read_cases(path)
    assert cases, f"{path} has no cases"
    outputs = {case.line: chosen_plan(case, tpch_parquet_catalog, estimator) for case in cases}
    if REWRITE:
        write_cases(path, cases, outputs)
        return
    for case in cases:
        assert outputs[case.line] == case.expected, (
            f"{case.name}: the chosen plan changed (CBO_REWRITE=1 rewrites the file; review the diff)\n"
            f"expected:\n{case.expected}\nactual:\n{outputs[case.line]}")
