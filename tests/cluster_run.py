"""Run TPC-H queries through cbo against the catalog named on the command line, in a process of
their own, and print what ran where and the answers as JSON.

The cluster tests run this as a subprocess: a process holds one SparkContext, and the test run's
shared local session must stay as it is. Usage: ``python -m tests.cluster_run CATALOG q1 q3 ...``.
"""

from __future__ import annotations

import json
import sys

from cbo.answers import normalize_value
from cbo.app.session import Session
from cbo.engines.spark import current_session, is_connect
from cbo.workloads.tpch_queries import select


def main(argv: list[str]) -> int:
    catalog, names = argv[0], argv[1:]
    session = Session(catalog)
    answers = {}
    for query in select(names):
        _, rows = session.query(query.sql)
        answers[query.name] = [[normalize_value(v) for v in row] for row in rows]
    spark = current_session()
    assert spark is not None
    if is_connect(spark):  # no SparkContext here: the server says where it runs
        master, executors = spark.conf.get("spark.master"), None
    else:
        context = spark.sparkContext
        # The executors the driver knows of (the block managers, less the driver's own).
        master, executors = context.master, context._jsc.sc().getExecutorMemoryStatus().size() - 1
    # what cbo costed for: EXPLAIN names the profile and the cluster's shape
    explained = session.explain(select(names[:1])[0].sql)
    print(json.dumps({"master": master, "executors": executors, "answers": answers,
                      "explain": explained.splitlines()[-1]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
