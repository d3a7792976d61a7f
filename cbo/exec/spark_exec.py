"""Running a plan on Spark exactly as chosen.

The plan becomes one Spark SQL statement that keeps its shape (``cbo.exec.spark_sql``: join
order as planned, each join's strategy as a hint, tables through temporary views), and Spark
runs it with settings that leave the plan alone. While a plan runs (``own_join_order``),
Spark's join reordering is excluded, its size-based broadcasting is off (every join carries
cbo's strategy: ``broadcast``, ``shuffle_hash``, ``merge``), and every shuffle has the
partition count the plan was costed with. Adaptive query execution keeps only the parts that
leave cbo's join order and strategies alone (``spark_adaptive``; ``cbo.exec.spark_adaptive``),
or is off. Windows run in cbo's order (Spark's ``TransposeWindow`` is excluded), and a filter
on a rank runs as a per-partition top-k (Spark's ``InferWindowGroupLimit``) only where cbo
chose one: where cbo's plan runs such a filter as a plain window, the inference is excluded
for the statement. Output columns get the query's names.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cbo.catalog_types import Catalog
from cbo.engines.spark import default_parallelism, is_connect
from cbo.errors import CboError
from cbo.exec.spark_adaptive import EXCLUDED_RULES, adaptive_settings
from cbo.exec.spark_sql import SparkPlanSql, SparkViews
from cbo.ir.operators import Filter, Plan, Window
from cbo.physical.algorithm import Algorithm
from cbo.physical.group_limit import group_limit
from cbo.physical.plan import PhysicalPlan
from cbo.settings import ADAPTIVE_OFF, AdaptiveFeature

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Spark's rule that moves inner joins around to avoid cross products; cbo decides the order.
REORDER_RULES = "org.apache.spark.sql.catalyst.optimizer.ReorderJoin"
# Spark's rule that swaps stacked windows (cbo's TransposeWindows weighs both orders), and the
# one that runs a filter on a rank as a per-partition top-k (cbo's WindowTopK).
TRANSPOSE_WINDOWS = "org.apache.spark.sql.catalyst.optimizer.TransposeWindow"
WINDOW_GROUP_LIMIT = "org.apache.spark.sql.catalyst.optimizer.InferWindowGroupLimit"


class SparkExecutor:
    def __init__(self, spark: SparkSession, catalog: Catalog, partitions: int | None = None,
                 shuffle_partitions: int | None = None):
        self.spark = spark
        self.catalog = catalog
        self.operators: dict[int, PhysicalPlan] = {}   # the plan's physical operators by logical node
        self.shuffle_partitions = shuffle_partitions
        self.adaptive: frozenset[AdaptiveFeature] = ADAPTIVE_OFF   # the AQE features a run keeps
        self.views = SparkViews(spark, catalog, partitions or default_parallelism(spark))
        self.persisted: list[DataFrame] = []   # CTEs computed once, until ``release``

    def for_plan(self, physical: PhysicalPlan | None, shuffle_partitions: int | None,
                 adaptive: frozenset[AdaptiveFeature] = ADAPTIVE_OFF) -> SparkExecutor:
        """An executor for one planned query: this one's views, that plan's physical operators
        (keyed by the logical node each runs, by identity), partition count and the parts of
        adaptive execution it runs with. The session's executor is never changed, so two plans
        (or two threads of a notebook) never see each other's settings. Without a physical
        plan, Spark chooses how each join runs."""
        planned = copy.copy(self)
        planned.operators = physical.by_logical() if physical is not None else {}
        planned.shuffle_partitions = shuffle_partitions
        planned.persisted = []
        planned.adaptive = adaptive
        return planned

    def statement(self, plan: Plan, names: tuple[str, ...]) -> str:
        """The Spark SQL statement that runs ``plan`` (over this executor's temporary views; a
        CTE computed once is a persisted view, made here, that ``release`` frees)."""
        return SparkPlanSql(self.views, self.operators, self.persisted).statement(plan, names)

    def dataframe(self, plan: Plan, names: tuple[str, ...]) -> DataFrame:
        return self.spark.sql(self.statement(plan, names))

    def release(self) -> None:
        """Unpersist the CTEs computed once for the statements made so far (their rows are
        collected)."""
        while self.persisted:
            self.persisted.pop().unpersist()

    def collect(self, plan: Plan, names: tuple[str, ...]) -> tuple[list[tuple[Any, ...]], float]:
        started = time.perf_counter()
        try:
            with self.own_join_order():
                rows = [tuple(r) for r in self.dataframe(plan, names).collect()]
        finally:
            self.release()
        return rows, time.perf_counter() - started

    def physical_plan(self, plan: Plan, names: tuple[str, ...]) -> str:
        """Spark's physical plan for cbo's plan (what ``collect`` would run; under adaptive
        execution, the initial plan, which the run adapts as ``spark_adaptive`` allows)."""
        if is_connect(self.spark):
            raise CboError("Spark's physical plan is read from the driver's JVM, which a Spark Connect "
                           "session does not have: use a catalog with [spark] master for this")
        try:
            with self.own_join_order():
                frame = self.dataframe(plan, names)
                return str(frame._jdf.queryExecution().executedPlan().toString())
        finally:
            self.release()

    @contextmanager
    def own_join_order(self) -> Iterator[None]:
        """Run cbo's plan as chosen: Spark's join reordering and size-based broadcasting off,
        adaptive execution off or kept to ``self.adaptive``; the planned shuffle partition
        count. Restored afterwards."""
        excluded = "spark.sql.optimizer.excludedRules"
        before = self.spark.conf.get(excluded, None)
        ours = [REORDER_RULES, TRANSPOSE_WINDOWS] + ([WINDOW_GROUP_LIMIT] if self._declines_group_limit() else [])
        values = {excluded: ",".join(r for r in (before, *ours) if r),
                  "spark.sql.autoBroadcastJoinThreshold": "-1"}
        values.update(adaptive_settings(self.adaptive, self.shuffle_partitions,
                                        self.spark.conf.get(EXCLUDED_RULES, None)))
        if self.shuffle_partitions:
            values["spark.sql.shuffle.partitions"] = str(self.shuffle_partitions)
        saved = {key: self.spark.conf.get(key, None) for key in values}
        for key, value in values.items():
            self.spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, old in saved.items():
                if old is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, old)


    def _declines_group_limit(self) -> bool:
        """Whether the plan runs as a plain window a filter on a rank that Spark would run as a
        per-partition top-k, and chose no top-k (Spark's inference is all or nothing per
        statement: a plan with both keeps it)."""
        declined = chosen = False
        for node in self.operators.values():
            if node.algorithm in (Algorithm.WINDOW_TOP_K, Algorithm.WINDOW_TOP_K_SORTED):
                chosen = True
            elif isinstance(node.logical, Filter) and isinstance(node.logical.input, Window) \
                    and group_limit(node.logical.predicate, node.logical.input) is not None:
                declined = True
        return declined and not chosen


# Output types ``collect_together`` carries through JSON unchanged (a JSON number, string or
# boolean is the same Python value Spark's own rows give).
TOGETHER_TYPES = frozenset({"integer", "bigint", "boolean", "varchar"})


def can_collect_together(plan: Plan) -> bool:
    return bool(plan.output) and all(c.type.name in TOGETHER_TYPES for c in plan.output)


def collect_together(runs: Sequence[tuple[SparkExecutor, Plan, tuple[str, ...]]],
                     shuffle_partitions: int | None = None) -> list[list[tuple[Any, ...]]]:
    """The rows of several plans (``can_collect_together``), each in no particular order, from
    one Spark job: each plan's statement, exactly as ``collect`` would run it, is a branch of
    a UNION ALL whose rows are the branch's number and its row as JSON; equal statements (two
    plans run alike) are one branch.

    Spark's cost per query (parsing, analysis, planning and scheduling a job) dwarfs running a
    query over a few rows; a caller checking many small queries (the equivalence benchmark)
    pays it once per batch. The executors must share one Spark session; the first one's
    settings run the batch, with ``shuffle_partitions`` if given (the partition count changes
    no answer; one partition spares a batch of tiny queries most of its tasks). Rows are
    decoded by position, nulls included (``ignoreNullFields`` off).
    """
    if not runs:
        return []
    branches: dict[str, int] = {}   # statement -> its branch
    of_run = []
    for number, (executor, plan, names) in enumerate(runs):
        if not can_collect_together(plan):
            raise CboError(f"query {number} returns a type a batch cannot carry "
                           f"({', '.join(str(c.type) for c in plan.output)}): run it alone")
        # (under the batch's settings: a CTE computed once is planned as it is made)
        with runs[0][0].own_join_order():
            of_run.append(branches.setdefault(executor.statement(plan, names), len(branches)))
    selects = []
    for statement, branch in branches.items():
        width = len(runs[of_run.index(branch)][1].output)
        positions = [f"c{i}" for i in range(width)]
        fields = ", ".join(f"'{p}', {p}" for p in positions)
        selects.append(f"SELECT {branch} AS cbo_plan, to_json(named_struct({fields}), map('ignoreNullFields', "
                       f"'false')) AS cbo_row FROM ({statement}) AS cbo_q{branch}({', '.join(positions)})")
    first = runs[0][0]
    if shuffle_partitions is not None:
        first = copy.copy(first)
        first.shuffle_partitions = shuffle_partitions
    found: list[list[tuple[Any, ...]]] = [[] for _ in branches]
    try:
        with first.own_join_order():
            for branch, row in first.spark.sql("\nUNION ALL\n".join(selects)).collect():
                values = json.loads(row)
                found[branch].append(tuple(values[f"c{i}"] for i in range(len(values))))
    finally:
        for executor, _, _ in runs:
            executor.release()
    return [list(found[branch]) for branch in of_run]
