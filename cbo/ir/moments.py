"""The second-moment aggregates: variance and standard deviation, sample and population.

``var_samp(x)``, ``var_pop(x)``, ``stddev_samp(x)`` and ``stddev_pop(x)`` over the non-NULL
values ``x_1 .. x_n`` of a group, as DuckDB, Spark (``spark.sql.legacy.statisticalAggregate``
off, its default), PostgreSQL and MariaDB define them:

* ``var_pop = sum((x_i - mean)^2) / n`` and ``var_samp = sum((x_i - mean)^2) / (n - 1)``;
  ``stddev_*`` is the square root of ``var_*``; SQL's ``stddev`` and ``variance`` are the
  sample forms;
* NULL when ``n = 0`` (no row, or only NULLs), and the sample forms also when ``n = 1``; the
  population forms of one value are 0;
* a DOUBLE whatever the argument's numeric type.

**Partial and final forms** (``split``). A group's moments follow from three sums that add up
across any partition of its rows: ``n = count(x)``, ``s = sum(x)`` and ``q = sum(x * x)`` (in
DOUBLE), so a partial aggregation computes the three per part and the final one sums them.
The result is then ``m2 = q - s * s / n`` (the sum of squared deviations) divided by ``n`` or
``n - 1``, NULL where ``n`` (or ``n - 1``) is 0 (``finish``). This is the textbook form, not
Welford's: its rounding error relative to the variance is about ``2^-52 * mean^2 / variance``,
negligible unless the values lie far from 0 against their spread (timestamps in microseconds,
say); ``m2`` is clamped at 0 so rounding never yields a negative variance or a NaN deviation.
Spark's own partial aggregation of these functions (its ``CentralMomentAgg``) is Spark's and
exact; this split is what cbo itself uses when it moves a partial aggregation below a join
(``cbo.memo.rules.eager_aggregation``).
"""

from __future__ import annotations

from dataclasses import dataclass

from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, Constant, Expr, SpecialForm

MOMENTS = ("var_samp", "var_pop", "stddev_samp", "stddev_pop")


def is_moment(name: str) -> bool:
    return name in MOMENTS


@dataclass(frozen=True)
class Split:
    """An aggregate as partial aggregates whose results add up across parts (``partials``,
    each combined by ``sum``), and the expression computing the result from the combined sums."""

    partials: tuple[AggregateCall, ...]
    name: str

    def finish(self, combined: tuple[Expr, ...]) -> Expr:
        """The aggregate's value from the combined partial results, in ``partials``' order."""
        return finish(self.name, *combined)


def split(call: AggregateCall) -> Split | None:
    """The partial form of a second-moment aggregate (None for any other call, or a DISTINCT one)."""
    if not is_moment(call.name) or call.distinct or len(call.args) != 1:
        return None
    x = call.args[0]
    value = x if x.type == T.DOUBLE else SpecialForm("CAST", (x,), T.DOUBLE)
    return Split((AggregateCall("count", (x,), False, T.BIGINT),
                  AggregateCall("sum", (value,), False, T.DOUBLE),
                  AggregateCall("sum", (Call("multiply", (value, value), T.DOUBLE),), False, T.DOUBLE)), call.name)


def finish(name: str, n: Expr, s: Expr, q: Expr) -> Expr:
    """``name``'s value from ``n = count(x)``, ``s = sum(x)`` and ``q = sum(x * x)``."""
    count = SpecialForm("CAST", (n,), T.DOUBLE)
    deviation = Call("subtract", (q, Call("divide", (Call("multiply", (s, s), T.DOUBLE), count), T.DOUBLE)),
                     T.DOUBLE)
    m2 = SpecialForm("CASE", (Call("lt", (deviation, Constant(0.0, T.DOUBLE)), T.BOOLEAN), Constant(0.0, T.DOUBLE),
                              deviation), T.DOUBLE)
    sample = name.endswith("_samp")
    divisor = Call("subtract", (count, Constant(1.0, T.DOUBLE)), T.DOUBLE) if sample else count
    variance = Call("divide", (m2, divisor), T.DOUBLE)
    value = Call("sqrt", (variance,), T.DOUBLE) if name.startswith("stddev") else variance
    least = 1 if sample else 0   # a sample's variance needs two values, a population's one
    return SpecialForm("CASE", (Call("gt", (n, Constant(least, T.BIGINT)), T.BOOLEAN), value,
                                Constant(None, T.DOUBLE)), T.DOUBLE)
