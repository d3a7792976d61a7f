"""Rule tests as data: each rule fires where its file says and not where it says not
(``tests/rule_files.py`` describes the format; ``CBO_REWRITE=1`` rewrites the outputs)."""

from __future__ import annotations

import os
from functools import lru_cache

import pytest

from cbo.answers import compare
from cbo.sources.catalog import load_catalog
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.estimate import Estimator
from cbo.app.explain import add_estimate, add_physical_details, describe, to_text
from cbo.memo.render import memo_text
from cbo.planner import Planner
from cbo.sources.schema import SchemaProvider
from cbo.sqlgen import to_sql
from stats.store import StatsStore
from tests.rule_files import RULES, STATS, RuleCase, read_rule_cases, scaled, with_jdbc_source, write_rule_cases

FILES = sorted(RULES.glob("*.test"))
REWRITE = os.environ.get("CBO_REWRITE") == "1"


@lru_cache(maxsize=None)
def _stored(name: str) -> dict:  # type: ignore[type-arg]
    if name == "none":
        return {}
    store = StatsStore(STATS / name)
    found = {}
    for table in store.tables():
        loaded = store.load(table)
        assert loaded.stats is not None, loaded.problem
        found[table] = loaded.stats
    assert found, f"no statistics named {name!r} in {STATS}"
    return found


def estimator_for(case: RuleCase, stats: dict | None = None) -> Estimator:  # type: ignore[type-arg]
    stats = dict(_stored(case.stats)) if stats is None else stats
    for table, rows in case.rows.items():
        names = [t for t in stats if t == table or t.endswith("." + table)]
        assert len(names) == 1, f"{case.name}: rows:{table} names no table of the statistics ({', '.join(stats)})"
        stats[names[0]] = scaled(stats[names[0]], rows)
    return Estimator(stats)


def run_case(case: RuleCase, catalog_path, duckdb: DuckDBEngine) -> tuple[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    catalog, stats = with_jdbc_source(load_catalog(catalog_path), dict(_stored(case.stats)), case)
    estimator = estimator_for(case, stats)
    # Columns from the Parquet files (a JDBC table of a case has them as its copy).
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True), estimator=estimator,
                      settings=case.optimizer_settings())
    planned = planner.plan(case.sql)
    assert planned.optimized is not None
    # Whatever the rules did, the chosen plan answers as the query does (TPC-H SF 0.01 data).
    _, expected, _ = duckdb.run(case.sql)
    _, actual, _ = duckdb.run(to_sql(planned.plan, planned.names, "duckdb"))
    verdict = compare(expected, actual, ordered=False)
    assert verdict.matches, f"{case.name}: the chosen plan's answer differs: {verdict.detail}"
    if case.directive == "memo":
        # The first line carries the search's time; the rest is deterministic (blank lines end a case).
        lines = memo_text(planned.optimized).splitlines()[1:]
        return "\n".join(line for line in lines if line.strip()), planned.optimized.counters.fired

    def annotate(node, info):  # type: ignore[no-untyped-def]
        add_estimate(info, node, planned)   # the memo group's estimate, as EXPLAIN shows it
        add_physical_details(info, node, planned.operator(node))

    # What planning ignored (a malformed hint), as EXPLAIN shows it.
    warnings = [f"Warning: {w}" for w in planned.warnings]
    return "\n".join([to_text(describe(planned.plan, annotate))] + warnings), planned.optimized.counters.fired


@pytest.fixture(scope="module")
def duckdb(tpch_parquet_catalog) -> DuckDBEngine:
    return DuckDBEngine(load_catalog(tpch_parquet_catalog))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_rule_file(path, tpch_parquet_catalog, duckdb):
    cases = read_rule_cases(path)
    assert cases, f"{path} has no cases"
    outputs = {}
    for case in cases:
        output, fired = run_case(case, tpch_parquet_catalog, duckdb)
        for rule in case.expect:
            assert rule in fired, f"{case.name}: {rule} did not fire (fired: {', '.join(sorted(fired)) or 'none'})"
        for rule in case.expect_not:
            assert rule not in fired, f"{case.name}: {rule} fired ({fired[rule]} times) where it must not"
        outputs[case.line] = output
    if REWRITE:
        write_rule_cases(path, cases, outputs)
        return
    for case in cases:
        assert outputs[case.line] == case.expected, (
            f"{case.name}: the output changed (CBO_REWRITE=1 rewrites the file; review the diff)\n"
            f"expected:\n{case.expected}\nactual:\n{outputs[case.line]}")


def test_every_rule_has_cases_where_it_fires_and_where_it_does_not():
    from cbo.memo.search import default_rules

    fires: set[str] = set()
    does_not: set[str] = set()
    for path in FILES:
        for case in read_rule_cases(path):
            fires.update(case.expect)
            does_not.update(case.expect_not)
    names = set(default_rules().names())
    assert names <= fires, f"rules without an expect= case: {sorted(names - fires)}"
    assert names - set(ALWAYS_FIRES) <= does_not, f"rules without an expect-not= case: {sorted(names - does_not)}"


# Rules no query can avoid, with the reason.
ALWAYS_FIRES = {
    "ImplementProject": "every bound query has a Project at the top (the output's names and order)",
}
