"""Binding aggregation: GROUP BY, aggregate calls, and the expressions evaluated after them.

A Project computes grouping expressions and aggregate arguments that are not plain columns,
an Aggregate groups, and the SELECT list, HAVING and ORDER BY are rewritten over its outputs:
an expression equal to a GROUP BY expression reads its column, an aggregate call reads its
result, and a bare column that is neither grouped nor aggregated is an error. GROUP BY may name
select-list positions, and (as Spark and DuckDB allow) select-list aliases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from cbo.frontend.bind_expressions import ExpressionBinder
from cbo.frontend.errors import SqlError, error_at
from cbo.frontend.scope import Scope
from cbo.ir.expressions import AggregateCall, Column, ColumnRef, Constant, Expr, transform, walk
from cbo.ir.operators import Aggregate, Plan, Project

if TYPE_CHECKING:
    from cbo.frontend.binder import Binder


def bind_aggregation(self: "Binder", select: exp.Select, scope: Scope, plan: Plan,
                     items: list[tuple[str, Expr, exp.Expression]],
                     having: Expr | None) -> tuple[Plan, "PostAggregation"]:
    """The Aggregate (over a pre-projection) for a grouped SELECT, and the rewriter for what follows it."""
    group = select.args.get("group")
    group_exprs: list[Expr] = []
    if group is not None:
        if group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets"):
            raise error_at(group, "ROLLUP, CUBE and GROUPING SETS are not supported yet")
        for node in group.expressions:
            if isinstance(node, (exp.Rollup, exp.Cube, exp.GroupingSets)):
                raise error_at(node, f"GROUP BY {node.key.upper().replace('GROUPINGSETS', 'GROUPING SETS')} "
                                     "is not supported yet")
            group_exprs.append(_group_expression(self, node, scope, items))
    calls: list[AggregateCall] = []

    def collect(expr: Expr) -> None:
        for node in walk(expr):
            if isinstance(node, AggregateCall) and node not in calls:
                calls.append(node)

    for _, expr, _ in items:
        collect(expr)
    if having is not None:
        collect(having)
    order = select.args.get("order")
    if order is not None:
        for ordered in order.expressions:
            if not (isinstance(ordered.this, exp.Literal) or isinstance(ordered.this, exp.Column)
                    and not ordered.this.table and any(n.lower() == ordered.this.name.lower() for n, _, _ in items)):
                collect(ExpressionBinder(self, scope, "ORDER BY", allow_aggregates=True).bind(ordered.this))

    # Pre-projection: the columns the Aggregate reads, computing non-column expressions.
    pre: dict[Expr, Column] = {}

    def as_column(expr: Expr, name: str) -> Column:
        if isinstance(expr, ColumnRef):
            pre.setdefault(expr, expr.column)
            return expr.column
        if expr not in pre:
            pre[expr] = self.columns.new(name, expr.type)
        return pre[expr]

    group_columns = []
    for index, expr in enumerate(group_exprs):
        column = as_column(expr, f"_group{index}")
        if column not in group_columns:
            group_columns.append(column)
    aggregates = []
    mapping: dict[Expr, Column] = {expr: as_column(expr, "") for expr in group_exprs}
    for call in calls:
        args = tuple(ColumnRef(as_column(a, f"_arg{i}")) if not isinstance(a, Constant) else a
                     for i, a in enumerate(call.args))
        column = self.columns.new(call.name if call.name != "count_star" else "count", call.type)
        aggregates.append((column, AggregateCall(call.name, args, call.distinct, call.type)))
        mapping[call] = column
    projected = tuple((c, e) for e, c in pre.items())
    source = Project(plan, projected) if any(not isinstance(e, ColumnRef) for e in pre) else plan
    aggregate = Aggregate(source, tuple(group_columns), tuple(aggregates))
    return aggregate, PostAggregation(mapping, frozenset(group_columns), scope)

def _group_expression(self: "Binder", node: exp.Expression, scope: Scope,
                      items: list[tuple[str, Expr, exp.Expression]]) -> Expr:
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
    """Rewrites expressions bound before aggregation to read the Aggregate's outputs."""

    def __init__(self, mapping: dict[Expr, Column], groups: frozenset[Column], scope: Scope):
        self.mapping = mapping
        self.groups = groups
        self.scope = scope

    def rewrite(self, expr: Expr, node: exp.Expression, fallbacks: dict[Column, Expr] | None = None) -> Expr:
        """``fallbacks``: for a column neither grouped nor aggregated, a select-list alias of its
        name to read instead (HAVING, as DuckDB resolves it)."""
        local = set(self.scope.all_columns())

        def visit(e: Expr) -> Expr | None:
            if e in self.mapping:
                return ColumnRef(self.mapping[e])
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


def has_aggregate(expr_or_node) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(expr_or_node, exp.Expression):
        for node in expr_or_node.walk():
            if isinstance(node, exp.AggFunc) and not _inside_subquery(node, expr_or_node):
                return True
        return False
    return any(isinstance(n, AggregateCall) for n in walk(expr_or_node))


def _inside_subquery(node: exp.Expression, root: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None and parent is not root:
        if isinstance(parent, (exp.Subquery, exp.Select, exp.Exists)):
            return True
        parent = parent.parent
    return False
