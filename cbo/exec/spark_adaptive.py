"""Spark's adaptive query execution (AQE), kept to the parts that leave cbo's plan as planned.

With AQE on, Spark runs a query stage by stage (``AdaptiveSparkPlanExec``): each exchange
becomes a query stage, and when one finishes, the rest of the plan is re-optimized by a small
logical optimizer (``AQEOptimizer``) and planned again with the finished stages' exact sizes;
each new stage then gets physical rewrites of how its shuffles are read. Which of these change
cbo's plan, and what the executor sets (``adaptive_settings``):

* **Re-planning keeps cbo's joins.** Only ``AQEOptimizer`` runs again, never Catalyst's join
  reordering, so the join order stays; and every join cbo plans carries its strategy as a hint
  (``cbo.exec.spark_sql``), which Spark's join selection obeys before any size rule. Two AQE
  parts act on joins without a strategy hint (on the unhinted side of a join, or on the
  null-aware anti join Spark plans itself): AQE's broadcast conversion from runtime sizes (off:
  ``spark.sql.adaptive.autoBroadcastJoinThreshold=-1``) and the rule that demotes a broadcast
  whose input has many empty partitions (``DynamicJoinSelection``, ``DemoteBroadcastHashJoin``
  in some builds; excluded), which in Apache Spark also prefers a shuffled hash join where every
  partition is small (``maxShuffledHashJoinLocalMapThreshold=0``). The physical rewrite of a
  sort-merge join into a shuffled hash join some builds have skips hinted joins; it is switched
  off all the same. Re-optimization also drops a LIMIT that cannot cut and a sort or grouping
  over one row (``EliminateLimits``, ``OptimizeOneRowPlan``): no-ops on the data at hand.
* ``coalesce`` (``spark.sql.adaptive.coalescePartitions.enabled``, ``CoalesceShufflePartitions``):
  a shuffle's contiguous small partitions are read as one task (by default Spark merges only
  partitions under 1 MiB, keeping parallelism). The operators stay; a stage runs fewer, larger
  tasks than the partition count cbo costed with, which it starts from
  (``coalescePartitions.initialPartitionNum``).
* ``skew_join`` (``spark.sql.adaptive.skewJoin.enabled``, ``OptimizeSkewedJoin``): a partition of
  a sort-merge or shuffled hash join five times the median and over 256 MiB is split, the other
  side's partition read once per piece. Same join, same strategy; never when it would need an
  extra shuffle (``forceOptimizeSkewedJoin`` stays off).
* ``local_read`` (``spark.sql.adaptive.localShuffleReader.enabled``,
  ``OptimizeShuffleWithLocalRead``): a shuffle whose partitioning nothing above needs (the
  probe side of a broadcast join sitting on a shuffle) is read map-side, without fetching; Spark
  undoes it where it would need another shuffle. Under cbo's plans it seldom applies.
* ``empty_relation`` (``AQEPropagateEmptyRelation``): a finished stage with no rows, or the
  broadcast input of a single-column NOT IN that holds a NULL, makes Spark replace what it
  proves empty by an empty relation (an inner join with an empty input, an aggregation with
  groups over nothing, everything above up to a boundary), so the stages below it never run.
  It removes work and keeps the answer, and the operators that still run are cbo's, with
  their strategies: plan-preserving in the sense that matters. Off, the rule is excluded.

Every feature off (``spark_adaptive=off``) is AQE off, the plan run exactly as planned.
"""

from __future__ import annotations

from cbo.settings import AdaptiveFeature

# AQE's logical rules that choose join strategies from runtime sizes, by Spark version.
JOIN_SELECTION_RULES = ("org.apache.spark.sql.execution.adaptive.DynamicJoinSelection",
                        "org.apache.spark.sql.execution.adaptive.DemoteBroadcastHashJoin")
EMPTY_RELATION_RULE = "org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation"
EXCLUDED_RULES = "spark.sql.adaptive.optimizer.excludedRules"

_SWITCHES = {AdaptiveFeature.COALESCE: "spark.sql.adaptive.coalescePartitions.enabled",
             AdaptiveFeature.SKEW_JOIN: "spark.sql.adaptive.skewJoin.enabled",
             AdaptiveFeature.LOCAL_READ: "spark.sql.adaptive.localShuffleReader.enabled"}


def adaptive_settings(features: frozenset[AdaptiveFeature], partitions: int | None,
                      excluded_before: str | None = None) -> dict[str, str]:
    """The Spark SQL settings that run cbo's plan with these AQE features and no other AQE
    decision. ``partitions`` is the plan's shuffle partition count (coalescing starts from it);
    ``excluded_before`` the session's own ``spark.sql.adaptive.optimizer.excludedRules``, kept."""
    if not features:
        return {"spark.sql.adaptive.enabled": "false"}
    excluded = [rule for rule in (excluded_before or "").split(",") if rule.strip()]
    excluded += [rule for rule in JOIN_SELECTION_RULES if rule not in excluded]
    if AdaptiveFeature.EMPTY_RELATION not in features and EMPTY_RELATION_RULE not in excluded:
        excluded.append(EMPTY_RELATION_RULE)
    values = {"spark.sql.adaptive.enabled": "true",
              "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
              "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "0",
              "spark.sql.adaptive.convertSortMergeJoinToShuffledHashJoin.enabled": "false",
              "spark.sql.adaptive.forceOptimizeSkewedJoin": "false",
              EXCLUDED_RULES: ",".join(excluded)}
    for feature, key in _SWITCHES.items():
        values[key] = "true" if feature in features else "false"
    if partitions and AdaptiveFeature.COALESCE in features:
        values["spark.sql.adaptive.coalescePartitions.initialPartitionNum"] = str(partitions)
    return values
