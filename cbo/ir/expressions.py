"""Typed, resolved scalar expressions (in the spirit of Presto's RowExpression).

Every expression is an immutable value with structural equality and hashing, so two equal
expressions are interchangeable anywhere: the memo deduplicates on it and the binder matches
GROUP BY expressions with it. Columns are identified by a number that survives every rewrite;
their names are only for display.

Kinds:
* :class:`Constant` — a typed literal (``None`` is NULL);
* :class:`ColumnRef` — a column produced by some plan node;
* :class:`Call` — a resolved scalar function (``eq``, ``add``, ``substring``, ``like`` ...);
* :class:`SpecialForm` — forms whose evaluation is not a plain function of evaluated arguments:
  AND, OR, NOT, IN, BETWEEN, CASE, COALESCE, IS_NULL, CAST;
* :class:`AggregateCall` — an aggregate inside an Aggregate node;
* :class:`WindowCall` — a window function inside a Window node (``cbo.ir.windows``);
* a subquery (``cbo.ir.operators.SubqueryExpr``), an expression holding a plan, lives with the
  plans: only between binding and decorrelation; never reaches a planner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from cbo.ir.kinds import AggregateName, Comparison, FormName, FunctionName
from cbo.ir.types import BIGINT as BIGINT_TYPE
from cbo.ir.types import BOOLEAN, DataType
from cbo.ir.windows import Frame


@dataclass(frozen=True)
class Column:
    """A column instance: ``id`` is its identity; name and type describe it."""

    id: int
    name: str
    type: DataType
    nullable: bool = True

    def __str__(self) -> str:
        return f"{self.name}#{self.id}"

    def __hash__(self) -> int:
        # The id is the column's identity: hashing it alone is exact and cheap (columns are
        # hashed constantly by the memo, the estimator and every analysis).
        return hash(self.id)


class ColumnFactory:
    """Hands out fresh column ids; one per binding (and later per memo)."""

    def __init__(self, start: int = 1):
        self._next = start

    def new(self, name: str, type_: DataType, nullable: bool = True) -> Column:
        column = Column(self._next, name, type_, nullable)
        self._next += 1
        return column


def cache_hash(cls):
    """Expressions and plans are hashed often (memo, caches): compute a node's hash once, the
    first time it is asked, and keep it on the node (``_hash``). ``fields_hash`` is the
    dataclass's own hash of the fields, for a constructor that takes it at once."""
    original = cls.__hash__

    def __hash__(self):
        # An attribute read, not ``__dict__.get``: half the time where it counts (a join's
        # condition hashes each of its conjuncts, for each of a clique's 28,501 joins).
        try:
            return self._hash
        except AttributeError:
            cached = original(self)
            object.__setattr__(self, "_hash", cached)
            return cached

    cls.__hash__ = __hash__
    cls.fields_hash = original
    return cls


class Expr:
    """Base of scalar expressions."""

    type: DataType
    # Whether the expression holds a plan (a subquery): it then reads the plan's outer
    # references too (``outer_columns``), which ``columns_of`` counts.
    holds_plan: ClassVar[bool] = False

    def children(self) -> tuple[Expr, ...]:
        return ()

    def outer_columns(self) -> frozenset[Column]:
        """The columns of the enclosing query that the plan it holds reads."""
        return frozenset()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return self


@dataclass(frozen=True)
class Constant(Expr):
    value: Any
    type: DataType

    def __str__(self) -> str:
        if self.value is None:
            return "NULL"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        if self.type.name in ("date", "timestamp"):
            return f"{self.type.name.upper()} '{self.value}'"
        return str(self.value)


@cache_hash
@dataclass(frozen=True)
class ColumnRef(Expr):
    column: Column

    @property
    def type(self) -> DataType:  # type: ignore[override]
        return self.column.type

    def __str__(self) -> str:
        return str(self.column)


@cache_hash
@dataclass(frozen=True)
class Call(Expr):
    name: FunctionName
    args: tuple[Expr, ...]
    type: DataType

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Call(self.name, children, self.type)

    def __str__(self) -> str:
        symbol = INFIX.get(self.name)
        if symbol and len(self.args) == 2:
            return f"({self.args[0]} {symbol} {self.args[1]})"
        return f"{self.name}({', '.join(map(str, self.args))})"


INFIX = {"eq": "=", "neq": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=", "add": "+", "subtract": "-",
         "multiply": "*", "divide": "/", "modulus": "%", "like": "LIKE",
         "is_not_distinct_from": "IS NOT DISTINCT FROM"}
NEGATED: dict[Comparison, Comparison] = {"eq": "neq", "neq": "eq", "lt": "gte", "lte": "gt", "gt": "lte", "gte": "lt"}


@cache_hash
@dataclass(frozen=True)
class SpecialForm(Expr):
    form: FormName
    args: tuple[Expr, ...]
    type: DataType

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return SpecialForm(self.form, children, self.type)

    def __str__(self) -> str:
        a = self.args
        if self.form in ("AND", "OR"):
            return "(" + f" {self.form} ".join(map(str, a)) + ")"
        if self.form == "NOT":
            return f"(NOT {a[0]})"
        if self.form == "IN":
            return f"({a[0]} IN ({', '.join(map(str, a[1:]))}))"
        if self.form == "BETWEEN":
            return f"({a[0]} BETWEEN {a[1]} AND {a[2]})"
        if self.form == "IS_NULL":
            return f"({a[0]} IS NULL)"
        if self.form == "CAST":
            return f"CAST({a[0]} AS {self.type})"
        if self.form == "CASE":
            pairs = " ".join(f"WHEN {a[i]} THEN {a[i + 1]}" for i in range(0, len(a) - 1, 2))
            return f"CASE {pairs} ELSE {a[-1]} END"
        return f"{self.form}({', '.join(map(str, a))})"


@cache_hash
@dataclass(frozen=True)
class AggregateCall(Expr):
    name: AggregateName
    args: tuple[Expr, ...]
    distinct: bool
    type: DataType

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return AggregateCall(self.name, children, self.distinct, self.type)

    def __str__(self) -> str:
        if self.name == "count_star":
            return "count(*)"
        return f"{self.name}({'DISTINCT ' if self.distinct else ''}{', '.join(map(str, self.args))})"


@cache_hash
@dataclass(frozen=True)
class WindowCall(Expr):
    """A window function (``cbo.ir.windows``): a ranking, offset or value function, or an
    aggregate's name, over its arguments; ``frame`` the rows it reads (None for functions that
    read none). Its partition and order are its Window node's."""

    name: str
    args: tuple[Expr, ...]
    frame: Frame | None
    type: DataType

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return WindowCall(self.name, children, self.frame, self.type)

    def __str__(self) -> str:
        args = "*" if self.name == "count_star" else ", ".join(map(str, self.args))
        name = "count" if self.name == "count_star" else self.name
        return f"{name}({args})" + (f" {self.frame}" if self.frame is not None else "")


TRUE = Constant(True, BOOLEAN)
FALSE = Constant(False, BOOLEAN)


# --------------------------------------------------------------------------------------------
# Helpers over expressions


def walk(expr: Expr) -> Iterator[Expr]:
    """The expression and all its descendants, parents first (not into subquery plans)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def transform(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rewrite top-down: ``fn`` returns a replacement (not descended into) or None to recurse."""
    replaced = fn(expr)
    if replaced is not None:
        return replaced
    children = expr.children()
    if not children:
        return expr
    new_children = tuple(transform(child, fn) for child in children)
    return expr if new_children == children else expr.with_children(new_children)


def columns_of(expr: Expr) -> frozenset[Column]:
    """Columns the expression reads, including outer references inside its subqueries."""
    found: set[Column] = set()
    for node in walk(expr):
        if isinstance(node, ColumnRef):
            found.add(node.column)
        elif node.holds_plan:
            found |= node.outer_columns()
    return frozenset(found)


def substitute(expr: Expr, mapping: Mapping[Column, Expr]) -> Expr:
    if not mapping:
        return expr
    return transform(expr, lambda e: mapping.get(e.column) if isinstance(e, ColumnRef) else None)


def conjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, SpecialForm) and expr.form == "AND":
        return [c for arg in expr.args for c in conjuncts(arg)]
    if expr == TRUE:
        return []
    return [expr]


def conjunction(parts: Iterable[Expr]) -> Expr:
    flat = [c for p in parts for c in conjuncts(p)]
    unique = list(dict.fromkeys(flat))
    if not unique:
        return TRUE
    return unique[0] if len(unique) == 1 else SpecialForm("AND", tuple(unique), BOOLEAN)


def and_of_distinct(parts: tuple[Expr, ...]) -> Expr:
    """The conjunction of at least two distinct, flat conjuncts: ``conjunction`` without its
    flattening and de-duplication, which a join enumeration (one condition per join pair) knows
    it does not need."""
    return SpecialForm("AND", parts, BOOLEAN)


def negate(expr: Expr) -> Expr:
    return SpecialForm("NOT", (expr,), BOOLEAN)


def is_null(expr: Expr) -> Expr:
    return SpecialForm("IS_NULL", (expr,), BOOLEAN)


def compare(op: Comparison, left: Expr, right: Expr) -> Call:
    return Call(op, (left, right), BOOLEAN)


def can_raise(expr: Expr) -> bool:
    """Whether evaluating the expression may raise an error (a scalar subquery's row check).

    Such expressions must be evaluated exactly where the plan puts them: not inlined, moved,
    or handed to another system that lacks the function.
    """
    return any(isinstance(e, Call) and e.name == "raise_error" for e in walk(expr))


ROW_ID: Final = "row_id"


def row_id() -> Call:
    """A number unique to each row of the relation it is computed over, within one run of the
    query (Spark's ``monotonically_increasing_id()``, SQL's ``row_number() OVER ()``). Used to
    tell apart rows that are otherwise equal (the early-out join's DISTINCT)."""
    return Call(ROW_ID, (), BIGINT_TYPE)


def uses_row_id(expr: Expr) -> bool:
    """Whether the expression numbers rows: it must be evaluated once, where the plan puts it
    (a database that reads a table in parallel partitions would number each from 1)."""
    return any(isinstance(e, Call) and e.name == ROW_ID for e in walk(expr))
