"""Binding scalar expressions: sqlglot AST nodes to typed IR expressions.

Literals become typed constants; ``DATE '...'`` and date +/- interval of constants are folded
to date constants (so the estimator sees plain ranges); operators and functions resolve to IR
calls with checked argument types; aggregates are allowed only where the caller says so, and
window calls only where a ``WindowBinder`` (``cbo.frontend.windows``) binds; subqueries are
bound by the query binder (reached through ``QueryContext``) and kept as ``SubqueryExpr``
(``cbo.ir.operators``) for decorrelation.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Final, Literal

from sqlglot import exp

from cbo.frontend.division import division, refused
from cbo.frontend.errors import SqlError, error_at, position
from cbo.frontend.languages import RowComparison
from cbo.frontend.query_context import QueryContext
from cbo.frontend.scope import Scope
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, Column, ColumnRef, Constant, Expr, SpecialForm, conjunction
from cbo.ir.intervals import IntervalValue, add_interval
from cbo.ir.kinds import AggregateName, Arithmetic, Comparison, FunctionName
from cbo.ir.moments import is_moment
from cbo.ir.operators import Plan, SubqueryExpr

INTERVAL_UNITS = {"YEAR": (12, 0, 0), "MONTH": (1, 0, 0), "DAY": (0, 1, 0), "WEEK": (0, 7, 0),
                  "HOUR": (0, 0, 3_600_000_000), "MINUTE": (0, 0, 60_000_000), "SECOND": (0, 0, 1_000_000)}

COMPARISON_NODES: dict[type[exp.Binary], Comparison] = {
    exp.EQ: "eq", exp.NEQ: "neq", exp.LT: "lt", exp.LTE: "lte", exp.GT: "gt", exp.GTE: "gte"}
ARITHMETIC_NODES: dict[type[exp.Binary], tuple[Arithmetic, str]] = {
    exp.Add: ("add", "+"), exp.Sub: ("subtract", "-"), exp.Mul: ("multiply", "*"), exp.Div: ("divide", "/"),
    exp.Mod: ("modulus", "%")}
AGGREGATE_NODES: dict[type[exp.AggFunc], AggregateName] = {
                   exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max", exp.Count: "count",
                   exp.AnyValue: "any_value",
                   # SQL's stddev and variance are the sample forms (sqlglot reads var_samp as Variance)
                   exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop", exp.Stddev: "stddev_samp",
                   exp.Variance: "var_samp", exp.VariancePop: "var_pop"}
EXTRACT_FUNCTIONS: dict[str, FunctionName] = {"YEAR": "extract_year", "MONTH": "extract_month", "DAY": "extract_day",
                                              "QUARTER": "extract_quarter"}
EXTRACT_FIELDS = tuple(EXTRACT_FUNCTIONS)
# GROUPING(k, ...) bound before the GROUP BY is known: a call of this name, replaced by the
# aggregation binding (never an aggregate of a plan).
GROUPING: Final = "grouping"
MAX_GROUPING_ARGUMENTS = 63   # its value is a BIGINT, one bit per argument


def literal_constant(node: exp.Literal) -> Constant:
    text = node.this
    if node.is_string:
        return Constant(text, T.VARCHAR)
    lowered = text.lower()
    if "e" in lowered:
        return Constant(float(text), T.DOUBLE)
    if "." in text:
        value = decimal.Decimal(text)
        digits = value.as_tuple()
        scale = max(-digits.exponent, 0)  # type: ignore[operator]
        precision = max(len(digits.digits), scale, 1)
        return Constant(value, T.decimal(precision, scale))
    number = int(text)
    return Constant(number, T.INTEGER if -2**31 <= number < 2**31 else T.BIGINT)


class ExpressionBinder:
    """Binds the expressions of one query block against its scope."""

    def __init__(self, binder: QueryContext, scope: Scope, clause: str, allow_aggregates: bool = False,
                 aliases: dict[str, Expr] | None = None):
        """``aliases``: select-list aliases (lowercase) a bare name may stand for (HAVING): a
        name that is no column reads the alias; a column of the FROM clause that has an alias
        of its name is recorded in ``alias_fallbacks``, read instead when the column turns out
        to be neither grouped nor aggregated (DuckDB's rule)."""
        self.binder = binder
        self.scope = scope
        self.clause = clause
        self.allow_aggregates = allow_aggregates
        self.outer_references = False
        self.aliases = aliases or {}
        self.alias_fallbacks: dict[Column, Expr] = {}

    def bind(self, node: exp.Expr) -> Expr:
        bound = self._bind(node)
        if node.args.get("negate"):  # sqlglot marks NOT LIKE, NOT BETWEEN ... with a flag
            return SpecialForm("NOT", (bound,), T.BOOLEAN)
        return bound

    def _bind(self, node: exp.Expr) -> Expr:
        handler: Callable[[exp.Expr], Expr] | None = getattr(self, f"_{type(node).__name__}", None)
        if handler is not None:
            return handler(node)
        for comparison_type, comparison in COMPARISON_NODES.items():
            if isinstance(node, comparison_type):
                return self._comparison(node, comparison)
        for arithmetic_type, (arithmetic, symbol) in ARITHMETIC_NODES.items():
            if isinstance(node, arithmetic_type):
                return self._arithmetic(node, arithmetic, symbol)
        for aggregate_type, aggregate in AGGREGATE_NODES.items():
            if isinstance(node, aggregate_type):
                return self._aggregate(node, aggregate)
        if isinstance(node, (exp.Grouping, exp.GroupingId)):
            return self._grouping(node)
        if isinstance(node, exp.Anonymous):   # a name sqlglot does not know either
            raise error_at(node, f"unknown function {node.name}")
        if isinstance(node, exp.Func):
            name = node.sql_name() if hasattr(node, "sql_name") else node.key
            raise error_at(node, f"function {name.lower()} is not supported")
        raise error_at(node, f"unsupported expression: {node.sql()[:60]}")

    # -- leaves ------------------------------------------------------------------------------

    def _Column(self, node: exp.Column) -> Expr:
        if isinstance(node.this, exp.Star):
            raise error_at(node, f"'{node.sql()}' is only allowed in the SELECT list")
        alias = self.aliases.get(node.name.lower()) if self.aliases and not node.table else None
        if alias is not None:
            try:
                column, outer = self.scope.resolve(node)
            except SqlError:
                return alias   # only the select list has this name
            if outer:
                return alias   # the query's own select list before an enclosing query's column
            self.alias_fallbacks[column] = alias
            return ColumnRef(column)
        column, outer = self.scope.resolve(node)
        self.outer_references |= outer
        return ColumnRef(column)

    def _Literal(self, node: exp.Literal) -> Expr:
        return literal_constant(node)

    def _Null(self, node: exp.Null) -> Expr:
        return Constant(None, T.NULL)

    def _Boolean(self, node: exp.Boolean) -> Expr:
        return Constant(bool(node.this), T.BOOLEAN)

    def _Paren(self, node: exp.Paren) -> Expr:
        return self.bind(node.this)

    def _Interval(self, node: exp.Interval) -> Expr:
        amount_node, unit_node = node.this, node.args.get("unit")
        text = amount_node.this if isinstance(amount_node, exp.Literal) else None
        unit = unit_node.name.upper() if unit_node is not None else None
        if text is not None and unit is None and " " in str(text):
            text, unit = str(text).split(None, 1)  # INTERVAL '3 month'
            unit = unit.upper()
        unit = (unit or "").rstrip("S")
        if text is None or unit not in INTERVAL_UNITS:
            raise error_at(node, f"unsupported interval {node.sql()}")
        try:
            amount = int(str(text).strip())
        except ValueError:
            raise error_at(node, f"interval amount must be a whole number: {node.sql()}") from None
        months, days, micros = INTERVAL_UNITS[unit]
        return Constant(IntervalValue(months * amount, days * amount, micros * amount), T.INTERVAL)

    def _Cast(self, node: exp.Cast) -> Expr:
        try:
            target = T.from_sqlglot(node.to)
        except ValueError as exc:
            raise error_at(node, str(exc)) from None
        inner = node.this
        if isinstance(inner, exp.Literal) and inner.is_string and target.is_temporal:
            try:
                if target == T.DATE:
                    return Constant(dt.date.fromisoformat(inner.this), T.DATE)
                return Constant(dt.datetime.fromisoformat(inner.this), T.TIMESTAMP)
            except ValueError:
                raise error_at(node, f"invalid {target} literal {inner.this!r}") from None
        value = self.bind(inner)
        if value.type == target:
            return value
        return SpecialForm("CAST", (value,), target)

    def _TryCast(self, node: exp.TryCast) -> Expr:
        if not node.args.get("safe"):
            # sqlglot reads Spark's CAST as a TryCast (Spark's CAST gives NULL outside ANSI
            # mode); cbo runs Spark in ANSI mode, where it is a plain CAST.
            return self._Cast(node)
        raise error_at(node, "TRY_CAST is not supported yet")

    # -- operators ---------------------------------------------------------------------------

    def _comparison(self, node: exp.Binary, name: Comparison) -> Expr:
        right_node = node.expression
        if isinstance(right_node, (exp.Any, exp.All)):
            return self._quantified(node, name, right_node)
        if isinstance(node.this, exp.Tuple) or isinstance(right_node, exp.Tuple):
            return self._row_comparison(node, name, node.this, right_node)
        left, right = self.bind(node.this), self.bind(right_node)
        self._check_comparable(node, left, right)
        return Call(name, (left, right), T.BOOLEAN)

    def _row_comparison(self, node: exp.Expr, name: Comparison, left_node: exp.Expr, right_node: exp.Expr) -> Expr:
        """``(a, b) = (c, d)`` and ``<>``, field by field as the language compares rows
        (``RowComparison``); an ordering of rows (``<``) is refused."""
        rule = self.binder.language.row_comparison
        if name not in ("eq", "neq"):
            raise error_at(node, f"ordering row constructors ({node.sql()[:60]}) is not supported: "
                                 "compare the fields one by one")
        if not (isinstance(left_node, exp.Tuple) and isinstance(right_node, exp.Tuple)):
            raise error_at(node, f"a row constructor compared with a single value: {node.sql()[:60]}")
        lefts, rights = left_node.expressions, right_node.expressions
        if len(lefts) != len(rights):
            raise error_at(node, f"rows of {len(lefts)} and {len(rights)} fields cannot be compared: {node.sql()[:60]}")
        pairs = []
        for a_node, b_node in zip(lefts, rights):
            if isinstance(a_node, exp.Tuple) or isinstance(b_node, exp.Tuple):
                raise error_at(node, f"nested row constructors are not supported: {node.sql()[:60]}")
            a, b = self.bind(a_node), self.bind(b_node)
            self._check_comparable(node, a, b)
            pairs.append((a, b))
        if rule is RowComparison.STRUCT:   # NULL fields equal: never unknown
            equal = conjunction([Call("is_not_distinct_from", pair, T.BOOLEAN) for pair in pairs])
            return equal if name == "eq" else SpecialForm("NOT", (equal,), T.BOOLEAN)
        if name == "eq":                   # unknown when no field differs and one is unknown
            return conjunction([Call("eq", pair, T.BOOLEAN) for pair in pairs])
        unequal = [Call("neq", pair, T.BOOLEAN) for pair in pairs]
        return unequal[0] if len(unequal) == 1 else SpecialForm("OR", tuple(unequal), T.BOOLEAN)

    def _Filter(self, node: exp.Filter) -> Expr:
        raise error_at(node, "FILTER (WHERE ...) on an aggregate is not supported: use CASE inside it "
                             "(count(CASE WHEN p THEN 1 END))")

    def _WithinGroup(self, node: exp.WithinGroup) -> Expr:
        raise error_at(node, f"ordered-set aggregates (WITHIN GROUP) are not supported: {node.sql()[:40]}")

    def _Tuple(self, node: exp.Tuple) -> Expr:
        raise error_at(node, f"a row constructor ({node.sql()[:60]}) is supported only in = , <> and IN (...) "
                             "of rows of the same width")

    def _check_comparable(self, node: exp.Expr, left: Expr, right: Expr) -> None:
        if T.common_type(left.type, right.type) is None:
            raise error_at(node, f"cannot compare {left.type} with {right.type} in {node.sql()[:60]}")

    def _NullSafeEQ(self, node: exp.NullSafeEQ) -> Expr:
        left, right = self.bind(node.this), self.bind(node.expression)
        self._check_comparable(node, left, right)
        return Call("is_not_distinct_from", (left, right), T.BOOLEAN)

    def _NullSafeNEQ(self, node: exp.NullSafeNEQ) -> Expr:
        return SpecialForm("NOT", (self._NullSafeEQ(node),), T.BOOLEAN)  # type: ignore[arg-type]

    def _arithmetic(self, node: exp.Binary, name: Arithmetic, symbol: str) -> Expr:
        left, right = self.bind(node.this), self.bind(node.expression)
        if name in ("add", "subtract") and (left.type == T.DATE and right.type.is_integer
                                            or name == "add" and left.type.is_integer and right.type == T.DATE):
            if not self.binder.language.date_plus_days:
                raise error_at(node, f"date {symbol} integer is not {self.binder.dialect} SQL: write "
                                     f"date {symbol} INTERVAL 'n' DAY")
            date, days = (left, right) if left.type == T.DATE else (right, left)
            return add_days(date, days, negate=name == "subtract")
        if isinstance(left, Constant) and isinstance(right, Constant) and left.type.is_temporal \
                and isinstance(right.value, IntervalValue) and name in ("add", "subtract"):
            interval = right.value if name == "add" else right.value.negated()
            return Constant(add_interval(left.value, interval), left.type)
        result = T.arithmetic_type(symbol, left.type, right.type)
        if result is None and T.INTERVAL in (left.type, right.type) and name == "multiply":
            raise error_at(node, "only constant intervals are supported: an interval times a number is not")
        if result is None:
            raise error_at(node, f"operator {symbol} cannot combine {left.type} and {right.type}")
        if right.type == T.INTERVAL or left.type == T.INTERVAL:
            if not isinstance(right, Constant):
                raise error_at(node, "only constant intervals are supported")
            return Call("date_add" if name == "add" else "date_sub", (left, right), result)
        if name in ("divide", "modulus"):
            problem = refused(self.binder.language, name, left, right)
            if problem:
                raise error_at(node, problem)
            return division(self.binder.language, name, left, right, result)
        if name in ("add", "subtract", "multiply") and result.is_integer and isinstance(left, Constant) \
                and isinstance(right, Constant) and _integer_constant(left) and _integer_constant(right):
            # Integer arithmetic on constants is folded here, once, in cbo's 64-bit integers.
            # The engines compute INTEGER op INTEGER in 32 bits and raise on overflow wherever
            # the plan evaluates it, and a plan may evaluate a predicate for rows the query as
            # written never reaches (one moved into a subquery's filter).
            a, b = left.value, right.value
            value = a + b if name == "add" else a - b if name == "subtract" else a * b
            if not -(2 ** 63) <= value < 2 ** 63:
                raise error_at(node, f"integer overflow: {left} {symbol} {right} does not fit in a BIGINT")
            return Constant(value, result)
        return Call(name, (left, right), result)

    def _DateAdd(self, node: exp.DateAdd) -> Expr:
        """``date_add('day', n, d)`` (Trino) and ``date_add(d, INTERVAL ...)`` (DuckDB)."""
        return self._added_days(node, node.expression)

    def _TsOrDsAdd(self, node: exp.TsOrDsAdd) -> Expr:
        """Spark's ``date_add(d, n)`` and ``date_sub(d, n)`` (read as adding ``n * -1``)."""
        return self._added_days(node, node.expression)

    def _added_days(self, node: exp.Expr, amount_node: exp.Expr) -> Expr:
        date = self.bind(node.this)
        if isinstance(amount_node, exp.Interval):
            if date.type.is_temporal:
                return self._arithmetic(exp.Add(this=node.this, expression=amount_node), "add", "+")
            raise error_at(node, f"date_add needs a date, got {date.type}")
        unit = node.args.get("unit")
        unit_name = (unit.name if unit is not None else "DAY").upper()
        if unit_name != "DAY":
            raise error_at(node, f"date_add by {unit_name.lower()} is not supported (only days): "
                                 "add an INTERVAL instead")
        days = self.bind(amount_node)
        if date.type != T.DATE or not days.type.is_integer:
            raise error_at(node, f"date_add needs a date and an integer number of days, got {date.type} and "
                                 f"{days.type}")
        return add_days(date, days, negate=False)

    def _Neg(self, node: exp.Neg) -> Expr:
        value = self.bind(node.this)
        if isinstance(value, Constant) and isinstance(value.value, (int, float, decimal.Decimal)):
            return Constant(-value.value, value.type)
        if value.type == T.NULL:   # a bare NULL: its negation is NULL, of whatever type it meets
            return value
        if not value.type.is_numeric:
            raise error_at(node, f"cannot negate {value.type}")
        return Call("negate", (value,), value.type)

    def _And(self, node: exp.And) -> Expr:
        return self._logical("AND", node)

    def _Or(self, node: exp.Or) -> Expr:
        return self._logical("OR", node)

    def _logical(self, form: Literal["AND", "OR"], node: exp.Connector) -> Expr:
        # The parser's chain of one connector (``a OR b OR c`` is a left-deep tree, a level per
        # term) gathered without recursion, so a chain of any length binds.
        operands: list[exp.Expr] = []
        stack: list[exp.Expr] = [node]
        while stack:
            current = stack.pop()
            if type(current) is type(node):
                stack += [current.expression, current.this]
            else:
                operands.append(current)
        parts: list[Expr] = []
        for side in operands:
            bound = self._boolean(side)
            if isinstance(bound, SpecialForm) and bound.form == form:
                parts.extend(bound.args)
            else:
                parts.append(bound)
        return SpecialForm(form, tuple(parts), T.BOOLEAN) if form == "OR" else conjunction(parts) \
            if len(parts) > 1 else parts[0]

    def _boolean(self, node: exp.Expr) -> Expr:
        bound = self.bind(node)
        if bound.type not in (T.BOOLEAN, T.NULL):
            raise error_at(node, f"expected a boolean condition, got {bound.type}: {node.sql()[:60]}")
        return bound

    def _Not(self, node: exp.Not) -> Expr:
        return SpecialForm("NOT", (self._boolean(node.this),), T.BOOLEAN)

    def _Is(self, node: exp.Is) -> Expr:
        target = node.expression
        if isinstance(target, exp.Null):
            return SpecialForm("IS_NULL", (self.bind(node.this),), T.BOOLEAN)
        if isinstance(target, exp.Boolean):
            value = self._boolean(node.this)
            # x IS TRUE == coalesce(x = TRUE, FALSE); likewise IS FALSE.
            return SpecialForm("COALESCE", (Call("eq", (value, Constant(bool(target.this), T.BOOLEAN)), T.BOOLEAN),
                                            Constant(False, T.BOOLEAN)), T.BOOLEAN)
        raise error_at(node, f"unsupported IS expression: {node.sql()[:60]}")

    def _In(self, node: exp.In) -> Expr:
        query = node.args.get("query")
        if isinstance(node.this, exp.Tuple):
            if query is not None:
                raise error_at(node, "a row constructor IN a subquery ((a, b) IN (SELECT ...)) is not supported: "
                                     "write EXISTS (SELECT ... WHERE x = a AND y = b)")
            if node.args.get("unnest") or node.args.get("field"):
                raise error_at(node, "IN UNNEST is not supported")
            # (a, b) IN (r1, r2) is (a, b) = r1 OR (a, b) = r2, each as the language compares rows.
            rows = [self._row_comparison(node, "eq", node.this, item) for item in node.expressions]
            return rows[0] if len(rows) == 1 else SpecialForm("OR", tuple(rows), T.BOOLEAN)
        value = self.bind(node.this)
        if query is not None:
            plan, _ = self.binder.bind_subquery(query.this if isinstance(query, exp.Subquery) else query, self.scope)
            self._check_single_column(node, plan)
            self._check_comparable(node, value, ColumnRef(plan.output[0]))
            return SubqueryExpr("in", plan, value, "eq", where=position(node))
        if node.args.get("unnest") or node.args.get("field"):
            raise error_at(node, "IN UNNEST is not supported")
        items = [self.bind(item) for item in node.expressions]
        for item in items:
            self._check_comparable(node, value, item)
        return SpecialForm("IN", (value, *items), T.BOOLEAN)

    def _Between(self, node: exp.Between) -> Expr:
        value, low, high = self.bind(node.this), self.bind(node.args["low"]), self.bind(node.args["high"])
        self._check_comparable(node, value, low)
        self._check_comparable(node, value, high)
        return SpecialForm("BETWEEN", (value, low, high), T.BOOLEAN)

    def _Like(self, node: exp.Like) -> Expr:
        if node.args.get("escape"):
            raise error_at(node, "LIKE ... ESCAPE is not supported yet")
        value, pattern = self.bind(node.this), self.bind(node.expression)
        if value.type not in (T.VARCHAR, T.NULL) or pattern.type not in (T.VARCHAR, T.NULL):
            raise error_at(node, f"LIKE needs strings, got {value.type} and {pattern.type}")
        return Call("like", (value, pattern), T.BOOLEAN)

    def _Escape(self, node: exp.Escape) -> Expr:
        raise error_at(node, "LIKE ... ESCAPE is not supported yet")

    def _Case(self, node: exp.Case) -> Expr:
        operand = self.bind(node.this) if node.this is not None else None
        args: list[Expr] = []
        result_type = T.NULL
        for branch in node.args.get("ifs") or []:
            condition = self.bind(branch.this)
            if operand is not None:
                condition = Call("eq", (operand, condition), T.BOOLEAN)
            value = self.bind(branch.args["true"])
            result_type = self._unify(node, result_type, value.type)
            args += [condition, value]
        default = self.bind(node.args["default"]) if node.args.get("default") is not None else Constant(None, T.NULL)
        result_type = self._unify(node, result_type, default.type)
        return SpecialForm("CASE", (*args, default), result_type)

    def _If(self, node: exp.If) -> Expr:
        condition = self._boolean(node.this)
        value = self.bind(node.args["true"])
        default = self.bind(node.args["false"]) if node.args.get("false") is not None else Constant(None, T.NULL)
        return SpecialForm("CASE", (condition, value, default), self._unify(node, value.type, default.type))

    def _unify(self, node: exp.Expr, a: T.DataType, b: T.DataType) -> T.DataType:
        common = T.common_type(a, b)
        if common is None:
            raise error_at(node, f"incompatible types {a} and {b} in {node.sql()[:60]}")
        return common

    def _Coalesce(self, node: exp.Coalesce) -> Expr:
        args = [self.bind(node.this)] + [self.bind(e) for e in node.expressions]
        result = args[0].type
        for arg in args[1:]:
            result = self._unify(node, result, arg.type)
        return SpecialForm("COALESCE", tuple(args), result)

    def _Nullif(self, node: exp.Nullif) -> Expr:
        """NULLIF(a, b) = CASE WHEN a = b THEN NULL ELSE a END (a is evaluated twice, as the
        SQL standard defines it)."""
        value, other = self.bind(node.this), self.bind(node.expression)
        self._check_comparable(node, value, other)
        return SpecialForm("CASE", (Call("eq", (value, other), T.BOOLEAN), Constant(None, T.NULL), value),
                           value.type)

    def _Extract(self, node: exp.Extract) -> Expr:
        field = node.this.name.upper()
        value = self.bind(node.expression)
        if field not in EXTRACT_FIELDS:
            raise error_at(node, f"EXTRACT({field} ...) is not supported (supported: {', '.join(EXTRACT_FIELDS)})")
        if not value.type.is_temporal:
            raise error_at(node, f"EXTRACT needs a date or timestamp, got {value.type}")
        return Call(EXTRACT_FUNCTIONS[field], (value,), T.INTEGER)

    def _Year(self, node: exp.Year) -> Expr:
        value = self.bind(node.this)
        return Call("extract_year", (value,), T.INTEGER)

    def _Substring(self, node: exp.Substring) -> Expr:
        value = self.bind(node.this)
        start = self.bind(node.args["start"]) if node.args.get("start") is not None else Constant(1, T.INTEGER)
        args = [value, start]
        if node.args.get("length") is not None:
            args.append(self.bind(node.args["length"]))
        if value.type not in (T.VARCHAR, T.NULL):
            raise error_at(node, f"substring needs a string, got {value.type}")
        return Call("substring", tuple(args), T.VARCHAR)

    def _string_function(self, node: exp.Func, name: FunctionName, result: T.DataType = T.VARCHAR) -> Expr:
        value = self.bind(node.this)
        if value.type not in (T.VARCHAR, T.NULL):
            raise error_at(node, f"{name} needs a string, got {value.type}")
        return Call(name, (value,), result)

    def _Upper(self, node: exp.Upper) -> Expr:
        return self._string_function(node, "upper")

    def _Lower(self, node: exp.Lower) -> Expr:
        return self._string_function(node, "lower")

    def _Length(self, node: exp.Length) -> Expr:
        return self._string_function(node, "length", T.BIGINT)

    def _Trim(self, node: exp.Trim) -> Expr:
        return self._string_function(node, "trim")

    def _DPipe(self, node: exp.DPipe) -> Expr:
        left, right = self.bind(node.this), self.bind(node.expression)
        return Call("concat", (left, right), T.VARCHAR)

    def _Concat(self, node: exp.Concat) -> Expr:
        return Call("concat", tuple(self.bind(e) for e in node.expressions), T.VARCHAR)

    def _Abs(self, node: exp.Abs) -> Expr:
        value = self.bind(node.this)
        if value.type == T.NULL:
            return value
        if not value.type.is_numeric:
            raise error_at(node, f"abs needs a number, got {value.type}")
        return Call("abs", (value,), value.type)

    def _Round(self, node: exp.Round) -> Expr:
        value = self.bind(node.this)
        if value.type == T.NULL:
            return value
        if not value.type.is_numeric:
            raise error_at(node, f"round needs a number, got {value.type}")
        digits = self.bind(node.args["decimals"]) if node.args.get("decimals") is not None else Constant(0, T.INTEGER)
        return Call("round", (value, digits), value.type)

    # -- windows -------------------------------------------------------------------------------

    def _Window(self, node: exp.Window) -> Expr:
        # The clauses that may call one (the SELECT list, ORDER BY, QUALIFY) bind with
        # ``cbo.frontend.windows.WindowBinder``, which binds the call.
        raise error_at(node, f"window functions are not allowed in {self.clause}")

    # -- aggregates ----------------------------------------------------------------------------

    def _aggregate(self, node: exp.AggFunc, name: AggregateName) -> Expr:
        if not self.allow_aggregates:
            raise error_at(node, f"aggregate {node.sql()[:40]} is not allowed in {self.clause}")
        return self._aggregate_call(node, name)

    def _aggregate_call(self, node: exp.AggFunc, name: AggregateName, allow_nested: bool = False) -> AggregateCall:
        """The aggregate ``node`` calls; its argument may itself aggregate only when
        ``allow_nested`` (a window aggregate over a grouped query's aggregate: ``sum(sum(x)) OVER``)."""
        argument = node.this
        distinct = False
        if isinstance(argument, exp.Distinct):
            if len(argument.expressions) != 1:
                raise error_at(node, "aggregates over several DISTINCT columns are not supported")
            distinct, argument = True, argument.expressions[0]
        if name == "count" and (argument is None or isinstance(argument, exp.Star)):
            return AggregateCall("count_star", (), False, T.BIGINT)
        if argument is None:
            raise error_at(node, f"{name} needs an argument")
        inner = ExpressionBinder(self.binder, self.scope, f"the argument of {name}", allow_aggregates=allow_nested)
        value = inner.bind(argument)
        self.outer_references |= inner.outer_references
        return AggregateCall(name, (value,), distinct, aggregate_type(node, name, value.type))

    def _grouping(self, node: exp.Expr) -> Expr:
        """``GROUPING(k, ...)`` (and ``grouping_id(k, ...)``, the same function): which of the
        grouping expressions ``k`` the row's grouping set rolled up, one bit each, the first the
        highest. Bound as a call the aggregation binding replaces (``cbo.frontend.aggregation``):
        its arguments must be grouping expressions, which only the GROUP BY knows."""
        name = "GROUPING" if isinstance(node, exp.Grouping) else "grouping_id"
        if not self.allow_aggregates:
            raise error_at(node, f"{name}() is not allowed in {self.clause}")
        if not node.expressions:
            raise error_at(node, f"{name}() needs the grouping expressions it tells about as arguments")
        if len(node.expressions) > MAX_GROUPING_ARGUMENTS:
            raise error_at(node, f"{name}() takes at most {MAX_GROUPING_ARGUMENTS} arguments")
        inner = ExpressionBinder(self.binder, self.scope, f"the argument of {name}", allow_aggregates=False)
        args = tuple(inner.bind(a) for a in node.expressions)
        self.outer_references |= inner.outer_references
        return AggregateCall(GROUPING, args, False, T.BIGINT)

    # -- subqueries ------------------------------------------------------------------------------

    def _Exists(self, node: exp.Exists) -> Expr:
        plan, _ = self.binder.bind_subquery(node.this, self.scope)
        return SubqueryExpr("exists", plan, where=position(node))

    def _Subquery(self, node: exp.Subquery) -> Expr:
        plan, _ = self.binder.bind_subquery(node.this, self.scope)
        self._check_single_column(node, plan)
        return SubqueryExpr("scalar", plan, type=plan.output[0].type, where=position(node))

    def _Select(self, node: exp.Select) -> Expr:
        return self._Subquery(exp.Subquery(this=node))

    def _quantified(self, node: exp.Binary, name: Comparison, quantifier: exp.Expr) -> Expr:
        query = quantifier.this
        if isinstance(query, exp.Subquery):
            query = query.this
        if not isinstance(query, exp.Query):
            raise error_at(node, "ANY/ALL need a subquery")
        value = self.bind(node.this)
        plan, _ = self.binder.bind_subquery(query, self.scope)
        self._check_single_column(node, plan)
        self._check_comparable(node, value, ColumnRef(plan.output[0]))
        return SubqueryExpr("all" if isinstance(quantifier, exp.All) else "any", plan, value, name,
                            where=position(node))

    def _check_single_column(self, node: exp.Expr, plan: Plan) -> None:
        if len(plan.output) != 1:
            raise error_at(node, f"subquery must return one column, it returns {len(plan.output)}")


def add_days(date: Expr, days: Expr, negate: bool) -> Expr:
    """``date + days`` (``date - days`` with ``negate``): a date constant when both are constants,
    else ``add_days(date, n)``, which every dialect renders to give a DATE (DuckDB's
    ``date + INTERVAL`` would give a timestamp). NULL days give NULL."""
    if isinstance(days, Constant) and days.value is not None:
        amount = -days.value if negate else days.value
        if isinstance(date, Constant) and date.value is not None:
            return Constant(date.value + dt.timedelta(days=amount), T.DATE)
        return Call("add_days", (date, Constant(amount, days.type)), T.DATE)
    if negate:
        days = Call("negate", (days,), days.type)
    return Call("add_days", (date, days), T.DATE)


def aggregate_type(node: exp.Expr, name: str, arg: T.DataType) -> T.DataType:
    if name == "count":
        return T.BIGINT
    if name in ("min", "max", "any_value"):
        return arg
    if not (arg.is_numeric or arg == T.NULL):
        raise error_at(node, f"{name} needs a number, got {arg}")
    if is_moment(name):
        return T.DOUBLE
    if name == "sum":
        if arg.name == "decimal":
            return T.decimal(38, arg.scale or 0)
        return T.DOUBLE if arg == T.DOUBLE else T.BIGINT
    if arg.name == "decimal":  # avg
        return T.decimal(38, max(arg.scale or 0, 6))
    return T.DOUBLE


def _integer_constant(expr: Expr) -> bool:
    return isinstance(expr, Constant) and expr.type.is_integer and type(expr.value) is int
