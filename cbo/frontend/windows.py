"""Binding window functions: ``f(...) OVER (PARTITION BY ... ORDER BY ... frame)`` to Window nodes.

SQL evaluates windows after grouping and HAVING and before the SELECT list's DISTINCT, ORDER
BY and LIMIT: a window's arguments, partition and order may read grouping columns and
aggregates (``rank() OVER (ORDER BY sum(x))``, ``sum(sum(x)) OVER (PARTITION BY c)``). The
clauses that may call a window function bind with a :class:`WindowBinder`, an expression
binder that turns each call into a :class:`WindowExpr` (the call with its partition and order
as expressions), which the aggregation binder rewrites like any other expression;
``plan_windows`` then computes what the windows read (a projection), stacks one ``Window``
node per distinct partition and order, and gives each call a column that the SELECT list,
ORDER BY and QUALIFY read.

A named window (``WINDOW w AS (...)``) is read where ``OVER w`` or ``OVER (w ...)`` names it;
the reference may add an ORDER BY the named window lacks, and a frame.

What stays unsupported is refused with a one-line error: GROUPS frames, EXCLUDE, IGNORE
NULLS, FILTER on a window aggregate, DISTINCT window aggregates (Spark has none), interval
offsets of RANGE frames, and window functions cbo does not know.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

from sqlglot import exp

from cbo.frontend.bind_expressions import AGGREGATE_NODES, ExpressionBinder
from cbo.frontend.errors import error_at
from cbo.ir import types as T
from cbo.ir.expressions import (
    Column,
    ColumnFactory,
    ColumnRef,
    Constant,
    Expr,
    SpecialForm,
    WindowCall,
    transform,
    walk,
)
from cbo.ir.operators import NEVER_NULL_WINDOW_FUNCTIONS, Plan, Project, SortKey, Window
from cbo.ir.windows import (
    AGGREGATES,
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    BoundKind,
    Frame,
    FrameBound,
    FrameUnit,
    bound_order,
    canonical_frame,
    result_type,
)


@dataclass(frozen=True)
class OrderItem:
    value: Expr
    ascending: bool
    nulls_first: bool


@dataclass(frozen=True)
class WindowExpr(Expr):
    """A window function as bound, before its Window node exists: the call (its arguments any
    expressions) with the window's partition and order. Only the binder sees it."""

    call: WindowCall
    partition: tuple[Expr, ...]
    order: tuple[OrderItem, ...]

    @property
    def type(self) -> T.DataType:  # type: ignore[override]
        return self.call.type

    def children(self) -> tuple[Expr, ...]:
        return self.call.args + self.partition + tuple(o.value for o in self.order)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        n, p = len(self.call.args), len(self.partition)
        args, partition, order = children[:n], children[n:n + p], children[n + p:]
        return WindowExpr(WindowCall(self.call.name, args, self.call.frame, self.call.type), partition,
                          tuple(OrderItem(v, o.ascending, o.nulls_first) for v, o in zip(order, self.order)))

    def __str__(self) -> str:
        return f"{self.call} OVER (...)"


_RANKING_NODES = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank",
                  exp.PercentRank: "percent_rank", exp.CumeDist: "cume_dist"}
_VALUE_NODES = {exp.FirstValue: "first_value", exp.LastValue: "last_value"}
_OFFSET_NODES = {exp.Lag: "lag", exp.Lead: "lead"}


class WindowBinder(ExpressionBinder):
    """An expression binder for the clauses that may call window functions: the SELECT list,
    ORDER BY and QUALIFY. Elsewhere (WHERE, GROUP BY, an aggregate's argument) the plain
    ``ExpressionBinder`` refuses a window call."""

    def _Window(self, node: exp.Window) -> Expr:
        return bind_window(self, node)


def bind_window(binder: ExpressionBinder, node: exp.Window) -> WindowExpr:
    """The window call ``node`` (``f(...) OVER ...``), bound in ``binder``'s scope."""
    partition_nodes, order_node, spec = _specification(binder, node)
    # The arguments, partition and order may read aggregates where the query may, never windows.
    inner = ExpressionBinder(binder.binder, binder.scope, "a window function's arguments, PARTITION BY and ORDER BY",
                             allow_aggregates=binder.allow_aggregates)
    partition = tuple(inner.bind(p) for p in partition_nodes)
    order = tuple(OrderItem(inner.bind(o.this), not o.args.get("desc"), bool(o.args.get("nulls_first")))
                  for o in (order_node.expressions if order_node is not None else []))
    function = node.this
    if isinstance(function, exp.RespectNulls) or \
            isinstance(function, exp.IgnoreNulls) and isinstance(function.this, exp.AnyValue):
        function = function.this   # (sqlglot reads any_value as ignoring NULLs, which it does)
    if isinstance(function, exp.IgnoreNulls):
        raise error_at(node, "IGNORE NULLS in a window function is not supported")
    if isinstance(function, exp.Filter):
        raise error_at(node, "FILTER (WHERE ...) on a window aggregate is not supported: use CASE inside it")
    name: str | None = None
    args: tuple[Expr, ...] = ()
    type_: T.DataType
    for node_type, known in _RANKING_NODES.items():
        if type(function) is node_type:
            name = known
            if function.expressions or function.this is not None:
                raise error_at(node, f"{known}() takes no arguments")
            type_ = result_type(known, None)
    if name is None and isinstance(function, exp.Ntile):
        name = "ntile"
        args = (_positive_count(inner, function.this, node, "ntile's bucket count"),)
        type_ = T.BIGINT
    elif name is None and type(function) in _OFFSET_NODES:
        name = _OFFSET_NODES[type(function)]
        value = inner.bind(function.this)
        offset = _count(inner, function.args.get("offset"), node, f"{name}'s offset", default=1)
        default_node = function.args.get("default")
        default = inner.bind(default_node) if default_node is not None else Constant(None, value.type)
        if not isinstance(default, Constant):
            raise error_at(node, f"{name}'s default must be a constant")
        common = T.common_type(value.type, default.type)
        if common is None:
            raise error_at(node, f"{name}'s default ({default.type}) does not match its value ({value.type})")
        common = value.type if common == T.NULL else common
        args = (_cast(value, common), offset, _cast_constant(default, common))
        type_ = common
    elif name is None and type(function) in _VALUE_NODES:
        name = _VALUE_NODES[type(function)]
        args = (inner.bind(function.this),)
        type_ = args[0].type
    elif name is None:
        for node_type, aggregate in AGGREGATE_NODES.items():
            if isinstance(function, node_type):
                call = inner._aggregate_call(function, aggregate, allow_nested=binder.allow_aggregates)
                if call.distinct:
                    raise error_at(node, f"DISTINCT in a window aggregate ({aggregate}) is not supported")
                if call.name not in AGGREGATES:
                    raise error_at(node, f"{aggregate} is not supported as a window function")
                name, args, type_ = call.name, call.args, call.type
                break
    if name is None:
        label = function.sql_name() if isinstance(function, exp.Func) else function.key
        raise error_at(node, f"unsupported window function {label}")
    frame = canonical_frame(name, _frame(spec, order, node), bool(order))
    return WindowExpr(WindowCall(name, args, frame, type_), partition, order)


def _specification(binder: ExpressionBinder, node: exp.Window
                   ) -> tuple[list[exp.Expr], exp.Order | None, exp.WindowSpec | None]:
    """The partition, order and frame of ``node``, merged with the named window it refers to."""
    partition = list(node.args.get("partition_by") or [])
    order = node.args.get("order")
    spec = node.args.get("spec")
    reference = node.args.get("alias")
    if reference is None:
        return partition, order, spec
    named = binder.scope.windows.get(reference.name.lower())
    if named is None:
        raise error_at(node, f"unknown window '{reference.name}'")
    if partition:
        raise error_at(node, f"a window that refers to '{reference.name}' cannot add PARTITION BY")
    if order is not None and named.args.get("order") is not None:
        raise error_at(node, f"a window that refers to '{reference.name}' cannot replace its ORDER BY")
    if named.args.get("spec") is not None:
        raise error_at(node, f"window '{reference.name}' has a frame: a window that refers to it cannot")
    return list(named.args.get("partition_by") or []), order or named.args.get("order"), spec


def named_windows(select: exp.Select) -> dict[str, exp.Window]:
    """The WINDOW clause's definitions by name (a definition may not refer to another)."""
    found: dict[str, exp.Window] = {}
    for definition in select.args.get("windows") or []:
        name = definition.this.name.lower()
        if name in found:
            raise error_at(definition, f"window '{definition.this.name}' is defined twice")
        if definition.args.get("alias") is not None:
            raise error_at(definition, "a named window that refers to another one is not supported")
        found[name] = definition
    return found


def _frame(spec: exp.WindowSpec | None, order: tuple[OrderItem, ...], node: exp.Window) -> Frame | None:
    if spec is None:
        return None
    kind = str(spec.args.get("kind") or "").upper()
    if kind == "GROUPS":
        raise error_at(node, "GROUPS frames are not supported (ROWS and RANGE are)")
    if spec.args.get("exclude") is not None:
        raise error_at(node, "EXCLUDE in a window frame is not supported")
    unit = FrameUnit.ROWS if kind == "ROWS" else FrameUnit.RANGE
    start = _bound(spec.args.get("start"), spec.args.get("start_side"), unit, order, node)
    end = _bound(spec.args.get("end"), spec.args.get("end_side"), unit, order, node) \
        if spec.args.get("end") is not None else CURRENT_ROW
    if start.kind is BoundKind.UNBOUNDED_FOLLOWING or end.kind is BoundKind.UNBOUNDED_PRECEDING:
        raise error_at(node, f"a frame cannot start at {start} or end at {end}")
    if not bound_order(start, end):
        raise error_at(node, f"the frame starts after it ends ({start} to {end})")
    return Frame(unit, start, end)


def _bound(value: object, side: object, unit: FrameUnit, order: tuple[OrderItem, ...],
           node: exp.Window) -> FrameBound:
    side_text = str(side or "").upper()
    if isinstance(value, str):
        text = value.upper()
        if text == "CURRENT ROW":
            return CURRENT_ROW
        if text == "UNBOUNDED":
            return UNBOUNDED_FOLLOWING if side_text == "FOLLOWING" else UNBOUNDED_PRECEDING
    kind = BoundKind.FOLLOWING if side_text == "FOLLOWING" else BoundKind.PRECEDING
    if isinstance(value, exp.Interval):
        raise error_at(node, "interval offsets in window frames are not supported (RANGE offsets of numbers are)")
    if not (isinstance(value, exp.Literal) and not value.is_string):
        raise error_at(node, f"a frame offset must be a non-negative number, not {getattr(value, 'sql', str)()}")
    text = value.this
    if unit is FrameUnit.ROWS:
        if not text.isdigit():
            raise error_at(node, f"a ROWS frame offset must be a whole number of rows, not {text}")
        return FrameBound(kind, int(text))
    if len(order) != 1:
        raise error_at(node, f"a RANGE frame with an offset needs exactly one ORDER BY key, not {len(order)}")
    key = order[0].value.type
    if not key.is_numeric:
        raise error_at(node, f"a RANGE frame with an offset needs a numeric ORDER BY key, not {key}")
    number: int | decimal.Decimal = int(text) if text.isdigit() else decimal.Decimal(text)
    return FrameBound(kind, number)


def _count(inner: ExpressionBinder, value: exp.Expr | None, node: exp.Window, what: str,
           default: int) -> Constant:
    if value is None:
        return Constant(default, T.BIGINT)
    bound = inner.bind(value)
    if not (isinstance(bound, Constant) and isinstance(bound.value, int) and not isinstance(bound.value, bool)
            and bound.value >= 0):
        raise error_at(node, f"{what} must be a non-negative integer constant")
    return Constant(bound.value, T.BIGINT)


def _positive_count(inner: ExpressionBinder, value: exp.Expr | None, node: exp.Window, what: str) -> Constant:
    found = _count(inner, value, node, what, default=0)
    if found.value == 0:
        raise error_at(node, f"{what} must be a positive integer constant")
    return found


def _cast(value: Expr, type_: T.DataType) -> Expr:
    return value if value.type == type_ else SpecialForm("CAST", (value,), type_)


def _cast_constant(value: Constant, type_: T.DataType) -> Expr:
    if value.type == type_ or value.value is None:
        return Constant(value.value, type_)
    return SpecialForm("CAST", (value,), type_)


# -- planning ------------------------------------------------------------------------------------


def window_exprs(exprs: list[Expr]) -> list[WindowExpr]:
    """The window calls in ``exprs``, each once, in order of appearance."""
    found: dict[WindowExpr, None] = {}
    for expr in exprs:
        for node in walk(expr):
            if isinstance(node, WindowExpr):
                found.setdefault(node, None)
    return list(found)


def plan_windows(factory: ColumnFactory, plan: Plan, exprs: list[Expr]) -> tuple[Plan, dict[WindowExpr, Column]]:
    """``plan`` with the windows of ``exprs`` computed over it, and each window's column (a new
    one from ``factory``).

    What the windows read that is not a column of ``plan`` (computed arguments, partition and
    order expressions) is computed first, in one projection that keeps ``plan``'s columns; then
    one Window node per distinct partition (as a set of columns) and order, in order of first
    appearance. Constants in PARTITION BY or ORDER BY change nothing and are dropped, as are
    repeated keys."""
    windows = window_exprs(exprs)
    if not windows:
        return plan, {}
    computed: dict[Expr, Column] = {}
    passed = set(plan.output)

    def as_column(expr: Expr, name: str) -> Column:
        if isinstance(expr, ColumnRef) and expr.column in passed:
            return expr.column
        if expr not in computed:
            computed[expr] = factory.new(name, expr.type)
        return computed[expr]

    Spec = tuple[frozenset[Column], tuple[SortKey, ...]]   # the partition (as a set) and the order
    specs: dict[Spec, tuple[tuple[Column, ...], list[tuple[Column, WindowCall]]]] = {}
    columns: dict[WindowExpr, Column] = {}
    for number, window in enumerate(windows):
        partition: list[Column] = []
        for index, value in enumerate(window.partition):
            if not isinstance(value, Constant):
                column = as_column(value, f"_partition{number}_{index}")
                if column not in partition:
                    partition.append(column)
        order: list[SortKey] = []
        for index, item in enumerate(window.order):
            if not isinstance(item.value, Constant):
                column = as_column(item.value, f"_order{number}_{index}")
                if all(k.column != column for k in order):
                    order.append(SortKey(column, item.ascending, item.nulls_first))
        call = window.call
        args = tuple(a if isinstance(a, Constant) else ColumnRef(as_column(a, f"_arg{number}_{i}"))
                     for i, a in enumerate(call.args))
        frame = call.frame
        if not order and window.order:
            frame = canonical_frame(call.name, frame, False)   # ordered by constants only: all rows peers
        output = factory.new(call.name if call.name != "count_star" else "count", call.type,
                                    call.name not in NEVER_NULL_WINDOW_FUNCTIONS)
        key = (frozenset(partition), tuple(order))
        spec = specs.setdefault(key, (tuple(partition), []))
        spec[1].append((output, WindowCall(call.name, args, frame, call.type)))
        columns[window] = output
    if computed:
        plan = Project(plan, tuple((c, ColumnRef(c)) for c in plan.output) + tuple((c, e) for e, c in computed.items()))
    for (_, order_keys), (partition_columns, functions) in specs.items():
        plan = Window(plan, partition_columns, order_keys, tuple(functions))
    return plan, columns


def replace_windows(expr: Expr, columns: dict[WindowExpr, Column]) -> Expr:
    """``expr`` reading each window call's column."""
    if not columns:
        return expr
    return transform(expr, lambda e: ColumnRef(columns[e]) if isinstance(e, WindowExpr) else None)


def has_window(node: exp.Expr) -> bool:
    """Whether the SQL expression calls a window function outside its subqueries."""
    for found in node.find_all(exp.Window):
        parent = found.parent
        inside = False
        while parent is not None and parent is not node:
            if isinstance(parent, (exp.Subquery, exp.Select)):
                inside = True
                break
            parent = parent.parent
        if not inside:
            return True
    return False
