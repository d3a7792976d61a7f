"""The second STATS workload, kept with the workloads (``cbo.workloads.stats_queries2``, which
``cbo workload run stats2`` uses too); re-exported here for the harness."""

from cbo.workloads.stats_queries2 import SEED, generate

__all__ = ["SEED", "generate"]
