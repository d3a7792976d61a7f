"""Positions of values on a line, so ranges inside a histogram bucket can be interpolated.

Numbers are themselves; dates count days and timestamps microseconds; strings map their first
six characters (after the prefix two bounds share) to a number in base 256, which keeps
their order. ``discrete`` kinds (whole numbers, dates) count the values a range holds, so
``x <= 5`` in a bucket [1, 10] holds 5 of its 10 possible values, not 4/9 of its width.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

EPOCH = dt.date(1970, 1, 1)
EPOCH_TS = dt.datetime(1970, 1, 1)


def position(value: Any) -> float | None:
    """A number ordered as the values are, or None for values that cannot be placed."""
    place = _PLACES.get(type(value))
    if place is not None:   # the common exact types, without the chain of isinstance tests below
        return place(value)
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return (value - EPOCH_TS).total_seconds() * 1e6
    if isinstance(value, dt.date):
        return float((value - EPOCH).days)
    if isinstance(value, str):
        return string_position(value)
    return None


def _date_position(value: dt.date) -> float:
    return float((value - EPOCH).days)


def _timestamp_position(value: dt.datetime) -> float:
    return (value - EPOCH_TS).total_seconds() * 1e6


# By exact type, what ``position`` computes for it (a subclass takes the tests in order).
_PLACES: dict[type, Callable[[Any], float]] = {
    float: float, int: float, bool: float, decimal.Decimal: float,
    dt.date: _date_position, dt.datetime: _timestamp_position,
}


def string_position(text: str, prefix: int = 0) -> float:
    # Base 256 over six characters stays within a double's 53 bits; characters beyond Latin-1
    # share the top digit (order among them is lost, not the order against others).
    total = 0.0
    scale = 1.0
    for char in text[prefix:prefix + 6]:
        scale /= 256.0
        total += min(ord(char), 255) * scale
    return total


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def is_discrete(lower: Any, upper: Any) -> bool:
    if isinstance(lower, dt.datetime) or isinstance(upper, dt.datetime):
        return False
    if isinstance(lower, dt.date) and isinstance(upper, dt.date):
        return True
    if isinstance(lower, bool) or isinstance(upper, bool):
        return True
    return (isinstance(lower, int) or (isinstance(lower, float) and lower.is_integer())) and \
        (isinstance(upper, int) or (isinstance(upper, float) and upper.is_integer()))


def fraction_within(lower: Any, upper: Any, low: Any, high: Any, low_inclusive: bool = True,
                    high_inclusive: bool = True) -> float | None:
    """Share of the bucket [lower, upper]'s values that lie in the range (low, high).

    ``low``/``high`` None mean unbounded. None when the values cannot be placed.
    """
    if lower is None or upper is None:
        return None
    try:
        if low is not None and high is not None and \
                (low > high or (low == high and not (low_inclusive and high_inclusive))):
            return 0.0
        if (low is not None and (upper < low or (upper == low and not low_inclusive))) or \
                (high is not None and (lower > high or (lower == high and not high_inclusive))):
            return 0.0
        # A bound at or beyond the bucket's own bound cuts nothing off it: it is placed as that
        # bound. (A string is placed by its characters after the bucket's common prefix, which
        # a string outside the bucket need not share: 'antique' after 'almond ' read 'sienna'.)
        if low is not None and (low < lower or (low == lower and low_inclusive)):
            low = None
        if high is not None and (high > upper or (high == upper and high_inclusive)):
            high = None
    except TypeError:
        return None
    place: Callable[[Any], float | None] = position
    if isinstance(lower, str) and isinstance(upper, str):
        prefix = common_prefix(lower, upper)
        place = lambda v: string_position(v, prefix)  # noqa: E731
    lo, hi = place(lower), place(upper)
    if lo is None or hi is None:
        return None
    low_at = place(low) if low is not None else None
    high_at = place(high) if high is not None else None
    a = lo if low_at is None else max(lo, low_at)
    b = hi if high_at is None else min(hi, high_at)
    if is_discrete(lower, upper):
        if low_at is not None and not low_inclusive:
            a = max(a, _floor(low_at) + 1)
        if high_at is not None and not high_inclusive:
            b = min(b, _ceil(high_at) - 1)
        a, b = _ceil(a), _floor(b)
        if b < a:
            return 0.0
        return min(1.0, (b - a + 1) / (hi - lo + 1))
    if hi <= lo:
        return 1.0 if a <= lo <= b else 0.0
    return max(0.0, min(1.0, (b - a) / (hi - lo)))


def _floor(x: float) -> float:
    import math

    return float(math.floor(x))


def _ceil(x: float) -> float:
    import math

    return float(math.ceil(x))
