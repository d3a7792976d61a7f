"""EXPLAIN ANALYZE on Spark: per-operator actuals from ONE run of the whole plan.

cbo runs a plan as one Spark SQL statement (``cbo.exec.spark_sql``). After it has run, the
executed physical plan (``queryExecution().executedPlan()``, the very object that ran) carries
Spark's SQL metrics: ``numOutputRows`` of scans, filters, joins and aggregations, and the time
metrics some operators keep (``scanTime``, ``aggTime``, ``sortTime``, a shuffle's
``shuffleWriteTime``, a broadcast's ``buildTime``/``collectTime``, summed over tasks). Running
every subplan separately instead (the old way) charged Spark's start-up and each re-run to
whichever subplan ran first.

Under adaptive execution (``cbo.exec.spark_adaptive``) the executed plan is an
``AdaptiveSparkPlanExec``; what ran is its final plan, whose query stages (leaves in Spark's
tree) wrap the exchanges that ran, metrics filled in: ``read_plan`` reads the final plan with
each stage's exchange as the stage's child. Where a finished stage proved a subtree empty,
Spark replaced that subtree by an empty relation and never ran the rest of it: the node there
has 0 rows for certain, the nodes below it are not measured. A sort or limit of cbo's with no
Spark operator in its place was dropped as a no-op (a limit that cannot cut, a sort of one row):
its rows follow from its input's.

Matching Spark's operators to cbo's nodes follows the plan's shape, which Spark keeps (join
reordering is off; every join carries its hint): top-down, a cbo node expects its Spark
counterpart below the wrappers Spark adds (whole-stage codegen, projections, exchanges, the
sorts of a sort-merge join, the partial phase of an aggregation); those wrappers' time metrics
are reported with the node above them. Nodes with no Spark operator of their own get rows only
where the rows follow from their input with certainty (a projection or a sort keeps its
input's rows; a limit keeps min(count, input - offset)); nodes inside a remote query run in the
database and have no Spark metric; anything the matcher cannot pair is reported as unmeasured,
never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cbo.exec.spark_sql import keyed_mark
from cbo.ir.expressions import TRUE
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
    walk,
)
from cbo.sqlgen import name_of

# Spark operators that are not one of cbo's nodes: wrappers, exchanges, projections (cbo's
# projections and Spark's are not one to one: Spark collapses and adds them).
_STAGES = {"ShuffleQueryStageExec", "BroadcastQueryStageExec", "ResultQueryStageExec", "TableCacheQueryStageExec"}
_WRAPPERS = {"WholeStageCodegenExec", "InputAdapter", "ColumnarToRowExec", "RowToColumnarExec", "ProjectExec",
             "ShuffleExchangeExec", "BroadcastExchangeExec", "ReusedExchangeExec", "LocalLimitExec",
             "AQEShuffleReadExec", *_STAGES}
# What adaptive execution puts where a finished stage proved the subtree empty.
_EMPTY = {"EmptyRelationExec"}
# Spark operators that sort or cut: where cbo's sort or limit finds none of them, adaptive
# execution dropped it as a no-op on the rows at hand.
_ORDERING = {"SortExec", "TakeOrderedAndProjectExec", "CollectLimitExec", "GlobalLimitExec", "LocalLimitExec"}
_DROPPED = "adaptive execution drops it where it cannot change the rows"
_JOINS = {"BroadcastHashJoinExec", "ShuffledHashJoinExec", "SortMergeJoinExec", "BroadcastNestedLoopJoinExec",
          "CartesianProductExec"}
_AGGREGATES = {"HashAggregateExec", "ObjectHashAggregateExec", "SortAggregateExec"}
_SCANS = {"FileSourceScanExec", "BatchScanExec", "InMemoryTableScanExec", "LocalTableScanExec"}
_JOIN_TYPES = {"inner": "Inner", "left": "LeftOuter", "right": "RightOuter", "full": "FullOuter",
               "semi": "LeftSemi", "anti": "LeftAnti", "null_aware_anti": "LeftAnti"}
_NAME = re.compile(r"\b(\w+)#\d+")


@dataclass
class SparkOp:
    """One operator of Spark's executed plan, read out of the JVM once."""

    kind: str                               # class name, e.g. "BroadcastHashJoinExec"
    name: str                               # node name, e.g. "BroadcastHashJoin"
    metrics: dict[str, tuple[float, str]]   # name -> (value, metric type)
    children: list[SparkOp]
    join_type: str | None = None
    left_keys: frozenset[str] = frozenset()
    right_keys: frozenset[str] = frozenset()
    grouping: frozenset[str] = frozenset()
    final: bool = False                     # an aggregation's final phase
    global_sort: bool = False
    range_exchange: bool = False            # the range partitioning of a global sort
    resampled: bool = False                 # ran again by a range partitioning's sampling
    rows_override: int | None = None        # its true rows, when known despite resampling

    @property
    def rows(self) -> int | None:
        if self.rows_override is not None:
            return self.rows_override
        if self.resampled:
            return None
        found = self.metrics.get("numOutputRows")
        return int(found[0]) if found else None

    def times(self) -> dict[str, float]:
        """Its time metrics in seconds (task time summed over tasks), the non-zero ones."""
        found = {}
        for metric, (value, kind) in self.metrics.items():
            if kind in ("timing", "nsTiming") and value > 0 and metric != "pipelineTime":
                found[metric] = value / (1e9 if kind == "nsTiming" else 1e3)
        return found


def read_plan(java_plan: Any) -> SparkOp:
    """The executed plan as :class:`SparkOp` (py4j calls, one pass); of an adaptive plan, the
    final plan that ran."""
    op = _read(java_plan)
    _mark_resampled(op)
    return op


def _mark_resampled(op: SparkOp) -> None:
    """A global sort's range partitioning samples its input with a job of its own that runs the
    stage below it again (Spark's RangePartitioner; some partitions a third time when they look
    unbalanced), so that stage's row metrics count rows more than once. The exchange's
    ``shuffleRecordsWritten`` is written by the real run only: it gives the stage's top
    operator its rows; the others are not measured."""
    if op.range_exchange and op.children:
        written = op.metrics.get("shuffleRecordsWritten")
        first = True
        stack = [op.children[0]]
        while stack:
            current = stack.pop()
            if current.kind in ("ShuffleExchangeExec", "BroadcastExchangeExec", "ReusedExchangeExec") \
                    or current.kind in _STAGES:
                continue
            if "numOutputRows" in current.metrics and current.kind != "ColumnarToRowExec" or \
                    current.kind in _AGGREGATES:
                current.resampled = True
                if first and written is not None:
                    current.rows_override = int(written[0])
                first = False
            stack.extend(reversed(current.children))
    for child in op.children:
        _mark_resampled(child)


def _read(java_plan: Any) -> SparkOp:
    kind = java_plan.getClass().getSimpleName()
    if kind == "AdaptiveSparkPlanExec":
        # Its current plan: after the run, the final plan that ran.
        return _read(java_plan.executedPlan())
    metrics: dict[str, tuple[float, str]] = {}
    iterator = java_plan.metrics().iterator()
    while iterator.hasNext():
        entry = iterator.next()
        metrics[entry._1()] = (float(entry._2().value()), entry._2().metricType())
    children_seq = java_plan.children()
    children = [_read(children_seq.apply(i)) for i in range(children_seq.size())]
    # Node names can carry a whole remote query ("Scan JDBCRelation((SELECT ...) ...)"): EXPLAIN
    # shows that query already.
    name = "Scan JDBC" if kind == "RowDataSourceScanExec" else java_plan.nodeName().split("(")[0].strip()
    op = SparkOp(kind, name, metrics, children)
    if kind in _JOINS:
        op.join_type = java_plan.joinType().toString() if kind != "CartesianProductExec" else "Inner"
        if kind in ("BroadcastHashJoinExec", "ShuffledHashJoinExec", "SortMergeJoinExec"):
            op.left_keys = frozenset(_NAME.findall(java_plan.leftKeys().toString()))
            op.right_keys = frozenset(_NAME.findall(java_plan.rightKeys().toString()))
    elif kind in _AGGREGATES:
        op.grouping = frozenset(_NAME.findall(java_plan.groupingExpressions().toString()))
        op.final = bool(java_plan.requiredChildDistributionExpressions().isDefined())
    elif kind == "SortExec":
        op.global_sort = bool(getattr(java_plan, "global")())
    elif kind == "ShuffleExchangeExec":
        op.range_exchange = java_plan.outputPartitioning().getClass().getSimpleName() == "RangePartitioning"
    elif kind == "ReusedExchangeExec":
        op.children = [_read(java_plan.child())]
    elif kind in _STAGES:
        # A query stage is a leaf in Spark's tree; what it ran is its plan (an exchange).
        op.children = [_read(java_plan.plan())]
    return op


@dataclass
class Actual:
    """What one run says about one of cbo's nodes."""

    rows: int | None = None
    source: str = ""                        # where ``rows`` comes from, or why there are none
    operators: list[str] = field(default_factory=list)   # the Spark operators attributed to it
    times: dict[str, float] = field(default_factory=dict)   # their time metrics, seconds


class _Matcher:
    def __init__(self, pushed: dict[Plan, Any], scalar_joins: frozenset[int] = frozenset()):
        self.pushed = pushed
        self.scalar_joins = scalar_joins   # joins run as a scalar subquery (by id)
        self.actuals: dict[int, Actual] = {}

    def _actual(self, node: Plan) -> Actual:
        return self.actuals.setdefault(id(node), Actual())

    def _attribute(self, actual: Actual, op: SparkOp) -> None:
        actual.operators.append(op.name)
        for metric, seconds in op.times().items():
            actual.times[metric] = actual.times.get(metric, 0.0) + seconds

    def _skip(self, op: SparkOp, actual: Actual) -> SparkOp:
        """Down through Spark's wrappers (their times go to ``actual``) to the next operator
        that can be one of cbo's nodes."""
        while op.kind in _WRAPPERS or (op.kind == "SortExec" and not op.global_sort):
            if op.kind not in ("WholeStageCodegenExec", "InputAdapter", "ProjectExec"):
                self._attribute(actual, op)
            if len(op.children) != 1:
                break
            op = op.children[0]
        return op

    def _descend(self, parent: Actual, child: Plan, op: SparkOp) -> None:
        """Match ``child`` below Spark's wrappers, whose times go to the parent (an exchange
        or a broadcast of an input is the consuming operator's, as EXPLAIN shows it there)."""
        self.match(child, self._skip(op, parent))

    def unmatched(self, node: Plan, reason: str) -> None:
        """``node`` and everything below it unmeasured: no guessing once the shapes part."""
        self._actual(node).source = reason
        for below in walk(node):
            actual = self._actual(below)
            if not actual.source:
                actual.source = "below a node Spark's plan does not match: not measured"

    def match(self, node: Plan, op: SparkOp) -> None:
        actual = self._actual(node)
        op = self._skip(op, actual)
        if op.kind in _EMPTY:
            return self._proved_empty(node, op, actual)
        if node in self.pushed:
            self._leaf(node, op, actual, ("RowDataSourceScanExec",), "the JDBC read of the pushed SQL")
            for below in walk(node):
                if below is not node:
                    self._actual(below).source = "runs in the source (pushed SQL): no Spark operator"
            return
        if isinstance(node, Scan):
            self._leaf(node, op, actual, _SCANS, "the table scan")
        elif isinstance(node, Values):
            self._leaf(node, op, actual, ("LocalTableScanExec",), "the VALUES rows")
        elif isinstance(node, Project):
            actual.source = "a projection keeps its input's rows"
            self._descend(actual, node.input, op)
        elif isinstance(node, Filter):
            if op.kind == "FilterExec":
                self._measured(actual, op)
                self._descend(actual, node.input, op.children[0])
            else:
                actual.source = f"no Spark filter here (Spark's plan has {op.name}): not measured"
                self._descend(actual, node.input, op)
        elif isinstance(node, Join):
            self._join(node, op, actual)
        elif isinstance(node, Aggregate):
            if op.kind not in _AGGREGATES:
                return self.unmatched(node, f"expected an aggregation, Spark's plan has {op.name}: not measured")
            self._measured(actual, op)
            self.match(node.input, self._below_aggregation(op, node, actual))
        elif isinstance(node, Sort):
            if op.kind == "SortExec" and op.global_sort:
                actual.source = "a sort keeps its input's rows"
                self._attribute(actual, op)
                self._descend(actual, node.input, op.children[0])
            elif op.kind not in _ORDERING:
                # No sort here: adaptive execution drops a sort of at most one row
                # (``OptimizeOneRowPlan``); the rows are its input's all the same.
                actual.source = f"a sort keeps its input's rows (none in Spark's plan: {_DROPPED})"
                self._descend(actual, node.input, op)
            else:
                self.unmatched(node, f"expected a sort, Spark's plan has {op.name}: not measured")
        elif isinstance(node, Limit):
            self._limit(node, op, actual)
        elif isinstance(node, CteAnchor):
            # the body runs here; the producer ran once, inside the cached relation its consumers read
            actual.source = "a CTE's anchor has its body's rows"
            self.unmatched(node.producer, "a CTE computed once: runs inside Spark's cached relation, not measured")
            self._descend(actual, node.body, op)
        elif isinstance(node, CteConsumer):
            self._leaf(node, op, actual, ("InMemoryTableScanExec",), "the read of the CTE's stored rows")
        elif isinstance(node, Window):
            if op.kind != "WindowExec":
                return self.unmatched(node, f"expected a window, Spark's plan has {op.name}: not measured")
            actual.source = "a window keeps its input's rows"
            self._attribute(actual, op)
            below_op = self._skip(op.children[0], actual)
            # a per-partition top-k below it (WindowGroupLimit, final and partial, with their
            # sorts and the exchange between them) is the window's work
            while below_op.kind == "WindowGroupLimitExec" and below_op.children:
                self._attribute(actual, below_op)
                below_op = self._skip(below_op.children[0], actual)
            self.match(node.input, below_op)
        elif isinstance(node, SetOp) and node.kind == "union" and not node.distinct and op.kind == "UnionExec":
            actual.source = "a UNION ALL has its inputs' rows"
            for child, child_op in zip(node.children, op.children):
                self._descend(actual, child, child_op)
        else:
            self.unmatched(node, f"no direct Spark operator (Spark's plan has {op.name}): not measured")

    def _proved_empty(self, node: Plan, op: SparkOp, actual: Actual) -> None:
        """Adaptive execution replaced this subtree by an empty relation once a finished stage
        proved it empty: no rows, for certain; what was below ran only as far as that stage, so
        none of it is measured."""
        self._attribute(actual, op)
        actual.rows = 0
        actual.source = ("Spark's adaptive execution found it empty at run time (a finished stage proved it) "
                         "and ran an empty relation instead")
        for below in walk(node):
            if below is not node:
                self._actual(below).source = "not run to the end: adaptive execution replaced the subtree above " \
                                             "by an empty relation"

    def _leaf(self, node: Plan, op: SparkOp, actual: Actual, kinds: tuple[str, ...] | set[str], what: str) -> None:
        # Spark adds filters of its own above a scan (IS NOT NULL it infers for join keys).
        while op.kind == "FilterExec" and op.children:
            self._attribute(actual, op)
            op = self._skip(op.children[0], actual)
        if op.kind in kinds:
            self._measured(actual, op)
        else:
            self.unmatched(node, f"expected {what}, Spark's plan has {op.name}: not measured")

    def _measured(self, actual: Actual, op: SparkOp) -> None:
        self._attribute(actual, op)
        if op.rows is not None:
            actual.rows = op.rows
            actual.source = f"Spark's {op.name}" + (" (rows its range partitioning wrote: Spark's sampling ran "
                                                    "it twice)" if op.rows_override is not None else "")
        elif op.resampled:
            actual.source = (f"not measured: Spark's {op.name} ran again when the global sort above sampled "
                             "its input, so its row count is inflated")
        else:
            actual.source = f"Spark's {op.name} keeps no row count"

    def _below_aggregation(self, op: SparkOp, node: Plan, actual: Actual) -> SparkOp:
        """Below every phase of one aggregation (partial, merge, final; an Expand for DISTINCT
        aggregates): Spark splits one aggregation into phases grouping by its keys (and any
        DISTINCT arguments); a phase grouping by other columns is another aggregation."""
        keys = {name_of(c) for c in node.group_by} if isinstance(node, Aggregate) else set()
        current = op.children[0]
        while True:
            current = self._skip(current, actual)
            if (current.kind in _AGGREGATES and keys <= current.grouping and not current.final) \
                    or current.kind == "ExpandExec":
                self._attribute(actual, current)
                current = current.children[0]
                continue
            return current

    def _scalar_join(self, node: Join, op: SparkOp, actual: Actual) -> None:
        """A join run as a scalar subquery (``cbo.exec.spark_sql``): Spark's filter on the join
        condition over the left input (none for a left join on TRUE); the one-row right input
        runs as a subquery of its own, whose operators Spark's executed plan keeps apart."""
        for below in walk(node.right):
            self._actual(below).source = "runs once as a scalar subquery: not measured"
        if node.kind == "inner":
            if op.kind != "FilterExec":
                return self.unmatched(node, f"expected the filter of a scalar subquery, Spark's plan has {op.name}")
            self._measured(actual, op)
            self._descend(actual, node.left, op.children[0])
        else:
            actual.source = "a left join with one row keeps its left input's rows"
            self._descend(actual, node.left, op)

    def _keyed_mark(self, node: Join, op: SparkOp, actual: Actual) -> None:
        """A mark join on keys (``SparkPlanSql._hashed_mark``): a left join with the right's
        distinct keys, which keeps the left rows (IN: under a second left join with the counts
        per key, which keeps them too). The right input is matched below the distinct keys'
        aggregation."""
        self._measured(actual, op)
        keyed = keyed_mark(node)
        if keyed is not None and keyed[1] is not None:   # IN: the counts' join above the matches'
            below = self._skip(op.children[0], actual)
            if below.kind not in _JOINS:
                return self.unmatched(node, f"expected the mark join's left join, Spark's plan has {below.name}")
            self._attribute(actual, self._skip(op.children[1], actual))
            self._attribute(actual, below)
            op = below
        found = self._skip(op.children[1], actual)
        while found.kind in _AGGREGATES and found.children:
            self._attribute(actual, found)
            found = self._skip(found.children[0], actual)
        self._descend(actual, node.left, op.children[0])
        self.match(node.right, found)

    def _join(self, node: Join, op: SparkOp, actual: Actual) -> None:
        if id(node) in self.scalar_joins:
            return self._scalar_join(node, op, actual)
        if node.kind == "mark" and op.kind in _JOINS:
            return self._keyed_mark(node, op, actual)
        if node.kind == "mark":
            # Any other mark join runs as a left join grouped by a row id (cbo.exec.spark_sql).
            if op.kind not in _AGGREGATES:
                return self.unmatched(node, f"expected the mark join's grouping, Spark's plan has {op.name}")
            self._measured(actual, op)
            below = self._skip(op.children[0], actual)
            while below.kind in _AGGREGATES:
                self._attribute(actual, below)
                below = self._skip(below.children[0], actual)
            if below.kind not in _JOINS:
                return self.unmatched(node, f"expected the mark join's left join, Spark's plan has {below.name}")
            self._attribute(actual, below)
            self._descend(actual, node.left, below.children[0])
            self._descend(actual, node.right, below.children[1])
            return
        expected = "Inner" if node.kind == "inner" else _JOIN_TYPES.get(node.kind)
        if op.kind not in _JOINS or op.join_type != expected:
            found = f"{op.name} {op.join_type}" if op.join_type else op.name
            return self.unmatched(node, f"Spark's plan has {found} here, not this {node.kind} join "
                                        "(Spark's optimizer moved it): not measured")
        left, right = op.children
        if node.equi_keys and op.left_keys:
            # A key is named by cbo's identity name (c9) or, where Spark moved cbo's renaming
            # projection above the join, by the table's column name (o_orderkey).
            left_names = {n for a, _ in node.equi_keys for n in (name_of(a), a.name)}
            right_names = {n for _, b in node.equi_keys for n in (name_of(b), b.name)}
            if op.left_keys <= right_names and op.right_keys <= left_names \
                    and not (op.left_keys <= left_names and op.right_keys <= right_names):
                left, right = right, left
            elif not (op.left_keys <= left_names and op.right_keys <= right_names):
                return self.unmatched(node, f"Spark's {op.name} joins on other keys: not measured")
        elif (node.condition == TRUE) != (op.kind in ("BroadcastNestedLoopJoinExec", "CartesianProductExec")
                                          and not op.left_keys):
            return self.unmatched(node, f"Spark's {op.name} is not this join: not measured")
        self._measured(actual, op)
        self._descend(actual, node.left, left)
        self._descend(actual, node.right, right)

    def _limit(self, node: Limit, op: SparkOp, actual: Actual) -> None:
        actual.source = "a limit keeps min(count, input rows - offset)"
        if op.kind == "TakeOrderedAndProjectExec" and isinstance(node.input, Sort):
            # Spark's top-N does the sort and the limit at once.
            self._attribute(actual, op)
            sort_actual = self._actual(node.input)
            sort_actual.source = "a sort keeps its input's rows (Spark sorts within its top-N, above)"
            self._descend(actual, node.input.input, op.children[0])
        elif op.kind in ("CollectLimitExec", "GlobalLimitExec"):
            self._attribute(actual, op)
            self._descend(actual, node.input, op.children[0])
        elif op.kind not in _ORDERING:
            # No limit here: adaptive execution drops a limit that cannot cut (``EliminateLimits``,
            # ``OptimizeOneRowPlan``); min(count, input rows - offset) holds all the same.
            actual.source = f"a limit keeps min(count, input rows - offset) (none in Spark's plan: {_DROPPED})"
            self._descend(actual, node.input, op)
        else:
            self.unmatched(node, f"expected a limit, Spark's plan has {op.name}: not measured")

    def infer(self, node: Plan) -> int | None:
        """Fill in rows that follow from the inputs' rows with certainty (post-order)."""
        child_rows = [self.infer(child) for child in node.children]
        actual = self._actual(node)
        if actual.rows is not None:
            return actual.rows
        if isinstance(node, (Project, Sort, Join, Window)) and child_rows[0] is not None \
                and "keeps its" in actual.source:
            actual.rows = child_rows[0]
        elif isinstance(node, Limit) and child_rows[0] is not None and actual.source.startswith("a limit"):
            available = max(0, child_rows[0] - node.offset)
            actual.rows = available if node.count is None else min(node.count, available)
        elif isinstance(node, SetOp) and actual.source.startswith("a UNION ALL") and None not in child_rows:
            actual.rows = sum(child_rows)  # type: ignore[arg-type]
        elif isinstance(node, CteAnchor) and child_rows[1] is not None:
            actual.rows = child_rows[1]   # the body's
        return actual.rows


def attribute(plan: Plan, executed: SparkOp, pushed: dict[Plan, Any], result_rows: int,
              scalar_joins: frozenset[int] = frozenset()) -> dict[int, Actual]:
    """Per node of ``plan`` (by ``id``), its actuals from Spark's executed plan of one run.

    ``pushed`` is the plan's remote queries (``RemoteQueries.pushed``); ``result_rows`` the
    number of rows the run returned, which the root must show; ``scalar_joins`` the joins run
    as scalar subqueries (by ``id``)."""
    matcher = _Matcher(pushed, scalar_joins)
    matcher.match(plan, executed)
    matcher.infer(plan)
    root = matcher._actual(plan)
    if root.rows is None:
        root.rows = result_rows
        root.source = "the rows the run returned"
    return matcher.actuals
