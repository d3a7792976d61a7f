"""The baselines ``benchmarks.tpch.run`` measures cbo against, kept with the workload runner
(``cbo.app.workload.spark_tables``, which ``cbo workload run`` uses too); re-exported here."""

from cbo.app.workload.spark_tables import (
    DSV2_JOIN_PUSHDOWN,
    DSV2_PUSHDOWN_OPTIONS,
    JDBC_TABLE_CATALOG,
    SPARK_CBO_CONF,
    SparkTables,
    conf,
    dsv2_catalog,
)

__all__ = ["DSV2_JOIN_PUSHDOWN", "DSV2_PUSHDOWN_OPTIONS", "JDBC_TABLE_CATALOG", "SPARK_CBO_CONF", "SparkTables",
           "conf", "dsv2_catalog"]
