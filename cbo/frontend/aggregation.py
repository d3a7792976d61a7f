"""Binding aggregation: GROUP BY, aggregate calls, and the expressions evaluated after them.

A Project computes grouping expressions and aggregate arguments that are not plain columns,
an Aggregate groups, and the SELECT list, HAVING and ORDER BY are rewritten over its outputs:
an expression equal to a GROUP BY expression reads its column, an aggregate call reads its
result, and a bare column that is neither grouped nor aggregated is an error. GROUP BY may name
select-list positions, and (as Spark and DuckDB allow) select-list aliases.

``ROLLUP``, ``CUBE`` and ``GROUPING SETS`` (``_grouping_sets``) make a GroupingSets operator
instead when they give more than one set; ``GROUPING()`` reads its grouping columns, and a
grouping expression read after it reads its output, NULL in the rows of sets without it.
"""

from __future__ import annotations

from sqlglot import exp

from cbo.frontend.bind_expressions import GROUPING, ExpressionBinder
from cbo.frontend.errors import SqlError, error_at
from cbo.frontend.query_context import QueryContext
from cbo.frontend.scope import Scope
from cbo.frontend.windows import WindowBinder
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Column, ColumnRef, Constant, Expr, transform, walk
from cbo.ir.operators import Aggregate, GroupingSets, Plan, Project

MAX_GROUPING_SETS = 4096   # as Spark's analyzer allows (a CUBE of 12 expressions)
MAX_GROUPING_KEYS = 63     # a GROUPING of every key is a BIGINT


def bind_aggregation(self: QueryContext, select: exp.Select, scope: Scope, plan: Plan,
                     items: list[tuple[str, Expr, exp.Expr]],
                     conditions: list[Expr]) -> tuple[Plan, PostAggregation]:
    """The Aggregate (or GroupingSets) over a pre-projection for a grouped SELECT, and the
    rewriter for what follows it (the select list, ORDER BY, and ``conditions``: HAVING and
    QUALIFY)."""
    group = select.args.get("group")
    keys: list[Expr] = []                 # the distinct grouping expressions, in order of appearance
    sets: list[tuple[int, ...]] = [()]    # each grouping set: positions in keys
    if group is not None:
        sets = _grouping_sets(self, group, scope, items, keys)
    calls: list[AggregateCall] = []

    def collect(expr: Expr) -> None:
        for node in walk(expr):
            if isinstance(node, AggregateCall) and node not in calls:
                calls.append(node)

    for _, expr, _ in items:
        collect(expr)
    for condition in conditions:
        collect(condition)
    order = select.args.get("order")
    if order is not None:
        for ordered in order.expressions:
            if not (isinstance(ordered.this, exp.Literal) or isinstance(ordered.this, exp.Column)
                    and not ordered.this.table and any(n.lower() == ordered.this.name.lower() for n, _, _ in items)):
                collect(WindowBinder(self, scope, "ORDER BY", allow_aggregates=True)
                        .bind(ordered.this))

    # Pre-projection: the columns the Aggregate reads, computing non-column expressions.
    pre: dict[Expr, Column] = {}

    def as_column(expr: Expr, name: str) -> Column:
        if isinstance(expr, ColumnRef):
            pre.setdefault(expr, expr.column)
            return expr.column
        if expr not in pre:
            pre[expr] = self.columns.new(name, expr.type)
        return pre[expr]

    # Distinct expressions: distinct columns (a computed one gets its own in the pre-projection).
    key_columns = [as_column(expr, f"_group{index}") for index, expr in enumerate(keys)]
    key_index = {expr: index for index, expr in enumerate(keys)}
    rollup = len(sets) > 1
    if rollup:
        outputs = [self.columns.new(c.name, c.type, True) for c in key_columns]
    else:   # one set: a plain GROUP BY (of every key: each came from the one set)
        outputs = list(key_columns)
    aggregates = []
    groupings: list[tuple[Column, tuple[int, ...]]] = []
    mapping: dict[Expr, Expr] = {expr: ColumnRef(outputs[key_index[expr]]) for expr in keys}
    for call in calls:
        if call.name == GROUPING:
            mapping[call] = _grouping(call, key_index, rollup, groupings, self, group or select)
            continue
        args = tuple(ColumnRef(as_column(a, f"_arg{i}")) if not isinstance(a, Constant) else a
                     for i, a in enumerate(call.args))
        column = self.columns.new(call.name if call.name != "count_star" else "count", call.type)
        aggregates.append((column, AggregateCall(call.name, args, call.distinct, call.type)))
        mapping[call] = ColumnRef(column)
    projected = tuple((c, e) for e, c in pre.items())
    source = Project(plan, projected) if any(not isinstance(e, ColumnRef) for e in pre) else plan
    if rollup:
        if len(key_columns) > MAX_GROUPING_KEYS:
            raise error_at(group, f"GROUP BY has {len(key_columns)} grouping expressions in its grouping sets; "
                                  f"at most {MAX_GROUPING_KEYS} are supported")
        result: Plan = GroupingSets(source, tuple(key_columns), tuple(outputs), tuple(sets), tuple(aggregates),
                                    tuple(groupings))
    else:
        result = Aggregate(source, tuple(outputs), tuple(aggregates))
    return result, PostAggregation(mapping, frozenset(outputs), scope)


def _grouping(call: AggregateCall, key_index: dict[Expr, int], rollup: bool,
              groupings: list[tuple[Column, tuple[int, ...]]], self: QueryContext, node: exp.Expr) -> Expr:
    """What ``GROUPING(args)`` reads: a column of the GroupingSets, or 0 under a plain GROUP BY
    (every key in the one set). Its arguments must be grouping expressions."""
    if not key_index:
        raise error_at(node, "GROUPING() needs a GROUP BY")
    positions = []
    for arg in call.args:
        if arg not in key_index:
            raise error_at(node, f"the arguments of GROUPING() must be grouping expressions; {arg} is not one")
        positions.append(key_index[arg])
    if not rollup:
        return Constant(0, T.BIGINT)
    for column, listed in groupings:
        if listed == tuple(positions):
            return ColumnRef(column)
    column = self.columns.new("grouping", T.BIGINT, False)
    groupings.append((column, tuple(positions)))
    return ColumnRef(column)


def _grouping_sets(self: QueryContext, group: exp.Group, scope: Scope, items: list[tuple[str, Expr, exp.Expr]],
                   keys: list[Expr]) -> list[tuple[int, ...]]:
    """The grouping sets of a GROUP BY, each as positions of ``keys`` (filled with the distinct
    grouping expressions): the product of its elements' sets, an element being an expression
    (one set of it), ``ROLLUP(e_1, ..., e_n)`` (the n + 1 prefixes), ``CUBE(e_1, ..., e_n)``
    (the 2^n subsets), ``GROUPING SETS (...)`` (its items' sets, listed; a ROLLUP, CUBE or
    GROUPING SETS among them lists its own sets there) or ``()`` (the empty
    set); an ``e_i`` may be a parenthesized list grouped as one. ``GROUP BY a, b WITH ROLLUP``
    is ``ROLLUP(a, b)``. A set listed twice is kept twice (its rows come out twice)."""

    def position(node: exp.Expr) -> int:
        expr = _group_expression(self, node, scope, items)
        if expr not in keys:
            keys.append(expr)
        return keys.index(expr)

    def unit(node: exp.Expr) -> tuple[int, ...]:
        """One item of a ROLLUP or CUBE: an expression or a parenthesized list of them."""
        if isinstance(node, exp.Tuple):
            return tuple(position(e) for e in node.expressions)
        if isinstance(node, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            raise error_at(node, f"{_name(node)} cannot be nested in ROLLUP or CUBE")
        return (position(node),)

    def element(node: exp.Expr) -> list[tuple[int, ...]]:
        if isinstance(node, exp.Rollup):
            units = [unit(e) for e in node.expressions]
            return [tuple(p for u in units[:n] for p in u) for n in range(len(units), -1, -1)]
        if isinstance(node, exp.Cube):
            units = [unit(e) for e in node.expressions]
            if len(units) > 12:
                raise error_at(node, f"CUBE of {len(units)} expressions makes {2 ** len(units):,} grouping sets; "
                                     f"at most {MAX_GROUPING_SETS} are supported")
            found = []
            for mask in range(2 ** len(units) - 1, -1, -1):   # the full set first, () last
                found.append(tuple(p for i, u in enumerate(units) if mask >> (len(units) - 1 - i) & 1 for p in u))
            return found
        if isinstance(node, exp.GroupingSets):
            found = []
            for item in node.expressions:
                # a nested GROUPING SETS lists its sets in place (as PostgreSQL and DuckDB read it)
                found.extend(element(item) if isinstance(item, (exp.Rollup, exp.Cube, exp.GroupingSets))
                             else [unit(item)])
            return found
        if isinstance(node, exp.Tuple):
            return [unit(node)]
        return [(position(node),)]

    elements = list(group.expressions)
    with_rollup = group.args.get("rollup")
    if with_rollup or group.args.get("cube"):
        # MySQL's and MariaDB's ``GROUP BY a, b WITH ROLLUP`` (sqlglot: an empty Rollup beside
        # the expressions); a ROLLUP(...) or CUBE(...) there is an element, not this form.
        modifiers = (with_rollup or []) + (group.args.get("cube") or [])
        if any(m.expressions for m in modifiers) or len(modifiers) > 1:
            raise error_at(group, "this form of GROUP BY ... WITH ROLLUP / CUBE is not supported")
        if any(isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) for e in elements):
            raise error_at(group, "WITH ROLLUP cannot follow ROLLUP, CUBE or GROUPING SETS")
        wrapper = exp.Rollup if with_rollup else exp.Cube
        elements = [wrapper(expressions=elements)]
    if group.args.get("grouping_sets"):
        elements += list(group.args["grouping_sets"])
    sets: list[tuple[int, ...]] = [()]
    for node in elements:
        product = []
        for left in sets:
            for right in element(node):
                product.append(tuple(sorted(set(left) | set(right))))
                if len(product) > MAX_GROUPING_SETS:
                    raise error_at(group, f"GROUP BY makes more than {MAX_GROUPING_SETS} grouping sets")
        sets = product
    return sets


def _name(node: exp.Expr) -> str:
    names: dict[type[exp.Expr], str] = {exp.Rollup: "ROLLUP", exp.Cube: "CUBE", exp.GroupingSets: "GROUPING SETS"}
    return names[type(node)]

def _group_expression(self: QueryContext, node: exp.Expr, scope: Scope,
                      items: list[tuple[str, Expr, exp.Expr]]) -> Expr:
    if isinstance(node, exp.Literal) and not node.is_string:
        index = int(node.this)
        if not 1 <= index <= len(items):
            raise error_at(node, f"GROUP BY position {index} is not in the select list (1..{len(items)})")
        expr = items[index - 1][1]
    else:
        try:
            expr = ExpressionBinder(self, scope, "GROUP BY").bind(node)
        except SqlError:
            # Spark and DuckDB let GROUP BY name a select-list alias.
            if isinstance(node, exp.Column) and not node.table:
                matches = [e for n, e, _ in items if n.lower() == node.name.lower()]
                if len(matches) == 1:
                    expr = matches[0]
                else:
                    raise
            else:
                raise
    if has_aggregate(expr):
        raise error_at(node, "aggregates are not allowed in GROUP BY")
    return expr


class PostAggregation:
    """Rewrites expressions bound before aggregation to read the Aggregate's outputs: a
    grouping expression or an aggregate call its column (a ``GROUPING`` call its column, or 0
    under a plain GROUP BY)."""

    def __init__(self, mapping: dict[Expr, Expr], groups: frozenset[Column], scope: Scope):
        self.mapping = mapping
        self.groups = groups
        self.scope = scope

    def rewrite(self, expr: Expr, node: exp.Expr, fallbacks: dict[Column, Expr] | None = None) -> Expr:
        """``fallbacks``: for a column neither grouped nor aggregated, a select-list alias of its
        name to read instead (HAVING, as DuckDB resolves it)."""
        local = set(self.scope.all_columns())

        def visit(e: Expr) -> Expr | None:
            if e in self.mapping:
                return self.mapping[e]
            if isinstance(e, ColumnRef):
                if e.column in self.groups or e.column not in local:
                    return e  # a grouping column, or an outer reference
                if fallbacks and e.column in fallbacks:
                    return transform(fallbacks[e.column], visit)
                raise error_at(node, f"column '{e.column.name}' must appear in GROUP BY or be used in an aggregate")
            if isinstance(e, AggregateCall):
                raise AssertionError("aggregate missed by collection")
            return None

        return transform(expr, visit)


def has_aggregate(expr_or_node: exp.Expr | Expr) -> bool:
    """Whether an expression (bound, or SQL) aggregates: calls an aggregate outside its
    subqueries that is not itself a window function (``sum(x) OVER ()`` aggregates nothing;
    ``sum(sum(x)) OVER ()`` does)."""
    if isinstance(expr_or_node, Expr):
        return any(isinstance(n, AggregateCall) for n in walk(expr_or_node))
    for node in expr_or_node.walk():
        if isinstance(node, exp.AggFunc) and not _inside_subquery(node, expr_or_node) and not _windowed(node):
            return True
    return False


def _windowed(node: exp.Expr) -> bool:
    """Whether the aggregate is the function of a window (``sum(x) OVER (...)``)."""
    parent = node.parent
    while isinstance(parent, (exp.RespectNulls, exp.IgnoreNulls, exp.Filter)):
        node, parent = parent, parent.parent
    return isinstance(parent, exp.Window) and parent.this is node


def _inside_subquery(node: exp.Expr, root: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None and parent is not root:
        if isinstance(parent, (exp.Subquery, exp.Select, exp.Exists)):
            return True
        parent = parent.parent
    return False
