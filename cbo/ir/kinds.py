"""The closed sets of names the plan and expression trees use, as types.

A join's kind, a set operation, a subquery's form and the name of a function, special form or
aggregate are each one of a fixed set of strings. Their types here are ``Literal`` unions, so
mypy checks every place that builds or compares one (``strict_equality`` in pyproject.toml
turns ``join.kind == "inenr"`` into an error), while the values stay plain strings: they
render, hash and compare as they always did, and a plan file, a rule file or a saved result
reads the same.

Why not ``enum.StrEnum``: its members equal their strings too, but on CPython 3.11 reading a
member (``JoinKind.INNER``) goes through a descriptor on the enum's class, far slower than
loading a string constant, and join kinds are compared in the search's innermost loops
(pattern matching, join implementation, estimation). A ``Literal`` costs nothing at run time.

Each tuple below (``JOIN_KINDS`` ...) lists its type's values, in the order EXPLAIN and the
capability tables show them.
"""

from __future__ import annotations

from typing import Literal, get_args

# inner (a cross join is an inner join on TRUE), left, right, full, semi, anti,
# null_aware_anti (single-column NOT IN) and mark (see cbo.ir.operators).
JoinKind = Literal["inner", "left", "right", "full", "semi", "anti", "null_aware_anti", "mark"]
JOIN_KINDS: tuple[JoinKind, ...] = get_args(JoinKind)

SetOpKind = Literal["union", "intersect", "except"]
SET_OP_KINDS: tuple[SetOpKind, ...] = get_args(SetOpKind)

# scalar (the value of its single column), exists, in (operand IN subquery), and
# any / all (operand <comparison> ANY / ALL subquery).
SubqueryKind = Literal["scalar", "exists", "in", "any", "all"]
SUBQUERY_KINDS: tuple[SubqueryKind, ...] = get_args(SubqueryKind)

# Comparisons, the first six of which have a negation (cbo.ir.expressions.NEGATED).
Comparison = Literal["eq", "neq", "lt", "lte", "gt", "gte", "is_not_distinct_from"]
COMPARISONS: tuple[Comparison, ...] = get_args(Comparison)

# ``divide`` and ``modulus`` as the query's dialect means them; ``int_divide`` truncates,
# ``float_divide`` and ``float_modulus`` compute in doubles (cbo.frontend.division).
Arithmetic = Literal["add", "subtract", "multiply", "divide", "modulus", "int_divide", "float_divide", "float_modulus"]
ARITHMETIC: tuple[Arithmetic, ...] = get_args(Arithmetic)

# The name of a scalar function call (cbo.ir.expressions.Call).
FunctionName = Literal[
    Comparison, Arithmetic,
    "negate", "like", "substring", "upper", "lower", "length", "trim", "abs", "sqrt", "round", "concat",
    "extract_year", "extract_month", "extract_day", "extract_quarter",
    "date_add", "date_sub", "add_days",
    "raise_error", "row_id",
]
FUNCTION_NAMES: tuple[FunctionName, ...] = get_args(FunctionName)

# Special forms (cbo.ir.expressions.SpecialForm): not functions of their values, because they
# short-circuit (AND, OR, CASE, COALESCE), take a list (IN) or a type (CAST).
FormName = Literal["AND", "OR", "NOT", "IN", "BETWEEN", "CASE", "COALESCE", "IS_NULL", "CAST"]
FORM_NAMES: tuple[FormName, ...] = get_args(FormName)

# Aggregates (cbo.ir.expressions.AggregateCall): the second moments (cbo.ir.moments), and
# ``grouping``, GROUPING(k, ...) as bound before the GROUP BY is known (never in a plan).
AggregateName = Literal["count_star", "count", "sum", "avg", "min", "max", "any_value",
                        "var_samp", "var_pop", "stddev_samp", "stddev_pop", "grouping"]
AGGREGATE_NAMES: tuple[AggregateName, ...] = get_args(AggregateName)
