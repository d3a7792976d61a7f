"""The 22 TPC-H queries (kept with the workload in ``cbo.workloads.tpch_queries``, which the
demo uses too; re-exported here for the benchmarks)."""

from cbo.workloads.tpch_queries import QUERY_DIR, Query, all_queries, select

__all__ = ["QUERY_DIR", "Query", "all_queries", "select"]
