"""The early-out join design's query family, kept with the workloads (``cbo.workloads.existential``, which
``cbo workload run existential`` uses too); re-exported here for the benchmark."""

from cbo.workloads.existential import FILTERING, OUTER, Case, cases

__all__ = ["FILTERING", "OUTER", "Case", "cases"]
