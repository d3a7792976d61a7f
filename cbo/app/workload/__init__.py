"""Experiments over a workload: any set of queries, any configurations, results with provenance.

``cbo workload run SOURCE --configs LIST`` runs every query of a workload (a folder of ``.sql``
files or a named workload: ``cbo workload list``) in every configuration (cbo with any settings,
Spark's own optimizer three ways, DuckDB, PostgreSQL) under one set of timing rules, checks
every answer against the reference engine, and writes the results as they arrive beside a
manifest of everything the figures depend on. ``rerun`` repeats an experiment from its
manifest; ``compare`` sets two results (or two commits) side by side; ``cbo dataset export``
writes the plans, estimates, cost quantities and measured rows and seconds as Parquet.

The parts, each a module of this package:

* ``workloads``: the queries of a workload (a folder, or an entry of ``registry``);
* ``configs``: what a configuration is (``cbo:cardinalities=oracle``, ``spark-cbo``, ...);
* ``engines``: how each configuration runs a query, with its time limit;
* ``timing``: the timing rules (cold run, warm-up, rotated and reversed rounds);
* ``results``: the result folder (manifest, JSON lines), resuming an interrupted run;
* ``manifest``: what a result records about where and how it was measured;
* ``experiment``: the run itself; ``rerun``, ``compare`` and ``commits`` build on it;
* ``dataset``: the learning data export.
"""
