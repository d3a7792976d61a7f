"""Division and remainder as the query's dialect defines them, whatever engine runs the plan.

The dialects disagree on two points, and cbo binds ``/`` and ``%`` to one of five IR functions
so that every engine computes what the query's own dialect would:

=========================  ====================  ==========================  ======================
dialect                    ``int / int``         ``x / 0``, ``x % 0``        with a DOUBLE operand
=========================  ====================  ==========================  ======================
trino, presto              integer (truncated)   error                       IEEE: ±Infinity, NaN
postgres                   integer (truncated)   error                       error
spark (ANSI mode)          fractional (double)   error                       error
duckdb                     fractional (double)   ``/``: IEEE; ``%``: error   IEEE (``%``: NaN)
=========================  ====================  ==========================  ======================

The IR functions (``docs/guide/sql.md`` has the user's view):

* ``divide``: fractional division (a double for integers, a decimal for decimals); a zero
  divisor is an error.
* ``int_divide``: integer division truncated toward zero (``-7 / 2`` is -3); a zero divisor is
  an error.
* ``float_divide``: division in doubles, IEEE 754: a zero divisor gives +Infinity, -Infinity or
  NaN by the dividend's sign (NaN for 0 or NaN), as DuckDB's ``/`` and Trino's double division.
* ``modulus``: the remainder, with the dividend's sign; a zero divisor is an error.
* ``float_modulus``: the remainder in doubles; a zero divisor gives NaN.

``cbo.sqlgen`` renders each so that DuckDB and Spark agree with it (DuckDB's ``/`` never
raises; Spark's ANSI mode always does).
"""

from __future__ import annotations

from cbo.frontend.languages import QueryDialect
from cbo.ir import types as T
from cbo.ir.expressions import Call, Expr


def refused(dialect: QueryDialect, name: str, left: Expr, right: Expr) -> str | None:
    """Why ``dialect`` has no such operation (None: it has): PostgreSQL's ``%`` takes integers
    and numerics only."""
    if name == "modulus" and not dialect.double_modulus and T.DOUBLE in (left.type, right.type):
        return f"{dialect.title} has no % for double precision (cast to numeric)"
    return None


def division(dialect: QueryDialect, name: str, left: Expr, right: Expr, result: T.DataType) -> Call:
    """``left / right`` (``name`` "divide") or ``left % right`` ("modulus") in ``dialect``;
    ``result``: the type ``T.arithmetic_type`` gives the operator."""
    integers = all(e.type in (T.INTEGER, T.BIGINT) for e in (left, right))
    has_double = T.DOUBLE in (left.type, right.type)
    if name == "divide":
        if integers and dialect.integer_division:
            return Call("int_divide", (left, right), T.BIGINT if T.BIGINT in (left.type, right.type) else T.INTEGER)
        if dialect.ieee_division or has_double and dialect.ieee_double_division:
            return Call("float_divide", (left, right), T.DOUBLE)
        return Call("divide", (left, right), result)
    if has_double and dialect.ieee_double_division:
        return Call("float_modulus", (left, right), T.DOUBLE)
    return Call("modulus", (left, right), result)
