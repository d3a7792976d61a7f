"""The first STATS workload, kept with the workloads (``cbo.workloads.stats_queries``, which
``cbo workload run stats`` uses too); re-exported here for the harness."""

from cbo.workloads.stats_queries import SEED, WorkloadQuery, filter_on, generate, literal

__all__ = ["SEED", "WorkloadQuery", "filter_on", "generate", "literal"]
