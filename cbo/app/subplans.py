"""Sub-plan export (``cbo subplans QUERY --out FILE``) and what the set of sub-plans depends on.

The export lists every sub-plan the search asks an estimate of, in the order first asked: its
canonical key and description (``cbo.estimate.subplan``), cbo's estimate, the SQL that counts
it, and an empty ``rows`` to fill in. ``cardinalities=file:FILE`` reads it back; a sub-plan
left empty keeps cbo's estimate. The memo's groups nobody asked about (none, today) are listed
too, marked ``"asked": false``.

**Does the set depend on the values given?** The groups of the memo are made by exploration,
which for most rules reads only the plan: join enumeration makes every connected join set of a
region, whatever it costs. Three decisions read estimates, and where one of them was taken for
this query the export says so (``value_dependent``), because other rows can then make the
search ask about sub-plans this file does not hold (they fall back to cbo's estimates):

* greedy join ordering, for regions above ``max_reordered_joins`` relations or
  ``max_join_pairs`` pairs: the greedy order joins the pair of smallest estimated result first;
* eager aggregation (``EagerAggregation``) and the semi join's DISTINCT below
  (``SemiJoinToInnerDistinctBelow``): the byte-reduction threshold
  (``push_aggregation_below_join_byte_reduction_threshold``) compares estimated bytes, unless
  it is 0 (never push) or infinite (always);
* a wall-clock budget (``search_time_limit_ms``), which stops exploration where time runs out.

``tests/quick/test_research.py`` holds the rest: for queries without these, the set asked under
distorted and injected rows is the exported set.
"""

from __future__ import annotations

import math
from typing import Any

from cbo.planner import PlannedQuery, Planner

FORMAT = "cbo-subplans/1"


def value_dependence(planned: PlannedQuery, planner: Planner) -> list[str]:
    """Why the set of sub-plans this query's search asks about could change with the rows
    given (empty when it cannot)."""
    assert planned.optimized is not None
    counters = planned.optimized.counters
    settings = planner.settings
    reasons = []
    if counters.heuristic_regions:
        reasons.append(f"greedy join ordering in {counters.heuristic_regions} join region(s) above "
                       f"max_reordered_joins={settings.max_reordered_joins} or max_join_pairs="
                       f"{settings.max_join_pairs}: which join sets exist depends on the estimates")
    threshold = settings.push_aggregation_below_join_byte_reduction_threshold
    if 0 < threshold < math.inf:
        for rule, what in (("EagerAggregation", "eager aggregation"),
                           ("SemiJoinToInnerDistinctBelow", "the semi join's DISTINCT below")):
            if counters.by_rule.get(rule):
                reasons.append(f"{what} ({rule}) is decided by estimated bytes "
                               f"(push_aggregation_below_join_byte_reduction_threshold={threshold:g})")
    if settings.search_time_limit_ms is not None:
        reasons.append(f"search_time_limit_ms={settings.search_time_limit_ms:g} stops exploration by time")
    return reasons


def export(planner: Planner, sql: str) -> dict[str, Any]:
    """The sub-plans of ``sql`` as ``cbo subplans`` writes them (a JSON document)."""
    from cbo.estimate.plugin import PluggedContext

    planned, coverage = planner.subplans(sql)
    assert planned.optimized is not None
    context = planned.optimized.memo.estimator
    assert isinstance(context, PluggedContext)
    entries = []
    for answer in coverage.answers.values():
        entries.append({**answer.subplan.to_json(), "estimate": answer.estimated, "asked": True, "rows": None})
    asked = set(coverage.answers)
    for group in planned.optimized.memo.groups:
        if group.merged_into is not None:
            continue
        subplan = context.subplan(group.first)
        if subplan.key not in asked:
            asked.add(subplan.key)
            entries.append({**subplan.to_json(), "estimate": None, "asked": False, "rows": None})
    dependence = value_dependence(planned, planner)
    return {"format": FORMAT, "query": sql, "settings": _settings(planner),
            "value_dependent": dependence,
            "stable": not dependence,
            "note": "fill in rows (or give key -> rows) and plan with --set cardinalities=file:THIS_FILE; "
                    "a sub-plan without rows keeps cbo's estimate",
            "subplans": entries}


def _settings(planner: Planner) -> dict[str, Any]:
    from cbo.settings import settings_record

    return settings_record(planner.settings)


__all__ = ["FORMAT", "export", "value_dependence"]
