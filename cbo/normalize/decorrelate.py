"""Decorrelation: subquery expressions become joins, with SQL's NULL semantics kept exactly.

Where a subquery stands decides what it becomes:

* a top-level conjunct of a WHERE/HAVING filter:
  ``EXISTS S`` -> semi join; ``NOT EXISTS S`` -> anti join;
  ``x IN S`` / ``x op ANY S`` -> semi join on ``x = y`` / ``x op y``;
  ``x NOT IN S`` -> anti join on ``x = y OR (x = y) IS NULL`` (a NULL on either side makes NOT IN
  unknown, so the row goes), simplified to ``x = y`` when neither side can be NULL; uncorrelated,
  a null-aware anti join on ``x = y`` instead (hashed, as Spark runs NOT IN);
  ``x op ALL S`` -> anti join on ``(x op y) IS NOT TRUE``;
* anywhere else (under OR, NOT, CASE, in the SELECT list): a mark join whose boolean column
  carries the three-valued result;
* a scalar subquery: a left join with the subquery's single row per correlation value. Its
  result for outer rows without a match is the subquery evaluated on no rows (NULL, or 0 for
  COUNT), restored by a CASE over a match flag when that is not NULL. A scalar subquery that
  is not an aggregate without GROUP BY is first wrapped in one that counts its rows; the value
  read above the join raises "scalar subquery returned more than one row" when that count
  is two or more, as the engines do (only for results some outer row actually uses).

Correlated predicates are pulled up out of the subquery (through filters, projections, inner
joins and the preserved side of outer joins) into the join condition. Under an aggregate,
equality correlations ``inner = outer`` become extra grouping columns; other correlations use
the outer query's distinct correlation values as a domain (Neumann and Kemper, "Unnesting
Arbitrary Queries", BTW 2015) joined into the subquery, matched back with IS NOT DISTINCT FROM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cbo.errors import SqlError
from cbo.ir import types as T
from cbo.ir.expressions import (
    FALSE,
    NEGATED,
    TRUE,
    AggregateCall,
    Call,
    Column,
    ColumnFactory,
    ColumnRef,
    Constant,
    Expr,
    SpecialForm,
    columns_of,
    compare,
    conjunction,
    conjuncts,
    is_null,
    negate,
    substitute,
    transform,
)
from cbo.ir.expressions import walk as walk_expr
from cbo.ir.kinds import Comparison, JoinKind, SubqueryKind
from cbo.ir.operators import (
    Aggregate,
    Filter,
    Join,
    Limit,
    Plan,
    Project,
    SetOp,
    Sort,
    SubqueryExpr,
    contains_subquery,
    free_columns,
)
from cbo.normalize.factor_or import factored_conjuncts

MORE_THAN_ONE_ROW = "scalar subquery returned more than one row"


class Unsupported(SqlError):
    """A subquery of a form decorrelation does not rewrite; ``located`` once its message says
    where the subquery is."""

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located


def _located(sub: SubqueryExpr, exc: Unsupported) -> Unsupported:
    """``exc`` naming where ``sub`` is, unless a subquery inside it already did."""
    if exc.located or not sub.where:
        return exc
    return Unsupported(f"{sub.where}{exc}", located=True)


def _join_name(kind: JoinKind) -> str:
    """'a left join', 'an anti join': a join kind as a message names it."""
    words = kind.replace("_", "-")
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words} join"


# What an operator is, as an error about a subquery under it names it.
_OPERATOR_NAMES = {"Window": "a window function", "Values": "VALUES", "GroupingSets": "grouping sets"}


def decorrelate(plan: Plan, columns: ColumnFactory) -> Plan:
    """Rewrite every subquery expression of ``plan`` into joins."""
    return _Decorrelator(columns).rewrite(plan)


# NOT (x IN S) = x NOT IN S = x <> ALL S; NOT (x op ANY S) = x (not op) ALL S, and the reverse.
_NEGATED_QUANTIFIER: dict[SubqueryKind, SubqueryKind] = {"in": "all", "any": "all", "all": "any"}

@dataclass
class _Pulled:
    plan: Plan              # uncorrelated
    predicates: list[Expr]  # over plan.output and outer columns
    # Output columns of the subquery computed from outer columns (a correlated select list,
    # ``x IN (SELECT o.k FROM ... GROUP BY ...)``): each one's expression over plan.output and
    # the outer columns, which the join evaluates where the column was read.
    computed: dict[Column, Expr] = field(default_factory=dict)

    def value(self, column: Column) -> Expr:
        """What the subquery's output ``column`` is, over the join's two sides."""
        return self.computed.get(column, ColumnRef(column))


class _Decorrelator:
    def __init__(self, columns: ColumnFactory):
        self.columns = columns

    # -- walking the plan -----------------------------------------------------------------------

    def rewrite(self, plan: Plan) -> Plan:
        children = tuple(self.rewrite(child) for child in plan.children)
        if children != plan.children:
            plan = plan.with_children(children)
        if isinstance(plan, Filter) and contains_subquery(plan.predicate):
            return self._filter(plan)
        if isinstance(plan, Project) and any(contains_subquery(e) for _, e in plan.assignments):
            return self._project(plan)
        for expr in plan.expressions():
            if contains_subquery(expr):
                sub = next(e for e in walk_expr(expr) if isinstance(e, SubqueryExpr))
                place = f"the ON condition of {_join_name(plan.kind)}" if isinstance(plan, Join) \
                    else f"{_OPERATOR_NAMES.get(type(plan).__name__, type(plan).__name__)}"
                advice = ": move it to WHERE" if isinstance(plan, Join) and plan.kind == "inner" else ""
                raise Unsupported(f"{sub.where}a subquery in {place} is not supported{advice}", located=True)
        return plan

    def _filter(self, node: Filter) -> Plan:
        plan = node.input
        # The conjuncts without subqueries filter first: a subquery's correlation domain is then
        # the filtered (joined) rows, not the product of the FROM clause's tables.
        plain = [c for c in conjuncts(node.predicate) if not contains_subquery(c)]
        if plain:
            plan = Filter(plan, conjunction(plain))
        keep: list[Expr] = []
        for conjunct in conjuncts(node.predicate):
            if not contains_subquery(conjunct):
                continue
            rewritten = self._filter_conjunct(plan, conjunct)
            if rewritten is not None:
                plan = rewritten
                continue
            plan, expr = self._replace_in_filter(plan, conjunct)
            keep.append(expr)
        if keep:
            plan = Filter(plan, conjunction(keep))
        if plan.output != node.output:
            plan = Project(plan, tuple((c, ColumnRef(c)) for c in node.output))
        return plan

    def _project(self, node: Project) -> Plan:
        plan = node.input
        assignments = []
        for column, expr in node.assignments:
            plan, rewritten = self._replace_subqueries(plan, expr)
            assignments.append((column, rewritten))
        return Project(plan, tuple(assignments))

    # -- subqueries as filter conjuncts -------------------------------------------------------------

    def _filter_conjunct(self, outer: Plan, conjunct: Expr) -> Plan | None:
        negated = (isinstance(conjunct, SpecialForm) and conjunct.form == "NOT"
                   and isinstance(conjunct.args[0], SubqueryExpr))
        sub = conjunct.args[0] if negated and isinstance(conjunct, SpecialForm) else conjunct
        if not isinstance(sub, SubqueryExpr) or sub.kind == "scalar":
            return None
        try:
            return self._conjunct_join(outer, sub, negated)
        except Unsupported as exc:
            raise _located(sub, exc) from None

    def _conjunct_join(self, outer: Plan, sub: SubqueryExpr, negated: bool) -> Plan:
        if sub.kind == "exists":
            return self._exists_join(outer, sub, "anti" if negated else "semi")
        kind: SubqueryKind = sub.kind
        comparison: Comparison = sub.comparison or "eq"
        if negated:  # NOT (x IN S) = x NOT IN S; NOT (x op ANY S) = x (not op) ALL S
            kind = _NEGATED_QUANTIFIER[kind]
            comparison = NEGATED[comparison]
        pulled, y = self._prepare(outer, sub)
        assert sub.operand is not None
        test = compare(comparison, sub.operand, pulled.value(y))
        if kind in ("in", "any"):
            condition = conjunction(pulled.predicates + [test])
            return Join("semi", outer, pulled.plan, condition)
        # x op ALL S keeps the row iff no row of S makes (x op y) FALSE or NULL.
        never_null = columns_of(sub.operand) <= outer.not_null and y in pulled.plan.not_null
        if comparison == "neq" and not never_null and not pulled.predicates and not pulled.computed \
                and not contains_subquery(sub.operand):
            return self._null_aware_anti(outer, pulled.plan, sub.operand, y)
        failing = negate(test) if never_null else SpecialForm(
            "OR", (negate(test), is_null(test)), T.BOOLEAN)
        return Join("anti", outer, pulled.plan, conjunction(pulled.predicates + [_simplify_not(failing)]))

    def _null_aware_anti(self, outer: Plan, inner: Plan, operand: Expr, y: Column) -> Plan:
        """Uncorrelated single-column NOT IN (= x <> ALL S) with a nullable side: the null-aware
        anti join, whose ``x = y`` key lets it run hashed (see Join). An x that is not a column
        is computed into one first (as Spark keys its join on the expression), then dropped."""
        if isinstance(operand, ColumnRef):
            return Join("null_aware_anti", outer, inner, compare("eq", operand, ColumnRef(y)))
        key = self.columns.new("not_in_key", operand.type)
        widened = Project(outer, tuple((c, ColumnRef(c)) for c in outer.output) + ((key, operand),))
        join = Join("null_aware_anti", widened, inner, compare("eq", ColumnRef(key), ColumnRef(y)))
        return Project(join, tuple((c, ColumnRef(c)) for c in outer.output))

    def _exists_join(self, outer: Plan, sub: SubqueryExpr, kind: JoinKind) -> Plan:
        if _is_scalar_aggregate(sub.plan):
            # An aggregate without GROUP BY always yields one row: EXISTS is TRUE.
            return outer if kind == "semi" else Filter(outer, FALSE)
        pulled = self._pull(_existential(self.rewrite(sub.plan)), outer)
        return Join(kind, outer, pulled.plan, conjunction(pulled.predicates))

    def _prepare(self, outer: Plan, sub: SubqueryExpr) -> tuple[_Pulled, Column]:
        inner = self.rewrite(sub.plan)
        if _is_scalar_aggregate(inner) and free_columns(inner):
            raise Unsupported("a correlated aggregate subquery without GROUP BY is not supported in IN/ANY/ALL")
        pulled = self._pull(inner, outer)
        return pulled, inner.output[0]

    # -- subqueries inside other expressions ----------------------------------------------------------

    def _replace_subqueries(self, plan: Plan, expr: Expr) -> tuple[Plan, Expr]:
        state = {"plan": plan}

        def visit(e: Expr) -> Expr | None:
            if not isinstance(e, SubqueryExpr):
                return None
            operand = None
            if e.operand is not None:
                state["plan"], operand = self._replace_subqueries(state["plan"], e.operand)
            try:
                if e.kind == "scalar":
                    state["plan"], value = self._scalar(state["plan"], e)
                    return value
                state["plan"], mark = self._mark(state["plan"], e, operand)
            except Unsupported as exc:
                raise _located(e, exc) from None
            return mark

        rewritten = transform(expr, visit)
        return state["plan"], rewritten

    def _replace_in_filter(self, plan: Plan, expr: Expr) -> tuple[Plan, Expr]:
        """A WHERE conjunct's subqueries replaced, those reached from its root through AND and
        OR alone by two-valued marks (``_mark``'s ``two_valued``).

        Read as FALSE where it is NULL, such a subquery leaves the conjunct's verdict as it is:
        Kleene's AND and OR are monotone (FALSE < NULL < TRUE) and regular (a result that is
        TRUE with an operand NULL stays TRUE whatever the operand becomes), so the conjunct is
        TRUE with the subquery NULL iff it is TRUE with the subquery FALSE, and a filter keeps
        exactly the rows whose conjuncts are TRUE. Under NOT, CASE, IS NULL and the like, NULL
        and FALSE differ, and the three-valued mark stays."""
        if isinstance(expr, SpecialForm) and expr.form in ("AND", "OR"):
            args = []
            for arg in expr.args:
                plan, rewritten = self._replace_in_filter(plan, arg)
                args.append(rewritten)
            return plan, SpecialForm(expr.form, tuple(args), expr.type)
        if isinstance(expr, SubqueryExpr) and expr.kind in ("in", "any") and isinstance(expr.operand, ColumnRef):
            try:
                return self._mark(plan, expr, expr.operand, two_valued=True)
            except Unsupported as exc:
                raise _located(expr, exc) from None
        return self._replace_subqueries(plan, expr)

    def _mark(self, outer: Plan, sub: SubqueryExpr, operand: Expr | None,
              two_valued: bool = False) -> tuple[Plan, Expr]:
        """The subquery as a mark join and the expression reading its mark. ``two_valued``:
        NULL may be read as FALSE (``_replace_in_filter``), so ``x = ANY S`` with x and y
        columns is EXISTS with ``x = y`` joined to the correlation: the equality is a hash key
        of the mark join, and no row of S needs counting for a NULL."""
        mark = self.columns.new("mark", T.BOOLEAN)
        if sub.kind == "exists":
            if _is_scalar_aggregate(sub.plan):
                return outer, TRUE
            pulled = self._pull(_existential(self.rewrite(sub.plan)), outer)
            return Join("mark", outer, pulled.plan, conjunction(pulled.predicates), mark, TRUE), ColumnRef(mark)
        pulled, y = self._prepare(outer, sub)
        assert operand is not None
        comparison = sub.comparison or "eq"
        if sub.kind == "all":  # x op ALL S == NOT (x (not op) ANY S) in three-valued logic
            test = compare(NEGATED[comparison], operand, pulled.value(y))
            join = Join("mark", outer, pulled.plan, conjunction(pulled.predicates), mark, test)
            return join, negate(ColumnRef(mark))
        test = compare(comparison, operand, pulled.value(y))
        if two_valued and comparison == "eq" and isinstance(operand, ColumnRef) \
                and isinstance(pulled.value(y), ColumnRef):
            return Join("mark", outer, pulled.plan, conjunction(pulled.predicates + [test]), mark, TRUE), \
                ColumnRef(mark)
        return Join("mark", outer, pulled.plan, conjunction(pulled.predicates), mark, test), ColumnRef(mark)

    def _scalar(self, outer: Plan, sub: SubqueryExpr) -> tuple[Plan, Expr]:
        inner = self.rewrite(sub.plan)
        guard: tuple[Column, Column] | None = None
        if not _is_scalar_aggregate(inner):
            inner, guard = self._count_rows(inner)
        empty = _empty_result(inner)
        pulled = self._pull(inner, outer)
        value: Expr = pulled.value(inner.output[0])
        right = pulled.plan
        if empty is not None and pulled.predicates:
            flag = self.columns.new("matched", T.BOOLEAN)
            right = Project(right, tuple((c, ColumnRef(c)) for c in right.output) + ((flag, TRUE),))
            value = SpecialForm("CASE", (is_null(ColumnRef(flag)), empty, value), value.type)
        if guard is not None:
            count, any_value = guard
            error = Call("raise_error", (Constant(MORE_THAN_ONE_ROW, T.VARCHAR),), any_value.type)
            checked = SpecialForm("CASE", (compare("gt", ColumnRef(count), Constant(1, T.INTEGER)), error,
                                           ColumnRef(any_value)), any_value.type)
            column = self.columns.new(any_value.name, any_value.type)
            if pulled.predicates:
                # Correlated: checked for every outer row with its own subquery result, as the
                # engines do, by a projection above the join (never short-circuited by OR/CASE).
                joined = Join("left", outer, right, conjunction(pulled.predicates))
                passed = tuple((c, ColumnRef(c)) for c in joined.output)
                return Project(joined, passed + ((column, checked),)), ColumnRef(column)
            # Uncorrelated: checked once, whether or not an outer row reads it (DuckDB, Spark).
            right = Project(right, ((column, checked),))
            value = ColumnRef(column)
        return Join("left", outer, right, conjunction(pulled.predicates)), value

    def _count_rows(self, inner: Plan) -> tuple[Plan, tuple[Column, Column]]:
        """Wrap a subquery that may return several rows: its row count and any one value."""
        value = inner.output[0]
        count = self.columns.new("rows", T.BIGINT)
        any_value = self.columns.new(value.name, value.type)
        aggregate = Aggregate(inner, (), ((any_value, AggregateCall("any_value", (ColumnRef(value),), False,
                                                                    value.type)),
                                          (count, AggregateCall("count_star", (), False, T.BIGINT))))
        return aggregate, (count, any_value)

    # -- pulling correlated predicates up -------------------------------------------------------------

    def _pull(self, plan: Plan, outer: Plan) -> _Pulled:
        if not free_columns(plan):
            return _Pulled(plan, [])
        if isinstance(plan, Filter):
            below = self._pull(plan.input, outer)
            local: list[Expr] = []
            correlated: list[Expr] = []
            produced = set(below.plan.output)
            # A correlation repeated in every branch of an OR (TPC-DS q41's ``i_manufact =
            # i1.i_manufact AND (...) OR i_manufact = i1.i_manufact AND (...)``) is factored out
            # first: it is then an equality the aggregate groups by, and the rest filters locally,
            # instead of the whole OR needing the outer rows' values as a domain.
            for conjunct in factored_conjuncts(substitute(plan.predicate, below.computed)):
                (local if columns_of(conjunct) <= produced else correlated).append(conjunct)
            node = Filter(below.plan, conjunction(local)) if local else below.plan
            return _Pulled(node, below.predicates + correlated, below.computed)
        if isinstance(plan, Project):
            below = self._pull(plan.input, outer)
            produced = set(below.plan.output)
            assignments = []
            computed: dict[Column, Expr] = {}
            for column, expr in plan.assignments:
                expr = substitute(expr, below.computed)
                if columns_of(expr) <= produced:
                    assignments.append((column, expr))
                else:   # reads the outer query: evaluated by the join, over both sides
                    computed[column] = expr
            have = {c for c, _ in assignments}
            needed = set().union(*[columns_of(p) for p in below.predicates + list(computed.values())])
            for column in sorted(needed & produced, key=lambda c: c.id):
                if column not in have:
                    assignments.append((column, ColumnRef(column)))
            return _Pulled(Project(below.plan, tuple(assignments)), below.predicates, computed)
        if isinstance(plan, Join):
            if free_columns(plan.right) and plan.kind != "inner":
                raise Unsupported(f"a correlated reference inside the right side of {_join_name(plan.kind)} "
                                  "in a subquery is not supported")
            left = self._pull(plan.left, outer)
            right = self._pull(plan.right, outer) if plan.kind == "inner" else _Pulled(plan.right, [])
            if left.computed and plan.kind in ("right", "full"):
                raise Unsupported("an outer query's column in the select list of a subquery, padded with NULLs "
                                  f"by {_join_name(plan.kind)}, is not supported")
            computed = {**left.computed, **right.computed}
            produced = set(left.plan.output) | set(right.plan.output)
            local, correlated = [], []
            for conjunct in factored_conjuncts(substitute(plan.condition, computed)):
                (local if columns_of(conjunct) <= produced | {plan.mark} else correlated).append(conjunct)
            if correlated and plan.kind != "inner":
                if plan.kind in ("semi", "anti", "mark", "null_aware_anti"):
                    raise Unsupported("a subquery (EXISTS, IN, ANY/ALL) nested in a subquery and reading a query "
                                      "two levels out is not supported")
                raise Unsupported(f"{_join_name(plan.kind)} in a subquery whose ON condition reads an outer "
                                  "query's column (or a scalar subquery in it reading a query two levels out) "
                                  "is not supported")
            node = Join(plan.kind, left.plan, right.plan, conjunction(local), plan.mark, plan.mark_predicate)
            return _Pulled(node, left.predicates + right.predicates + correlated, computed)
        if isinstance(plan, Aggregate):
            return self._pull_aggregate(plan, outer)
        if isinstance(plan, Sort):
            below = self._pull(plan.input, outer)
            # order inside a subquery does not matter
            return _Pulled(below.plan, below.predicates, below.computed)
        if isinstance(plan, Limit):
            raise Unsupported("LIMIT/OFFSET in a correlated subquery is not supported")
        if isinstance(plan, SetOp):
            raise Unsupported(f"a set operation ({plan.kind.upper()}) in a correlated subquery is not supported")
        name = _OPERATOR_NAMES.get(type(plan).__name__, type(plan).__name__)
        raise Unsupported(f"an outer query's column read below {name} in a subquery is not supported")

    def _pull_aggregate(self, plan: Aggregate, outer: Plan) -> _Pulled:
        below = self._pull(plan.input, outer)
        if below.computed and any(columns_of(e) & set(below.computed) for e in plan.expressions()):
            raise Unsupported("grouping or aggregating an outer query's column in a subquery is not supported")
        produced = set(below.plan.output)
        equalities: list[tuple[Column, Expr]] = []
        for predicate in below.predicates:
            pair = _inner_outer_equality(predicate, produced)
            if pair is None:
                return self._pull_aggregate_with_domain(plan, below, outer)
            equalities.append(pair)
        group_by = list(plan.group_by)
        predicates: list[Expr] = []
        for inner_column, outer_expr in equalities:
            if inner_column not in group_by:
                group_by.append(inner_column)
            predicates.append(compare("eq", ColumnRef(inner_column), outer_expr))
        return _Pulled(Aggregate(below.plan, tuple(group_by), plan.aggregates), predicates)

    def _pull_aggregate_with_domain(self, plan: Aggregate, below: _Pulled, outer: Plan) -> _Pulled:
        produced = set(below.plan.output)
        outer_columns = sorted(set().union(*[columns_of(p) for p in below.predicates]) - produced,
                               key=lambda c: c.id)
        missing = [c for c in outer_columns if c not in outer.output]
        if missing:
            raise Unsupported("a correlated aggregate subquery referring to a query two levels out is not supported")
        copies = {c: self.columns.new(c.name, c.type) for c in outer_columns}
        domain = Aggregate(Project(outer, tuple((copies[c], ColumnRef(c)) for c in outer_columns)),
                           tuple(copies[c] for c in outer_columns))
        mapping = {c: ColumnRef(copies[c]) for c in outer_columns}
        condition = conjunction(substitute(p, mapping) for p in below.predicates)
        joined = Join("inner", domain, below.plan, condition)
        grouped = Aggregate(joined, tuple(copies[c] for c in outer_columns) + plan.group_by, plan.aggregates)
        predicates: list[Expr] = [Call("is_not_distinct_from", (ColumnRef(copies[c]), ColumnRef(c)), T.BOOLEAN)
                      for c in outer_columns]
        return _Pulled(grouped, predicates)


# --------------------------------------------------------------------------------------------
# Helpers


def _inner_outer_equality(predicate: Expr, produced: set[Column]) -> tuple[Column, Expr] | None:
    """``inner_column = outer_expression`` (either way round), else None."""
    if not (isinstance(predicate, Call) and predicate.name == "eq"):
        return None
    a, b = predicate.args
    for inner, other in ((a, b), (b, a)):
        if isinstance(inner, ColumnRef) and inner.column in produced and not (columns_of(other) & produced):
            return inner.column, other
    return None


def _existential(plan: Plan) -> Plan:
    """What EXISTS needs of a subquery: whether it has a row. An ORDER BY or a DISTINCT (an
    aggregate without aggregates, which keeps a row iff its input has one) changes no answer,
    so they go, with projections above them; a DISTINCT kept would group by every column and,
    correlated by anything but equalities, need the outer rows' values as a domain (a join of
    the whole outer query) for nothing. The select list's own projection stays: it prunes the
    columns the join carries."""
    def removable(node: Plan) -> bool:
        return isinstance(node, Sort) or isinstance(node, Aggregate) and not node.aggregates and bool(node.group_by)

    while isinstance(plan, (Sort, Aggregate, Project)) and \
            (removable(plan) or isinstance(plan, Project) and removable(plan.input)):
        plan = plan.input
    return plan


def _is_scalar_aggregate(plan: Plan) -> bool:
    """An aggregate without GROUP BY under projections: exactly one row, always."""
    while isinstance(plan, Project):
        plan = plan.input
    return isinstance(plan, Aggregate) and not plan.group_by


def _empty_result(plan: Plan) -> Expr | None:
    """The first output of a scalar aggregate evaluated on no rows, when that is not NULL."""
    chain: list[Project] = []
    node = plan
    while isinstance(node, Project):
        chain.append(node)
        node = node.input
    assert isinstance(node, Aggregate)
    values: dict[Column, Expr] = {c: Constant(0, T.BIGINT) if a.name in ("count", "count_star")
                                  else Constant(None, c.type) for c, a in node.aggregates}
    if all(isinstance(v, Constant) and v.value is None for v in values.values()):
        return None
    for project in reversed(chain):
        values = {c: substitute(e, values) for c, e in project.assignments}
    result = values.get(plan.output[0])
    if result is None or (isinstance(result, Constant) and result.value is None):
        return None
    return result


def _simplify_not(expr: Expr) -> Expr:
    """NOT (a op b) -> a (negated op) b; keeps NULL semantics since both are NULL on NULL input."""
    if isinstance(expr, SpecialForm) and expr.form == "NOT":
        inner = expr.args[0]
        if isinstance(inner, Call) and inner.name in NEGATED:
            return Call(NEGATED[inner.name], inner.args, T.BOOLEAN)
    if isinstance(expr, SpecialForm) and expr.form == "OR":
        return SpecialForm("OR", tuple(_simplify_not(a) for a in expr.args), expr.type)
    return expr


__all__ = ["decorrelate", "Unsupported", "MORE_THAN_ONE_ROW"]
