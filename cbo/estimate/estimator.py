"""The cardinality estimator: an estimate for every logical operator, composed bottom-up.

``Estimator(stats).estimate(plan)`` returns a :class:`RelEstimate` (rows, and a distribution
per output column) for any plan of the IR. Each operator passes updated column estimates up:
filters narrow and re-weight them (``filters``), joins match them (``joins``), aggregates count
groups, projections rename, limits cut.

What is kept, and by whom: the ``Estimator`` keeps what derives from its statistics alone (the
columns' statistics as estimates, each table's sample with its indexes: ``samples``), by table
and column names; an ``EstimationContext`` (one per memo search, or per ``estimate`` call)
keeps the estimates of the plans it was given, by their structure; what a join set derives
from its leaves is kept on their estimates (``join_memory``), and what derives from a
column's values with the values (``ColumnEstimate.derived``). Each lives as long as its owner.

Missing statistics never stop estimation: a table without statistics has
``defaults.TABLE_ROWS`` rows, a column without them is "unknown" (every value distinct), and
each such fallback adds a note to the estimate.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from cbo.estimate import defaults
from cbo.estimate.aggregates import aggregate_output
from cbo.estimate.arithmetic import OPERATIONS, of_two, with_constant
from cbo.estimate.column import ColumnEstimate, Segment, summed
from cbo.estimate.constants import constant_value
from cbo.estimate.dependence import origin_determines
from cbo.estimate.filters import estimate_filter
from cbo.estimate.join_sets import at_least_matched, extreme_restriction, join_set_of, leaves_of, of_set
from cbo.estimate.joins import estimate_join
from cbo.estimate.plan_facts import PlanFacts
from cbo.estimate.relation import DerivedColumns, JoinSet, Origin, RelEstimate, SampleView, layered
from cbo.estimate.samples import TableSample
from cbo.estimate.windows import estimate_window
from cbo.ir.dispatch import OperatorTable
from cbo.ir.expressions import ROW_ID, Call, Column, ColumnRef, Constant, Expr, SpecialForm, columns_of
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
    equated_columns,
)
from stats.model import TableStats


class Estimator:
    """Estimates plans over one statistics snapshot (``stats``: table name -> ``TableStats``).

    What derives from the statistics alone is kept here, for the estimator's lifetime, by table
    and column names: each column's statistics converted once, each table's sample with its
    indexes (``TableSample``). What derives from plans is kept by the ``EstimationContext`` that
    estimated them (``context()``: the memo search holds one; ``estimate`` makes one per call)
    and by their estimates, and goes with them: no estimate reads what another query left, and
    nothing needs forgetting between queries.
    """

    def __init__(self, stats: Mapping[str, TableStats] | None = None, upper: bool = False):
        """``upper``: the pessimistic mode, inner-join sets estimated by their degree bound
        (``cbo.estimate.upper_bound``)."""
        self.stats = dict(stats or {})
        self.upper = upper
        self._base: dict[tuple[str, str], ColumnEstimate] = {}   # columns of stored statistics, converted once
        self._samples: dict[str, TableSample] = {}   # each table's sample, with what derives from it alone

    def context(self) -> EstimationContext:
        """A context for estimating related plans (one query's): it keeps their estimates."""
        return EstimationContext(self)

    def rows(self, plan: Plan) -> float:
        return self.estimate(plan).rows

    def estimate(self, plan: Plan) -> RelEstimate:
        """The estimate of ``plan``, in a context of its own (to estimate several nodes of one
        plan, or several plans of one query, ask one ``context()``)."""
        return self.context().estimate(plan)

    def estimate_node(self, node: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        """``EstimationContext.estimate_node`` in a context of its own."""
        return self.context().estimate_node(node, inputs)

    def base_column(self, table: str, name: str, stats: TableStats) -> ColumnEstimate:
        """The column's statistics as an estimate (converted once: every scan of the table, in
        every context, reads the same estimate, and what derives from its values with it)."""
        found = self._base.get((table, name))
        if found is None:
            found = self._base[(table, name)] = ColumnEstimate.from_stats(stats.columns[name], stats.row_count)
        return found

    def sample(self, table: str, stats: TableStats) -> TableSample:
        """The table's sample as this estimator reads it (one per table: what derives from it is
        kept there)."""
        found = self._samples.get(table)
        if found is None:
            assert stats.sample is not None
            found = self._samples[table] = TableSample(table, stats.sample)
        return found


class EstimationContext:
    """The estimates of related plans (one query's, or one memo search's), kept for its lifetime.

    ``estimate`` keeps each plan's estimate by the plan's structure, so asking again for a
    subplan costs nothing; what a join set derives from its leaves' estimates is kept on those
    estimates (``cbo.estimate.join_memory``), which the context (or the memo's groups) holds.
    """

    def __init__(self, estimator: Estimator):
        self.estimator = estimator
        self.stats = estimator.stats
        self.upper = estimator.upper
        self._cache: dict[Plan, RelEstimate] = {}
        self._scans: dict[Scan, RelEstimate] = {}   # a scan's estimate is its statistics converted: kept
        # What join sets read of the plan nodes ``estimate`` is given (the memo's nodes, read
        # through ``estimate_node``, are each estimated once)
        self._facts = PlanFacts()

    def context(self) -> EstimationContext:
        """Itself: a memo given a context estimates in it."""
        return self

    def rows(self, plan: Plan) -> float:
        return self.estimate(plan).rows

    def estimate(self, plan: Plan) -> RelEstimate:
        found = self._cache.get(plan)
        if found is None:
            found = _sane(self._estimate(plan), plan)
            self._cache[plan] = found
        return found

    def estimate_node(self, node: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        """The estimate of ``node`` given its inputs' estimates: how the memo estimates a group
        from its first expression, whose children are groups rather than plans."""
        return _sane(self._combine(node, inputs), node)

    def _estimate(self, plan: Plan) -> RelEstimate:
        if isinstance(plan, Join) and plan.kind == "inner":
            return self._join_estimate(plan)
        return self._combine(plan, [self.estimate(child) for child in plan.children])

    def _join_estimate(self, join: Join) -> RelEstimate:
        """An inner join's estimate from the set it joins (``_join``), the set found without
        estimating the inner joins below it: their estimates would be computed only to be
        read for their sets (a chain of n joins estimated n sets for one answer)."""
        return of_set(self._set_below(join), self.upper)

    def _set_below(self, join: Join) -> JoinSet:
        """``join_set_of`` for ``join``, each input an inner-join set taken from an estimate
        already made or built the same way, else estimated as a leaf."""
        sides: list[Any] = []   # estimates, or sets standing for them (_SetOnly)
        for child in (join.left, join.right):
            found = self._cache.get(child)
            if found is None and isinstance(child, Join) and child.kind == "inner":
                sides.append(_SetOnly(self._set_below(child)))
            else:
                sides.append(found if found is not None else self.estimate(child))
        return join_set_of(join, sides[0], sides[1], self._facts)

    def _combine(self, plan: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        return ESTIMATES[plan](self, plan, inputs)

    def _join(self, join: Join, left: RelEstimate, right: RelEstimate) -> RelEstimate:
        """Inner joins are estimated from the set they join (any order gives the same
        estimate); other kinds from their two inputs."""
        if join.kind in ("left", "right"):
            return self._outer_join(join, left, right)
        if join.kind != "inner":
            return estimate_join(join, left, right)
        return of_set(join_set_of(join, left, right), self.upper)

    def _outer_join(self, join: Join, left: RelEstimate, right: RelEstimate) -> RelEstimate:
        """A left or right join from its two inputs, never below its matched rows: the inner
        join of its sides on its condition, a subset of its rows, estimated as a set (its rows,
        and each column's values: ``join_sets.at_least_matched``). That set is kept on the
        estimate (``matched``) for the inner joins above, which are never below it either
        (``join_sets.estimate_join_set``)."""
        matched = join_set_of(join, left, right, self._facts)
        kept, kept_plan = (left, join.left) if join.kind == "left" else (right, join.right)
        preserved = JoinSet(*leaves_of(kept, kept_plan, self._facts))
        inner = of_set(matched, self.upper)
        # The matched rows are the set's (the same for any order of the joins below, so a
        # LEFT JOIN made INNER below never raises them); the binary estimate adds the
        # preserved side's rows that find no match.
        found = estimate_join(join, left, right, inner.rows)
        if inner.rows <= 0:
            return replace(found, matched=matched, preserved=preserved)
        if inner.rows >= found.rows:
            return replace(found, rows=inner.rows, columns=inner.columns, matched=matched, preserved=preserved)
        return replace(found, columns=at_least_matched(found.columns, inner, found.rows / inner.rows), matched=matched,
                       preserved=preserved)

    def _scan(self, scan: Scan) -> RelEstimate:
        found = self._scans.get(scan)
        if found is None:
            found = self._scans[scan] = self._convert_scan(scan)
        return found

    def _convert_scan(self, scan: Scan) -> RelEstimate:
        stats = self.stats.get(scan.table)
        if stats is None:
            rows = defaults.TABLE_ROWS
            columns = {c: ColumnEstimate.unknown(rows) for c in scan.columns}
            return RelEstimate(rows, columns, notes=frozenset({
                f"no statistics for {scan.table}: assumed {rows:,.0f} rows"}))
        rows = stats.row_count
        columns, notes = {}, []
        known: dict[Column, ColumnEstimate] = {}   # the columns with statistics
        for column, name in zip(scan.columns, scan.column_names):
            if name in stats.columns:
                columns[column] = known[column] = self.estimator.base_column(scan.table, name, stats)
            else:
                columns[column] = ColumnEstimate.unknown(rows)
                notes.append(f"no statistics for column {scan.table}.{name}")
        by_name = dict(zip(scan.column_names, scan.columns))
        groups: dict[frozenset[Column], float] = {}
        for key, distinct in stats.column_groups.items():
            names = key.split(",")
            if all(n in by_name for n in names):
                groups[frozenset(by_name[n] for n in names)] = distinct
        for unique in scan.keys:
            if len(unique) > 1:
                groups[frozenset(unique)] = rows
        single_keys = {k[0] for k in scan.keys if len(k) == 1}
        sample = SampleView(self.estimator.sample(scan.table, stats), dict(zip(scan.columns, scan.column_names))) \
            if stats.sample is not None else None
        origins = {c: Origin(scan, c in single_keys, name, known.get(c), rows, sample)
                   for c, name in zip(scan.columns, scan.column_names)}
        return RelEstimate(rows, columns, groups, origins, sample, frozenset(notes), conditions=())


class _SetOnly:
    """Stands for an inner join's estimate where only its set is read (``leaves_of``)."""

    __slots__ = ("join_set",)

    def __init__(self, join_set: JoinSet):
        self.join_set = join_set


def _sane(estimate: RelEstimate, plan: Plan) -> RelEstimate:
    if math.isfinite(estimate.rows) and estimate.rows >= 0:
        return estimate
    return replace(estimate, rows=0.0 if estimate.rows < 0 else 1.0,
                   notes=estimate.notes | {f"estimate for {type(plan).__name__} was not a number; replaced"})


def _project(plan: Project, rel: RelEstimate) -> RelEstimate:
    columns: dict[Column, ColumnEstimate | None] = {}
    names, origins = {}, {}
    renames = {}
    lazy: dict[Column, Expr] = {}
    for column, expr in plan.assignments:
        if isinstance(expr, ColumnRef):
            columns[column] = None   # the input's estimate, read when first asked (below)
            renames[expr.column] = column
            if expr.column in rel.origins:
                origins[column] = rel.origins[expr.column]
            if rel.sample is not None and expr.column in rel.sample.names:
                names[column] = rel.sample.names[expr.column]
        elif isinstance(expr, Constant):
            columns[column] = ColumnEstimate.of_values([expr.value]).with_rows(rel.rows)
        elif isinstance(expr, Call) and expr.name == ROW_ID:
            # Numbered rows: as many distinct values as rows, known, not a default; and a key of
            # its own origin, so a grouping by it after joins counts at most the numbered rows.
            columns[column] = replace(ColumnEstimate.unknown(rel.rows), default=False)
            origins[column] = Origin(plan, True)
        else:
            lazy[column] = expr
    # A column passed through is read from the input when first asked (through a join, that
    # derives it): the operators above read a few of the columns a projection keeps.
    sources = {column: expr.column for column, expr in plan.assignments if isinstance(expr, ColumnRef)}
    kept: Mapping[Column, ColumnEstimate] = DerivedColumns(
        columns, lambda c, e: rel.column(sources[c]) if e is None else e)
    if lazy:
        placeholders = {c: ColumnEstimate.unknown(rel.rows) for c in lazy}
        computed = DerivedColumns(placeholders, lambda c, _: _computed(lazy[c], rel))
        kept = layered(kept, computed)
    groups = {frozenset(renames[c] for c in g): d for g, d in rel.groups.items() if all(c in renames for c in g)}
    sample = SampleView(rel.sample.sample, names, rel.sample.mask) if rel.sample is not None and names else None
    return RelEstimate(rel.rows, kept, groups, origins, sample, rel.notes, conditions=rel.conditions)


def _computed(expr: Expr, rel: RelEstimate) -> ColumnEstimate:
    """A computed column: arithmetic on numbers has a distribution (``arithmetic``); otherwise
    none, but a bound on its distinct values when it is a function of one column (never more
    values than its input; a year per year of the range)."""
    found = _arithmetic(expr, rel)
    if found is not None:
        return found
    found = _case_with_nulls(expr, rel)
    if found is not None:
        return found
    inputs = columns_of(expr)
    if len(inputs) != 1:
        return ColumnEstimate.unknown(rel.rows)
    source = rel.column(next(iter(inputs)))
    distinct = source.distinct
    if isinstance(expr, Call) and expr.name == "extract_year":
        live = source.live
        bounds = [v for v, _ in live.mcv] + [b for s in live.segments for b in (s.lower, s.upper)]
        years = [b.year for b in bounds if hasattr(b, "year")]
        if years:
            distinct = min(distinct, max(years) - min(years) + 1)
    return replace(ColumnEstimate.unknown(rel.rows, distinct), default=source.default)


def _case_with_nulls(expr: Expr, rel: RelEstimate) -> ColumnEstimate | None:
    """A CASE with NULL branches: NULL for the rows its WHEN picks (each WHEN's selectivity
    among the rows earlier WHENs left), so that NOT IN over it knows the subquery holds NULLs.
    Its other values stay unknown."""
    if not (isinstance(expr, SpecialForm) and expr.form == "CASE"):
        return None
    *branches, otherwise = expr.args
    left, null_share = 1.0, 0.0
    for when, then in zip(branches[::2], branches[1::2]):
        picked = estimate_filter(rel, when).rows / rel.rows if rel.rows > 0 else 0.0
        share = left * min(max(picked, 0.0), 1.0)
        if isinstance(then, Constant) and then.value is None:
            null_share += share
        left -= share
    if isinstance(otherwise, Constant) and otherwise.value is None:
        null_share += left
    if null_share <= 0.0:
        return None
    null_share = min(null_share, 1.0)
    found = ColumnEstimate.unknown(rel.rows * (1.0 - null_share))
    return replace(found, nulls=rel.rows * null_share)


def _arithmetic(expr: Expr, rel: RelEstimate) -> ColumnEstimate | None:
    if not (isinstance(expr, Call) and expr.name in OPERATIONS and len(expr.args) == 2):
        return None
    a, b = expr.args
    if isinstance(a, ColumnRef) and isinstance(b, ColumnRef):
        return of_two(expr.name, rel.column(a.column), rel.column(b.column), rel.rows)
    for column, other, first in ((a, b, False), (b, a, True)):
        if isinstance(column, ColumnRef):
            value = constant_value(other)
            if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
                return with_constant(expr.name, rel.column(column.column), float(value), first)
    return None


def group_count(rel: RelEstimate, group_by: tuple[Column, ...]) -> tuple[float, list[str]]:
    """Distinct combinations of ``group_by`` in ``rel``: a key of a source table determines its
    other columns; measured column groups are used; other columns multiply; capped by the rows."""
    if not group_by:
        return 1.0, []
    group_by = tuple(one_per_class(rel, list(group_by)))
    for column in group_by:
        # A row number (row_id() in a Project, an early-out join's DISTINCT) determines every
        # column the numbered rows had: grouping by it and them counts the numbered rows left.
        origin = rel.origins.get(column)
        if origin is not None and origin.unique and isinstance(origin.scan, Project) \
                and set(group_by) <= set(origin.scan.output):
            return min(_groups_of(rel.column(column)), max(rel.rows, 0.0)), []
    notes = []
    by_scan: dict[object, list[Column]] = {}
    loose: list[Column] = []
    for column in group_by:
        origin = rel.origins.get(column)
        if origin is None:
            loose.append(column)
        else:
            by_scan.setdefault(origin.scan, []).append(column)
    total = 1.0
    for columns in by_scan.values():
        keys = [groups for groups in (_key_groups(rel, c) for c in columns) if groups is not None]
        if keys:
            total *= min(keys)
            continue
        known = rel.groups.get(frozenset(columns))
        if known is not None and len(columns) > 1:
            total *= min(known, rel.rows)
            continue
        for c in _undetermined(rel, columns):
            total *= _groups_of(rel.column(c))
    for c in loose:
        estimate = rel.column(c)
        if estimate.default:
            notes.append(f"no statistics for grouping column {c}: assumed all values distinct")
        total *= _groups_of(estimate)
    return max(min(total, rel.rows), 1.0 if rel.rows >= 1 else rel.rows), notes


def _key_groups(rel: RelEstimate, column: Column) -> float | None:
    """The groups a key of its table makes, grouped with other columns of that table (which it
    determines); None when the column is no key. A declared key makes one group per value, and
    one of NULLs. A key assumed from a hint or from exact statistics says nothing of its NULLs,
    whose rows may differ in every other column: at most one group per such row. The sample
    cannot show that a key determines the rest (``_undetermined``): a unique column has no
    repeated value whose rows could agree."""
    origin, estimate = rel.origins[column], rel.column(column)
    if origin.unique:
        return _groups_of(estimate)
    if _assumed_key(origin):
        return _values_of(estimate) + estimate.nulls
    return None


def _assumed_key(origin: Origin) -> bool:
    """Whether a column is a single-column unique key its table's catalog does not declare,
    assumed from a hint or from statistics whose distinct count is the non-NULL row count."""
    scan = origin.scan
    if not isinstance(scan, Scan) or not scan.assumed_keys or origin.name is None:
        return False
    return any(len(key.columns) == 1 and scan.column_names[scan.columns.index(key.columns[0])] == origin.name
               for key in scan.assumed_keys)


def _undetermined(rel: RelEstimate, columns: list[Column]) -> list[Column]:
    """The columns of one table none of the others determines (``dependence``, measured on
    the table's sample): a ticket's customer adds no groups to the ticket's. Of two columns
    that determine each other, the later stays."""
    if len(columns) < 2:
        return columns
    dropped: set[Column] = set()
    for c in columns:
        if any(d is not c and d not in dropped and origin_determines(rel.origins.get(d), rel.origins.get(c))
               for d in columns):
            dropped.add(c)
    return [c for c in columns if c not in dropped]


def _values_of(estimate: ColumnEstimate) -> float:
    return max(estimate.distinct, 1.0 if estimate.non_null > 0 else 0.0)


def _groups_of(estimate: ColumnEstimate) -> float:
    return _values_of(estimate) + (1.0 if estimate.nulls >= 0.5 else 0.0)


def one_per_class(estimate: RelEstimate, columns: list[Column]) -> list[Column]:
    """The columns with all but one of each group that inner-join conditions equate removed:
    equated columns hold the same value in every row, so they group as one (``lineitem ⋈ part``
    grouped by ``l_partkey, p_partkey`` has as many groups as either key, not their product)."""
    if estimate.join_set is None:
        return columns
    parent: dict[Column, Column] = {}

    def find(c: Column) -> Column:
        while parent.get(c, c) is not c:
            c = parent[c]
        return c

    for conjunct in estimate.join_set.conjuncts:
        pair = equated_columns(conjunct)
        if pair is not None:
            a, b = find(pair[0]), find(pair[1])
            if a is not b:
                parent[b] = a
    kept, seen = [], set()
    for c in columns:
        root = find(c)
        if root not in seen:
            seen.add(root)
            kept.append(c)
    return kept


def _aggregate(plan: Aggregate, rel: RelEstimate) -> RelEstimate:
    rows, notes = group_count(rel, plan.group_by)
    if not plan.group_by:
        rows = 1.0
    # Grouping columns too are derived when first read: a grouping by a key and the columns it
    # determines (a customer's key and its name, address, phone, ...) reads only the key to count
    # the groups.
    columns = DerivedColumns(dict.fromkeys(plan.group_by), lambda c, _: _one_row_per_group(rel.column(c), rows))
    # Aggregate outputs get a distribution when first read (``aggregates``): most are never
    # compared with anything.
    calls = dict(plan.aggregates)
    placeholders = {column: ColumnEstimate.unknown(rows) for column in calls}
    computed = DerivedColumns(placeholders, lambda c, _: aggregate_output(calls[c], rel, plan.group_by, rows))
    keep = set(plan.group_by)
    groups = {g: min(d, rows) for g, d in rel.groups.items() if g <= keep}
    origins = {c: o for c, o in rel.origins.items() if c in keep}
    for column, call in plan.aggregates:
        source = call.args[0] if call.name in ("min", "max") and len(call.args) == 1 else None
        if isinstance(source, ColumnRef) and source.column in rel.origins and plan.group_by:
            found = rel.origins[source.column]
            over = extreme_restriction(rel.join_set, source.column, plan.group_by) if rel.join_set is not None else None
            origins[column] = Origin(found.scan, False, found.name, extreme=call.name, extreme_over=over)
    return RelEstimate(rows, layered(columns, computed), groups, origins, None,
                       rel.notes | frozenset(notes))


def _grouping_sets(plan: GroupingSets, rel: RelEstimate) -> RelEstimate:
    """Grouping sets: each set's groups counted as an aggregation by its keys counts them (the
    empty set one row, even over no input), summed over the sets. A key's output has one row per
    group of the sets holding it, and a NULL in every row of the others; a GROUPING column has
    each set's value in that set's rows. Aggregates are distributed as over the finest set's
    groups (the coarser sets' larger groups are left out of their distribution)."""
    counted = [group_count(rel, tuple(plan.keys[i] for i in s)) if s else (1.0, []) for s in plan.sets]
    per_set = [rows for rows, _ in counted]
    rows = sum(per_set)
    notes = frozenset(note for _, found in counted for note in found)
    columns: dict[Column, ColumnEstimate] = {}
    for position, (key, output) in enumerate(zip(plan.keys, plan.outputs)):
        holding = sum(n for s, n in zip(plan.sets, per_set) if position in s)
        found = _one_row_per_group(rel.column(key), holding) if holding > 0 else ColumnEstimate.unknown(0.0)
        columns[output] = replace(found.live, nulls=found.nulls + max(rows - holding, 0.0))
    finest = max(range(len(plan.sets)), key=lambda i: (per_set[i], len(plan.sets[i])))
    finest_keys = tuple(plan.keys[i] for i in plan.sets[finest])
    for column, call in plan.aggregates:
        columns[column] = aggregate_output(call, rel, finest_keys, per_set[finest]).with_rows(rows)
    for column, positions in plan.groupings:
        values: dict[int, float] = {}
        for grouping_set, n in zip(plan.sets, per_set):
            value = plan.grouping_value(positions, grouping_set)
            values[value] = values.get(value, 0.0) + n
        columns[column] = ColumnEstimate("number", 0.0, tuple(values.items()), ())
    return RelEstimate(rows, columns, notes=rel.notes | notes)


def _one_row_per_group(estimate: ColumnEstimate, rows: float) -> ColumnEstimate:
    estimate = estimate.live
    groups = max(_groups_of(estimate), 1.0)
    per_value = rows / groups
    mcv = tuple((v, per_value * min(r, 1.0)) for v, r in estimate.mcv)
    segments = tuple(Segment(s.lower, s.upper, s.distinct * per_value, s.distinct, s.domain)
                     for s in estimate.segments)
    return replace(estimate, nulls=per_value if estimate.nulls >= 0.5 else 0.0, mcv=mcv, segments=segments)


def _limit(plan: Limit, rel: RelEstimate) -> RelEstimate:
    rows = max(rel.rows - plan.offset, 0.0)
    if plan.count is not None:
        rows = min(rows, float(plan.count))
    if rows == rel.rows:
        return rel
    factor = rows / rel.rows if rel.rows > 0 else 0.0
    return RelEstimate(rows, DerivedColumns(rel.columns, lambda c, e: e.scaled(factor)), rel.groups, rel.origins,
                       None, rel.notes)


def _set_op(plan: SetOp, inputs: list[RelEstimate]) -> RelEstimate:
    notes = frozenset().union(*[i.notes for i in inputs])
    if plan.kind == "union":
        rows = sum(i.rows for i in inputs)
        if plan.distinct:
            rows = min(rows, sum(group_count(i, cols)[0] for i, cols in zip(inputs, plan.inputs_columns)))
    elif plan.kind == "intersect":
        counts = [group_count(i, cols)[0] if plan.distinct else i.rows for i, cols in zip(inputs, plan.inputs_columns)]
        rows = min(counts)
        notes |= {"INTERSECT: assumed the smaller input is contained in the others"}
    else:
        first = inputs[0]
        rows = group_count(first, plan.inputs_columns[0])[0] if plan.distinct else first.rows
        notes |= {"EXCEPT: assumed no row of the first input is removed"}
    columns = {}
    for index, column in enumerate(plan.columns):
        found = None
        if plan.kind == "union" and not plan.distinct:
            # A UNION ALL's rows holding a value are its inputs' rows holding it (the channel
            # tag of each branch, the years each reads): their distributions summed.
            found = summed([i.column(cols[index]) for i, cols in zip(inputs, plan.inputs_columns)])
        if found is None:
            distinct = sum(i.column(cols[index]).distinct for i, cols in zip(inputs, plan.inputs_columns))
            found = ColumnEstimate.unknown(rows, distinct)
        columns[column] = found
    return RelEstimate(rows, columns, notes=notes)


def _values(plan: Values) -> RelEstimate:
    rows = float(len(plan.rows))
    columns = {}
    for index, column in enumerate(plan.columns):
        values = [e.value if isinstance(e := r[index], Constant) else object() for r in plan.rows]
        if all(isinstance(r[index], Constant) for r in plan.rows):
            columns[column] = ColumnEstimate.of_values(values)
        else:
            columns[column] = ColumnEstimate.unknown(rows)
    return RelEstimate(rows, columns)


# How each operator is estimated from its inputs' estimates (cbo.ir.dispatch).
ESTIMATES: OperatorTable[Callable[[EstimationContext, Any, list[RelEstimate]], RelEstimate]] = \
    OperatorTable("estimation")
ESTIMATES.register(Scan)(lambda est, plan, inputs: est._scan(plan))
ESTIMATES.register(Filter)(lambda est, plan, inputs: estimate_filter(inputs[0], plan.predicate))
ESTIMATES.register(Join)(lambda est, plan, inputs: est._join(plan, inputs[0], inputs[1]))
ESTIMATES.register(Project)(lambda est, plan, inputs: _project(plan, inputs[0]))
ESTIMATES.register(Aggregate)(lambda est, plan, inputs: _aggregate(plan, inputs[0]))
ESTIMATES.register(GroupingSets)(lambda est, plan, inputs: _grouping_sets(plan, inputs[0]))
ESTIMATES.register(Sort)(lambda est, plan, inputs: inputs[0])
ESTIMATES.register(Limit)(lambda est, plan, inputs: _limit(plan, inputs[0]))
ESTIMATES.register(SetOp)(lambda est, plan, inputs: _set_op(plan, inputs))
ESTIMATES.register(Values)(lambda est, plan, inputs: _values(plan))
# A CTE's anchor returns its body's rows; a consumer reads the producer's, under its own names.
ESTIMATES.register(CteAnchor)(lambda est, plan, inputs: inputs[1])
ESTIMATES.register(CteConsumer)(lambda est, plan, inputs: _consumer(plan, est.estimate(plan.producer)))


def _consumer(plan: CteConsumer, producer: RelEstimate) -> RelEstimate:
    renaming = Project(plan.producer, tuple((c, ColumnRef(p)) for c, p in zip(plan.columns, plan.producer.output)))
    return _project(renaming, producer)
ESTIMATES.register(Window)(lambda est, plan, inputs: estimate_window(plan, inputs[0], group_count))
