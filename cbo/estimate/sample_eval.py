"""Evaluating a predicate on a table's row sample, vectorized with NumPy.

Three-valued logic is kept as two masks per boolean expression, TRUE and FALSE (NULL is
neither), so NOT, AND and OR behave as in SQL. Supported: column references and constants,
arithmetic, comparisons, IN, BETWEEN, IS NULL, LIKE, NOT/AND/OR, COALESCE of booleans,
EXTRACT(YEAR) and substring. Anything else makes the whole evaluation return None and the
estimator falls back to statistics.
"""

from __future__ import annotations

import datetime as dt
import decimal
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from cbo.estimate.column import like_regex
from cbo.estimate.constants import NOT_CONSTANT, constant_value
from cbo.ir.expressions import Call, Column, ColumnRef, Constant, Expr, SpecialForm

Arrays = Callable[[Column], "tuple[np.ndarray, np.ndarray] | None"]
# What is made of a sample column's values (its strings' codes, its Arrow copy), by whoever holds
# the column: ``kept(column, what, make)`` is ``make(values)``, kept for the column.
Kept = Callable[[Column, str, Callable[[np.ndarray], Any]], Any]
COMPARE = {"eq": operator.eq, "neq": operator.ne, "lt": operator.lt, "lte": operator.le, "gt": operator.gt,
           "gte": operator.ge}
# Arithmetic over sample arrays (numpy); constants alone fold in ``constants`` first.
ARRAY_ARITHMETIC = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul}


class Unsupported(Exception):
    pass


def evaluate(predicate: Expr, arrays: Arrays, size: int, kept: Kept | None = None) -> np.ndarray | None:
    """Mask of sample rows where ``predicate`` is TRUE, or None if it cannot be evaluated here.
    ``kept`` keeps what is made of a column's values for the next predicate over it (without
    it, each evaluation makes its own)."""
    try:
        true, _ = _boolean(predicate, _Columns(arrays, kept), size)
    except (Unsupported, TypeError, ValueError, OverflowError):
        return None
    return true


class _Columns:
    """The sample's columns as a predicate reads them: their values, and what is made of them."""

    __slots__ = ("arrays", "kept")

    def __init__(self, arrays: Arrays, kept: Kept | None):
        self.arrays = arrays
        self.kept = kept

    def made(self, e: Expr, what: str, make: Callable[[np.ndarray], Any]) -> Any:
        """``make`` of the values of ``e``, a column reference: kept where the sample keeps it."""
        assert isinstance(e, ColumnRef)
        if self.kept is not None:
            return self.kept(e.column, what, make)
        found = self.arrays(e.column)
        assert found is not None
        return make(found[0])


def _boolean(e: Expr, sample: _Columns, n: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(e, SpecialForm):
        if e.form == "AND":
            parts = [_boolean(a, sample, n) for a in e.args]
            return np.logical_and.reduce([t for t, _ in parts]), np.logical_or.reduce([f for _, f in parts])
        if e.form == "OR":
            parts = [_boolean(a, sample, n) for a in e.args]
            return np.logical_or.reduce([t for t, _ in parts]), np.logical_and.reduce([f for _, f in parts])
        if e.form == "NOT":
            t, f = _boolean(e.args[0], sample, n)
            return f, t
        if e.form == "IS_NULL":
            _, nulls = _value(e.args[0], sample, n)
            return nulls.copy(), ~nulls
        if e.form == "IN":
            values, nulls = _value(e.args[0], sample, n)
            true = np.zeros(n, dtype=bool)
            unknown = np.zeros(n, dtype=bool)
            for item in e.args[1:]:
                other, other_nulls = _value(item, sample, n)
                other = _dated(other, values)
                both = ~nulls & ~other_nulls
                true |= both & _compare("eq", values, other, _coded_column(e.args[0], values, other, sample))
                unknown |= ~both
            return true, ~true & ~unknown
        if e.form == "BETWEEN":
            low = Call("gte", (e.args[0], e.args[1]), e.type)
            high = Call("lte", (e.args[0], e.args[2]), e.type)
            return _boolean(SpecialForm("AND", (low, high), e.type), sample, n)
        if e.form == "COALESCE":
            true = np.zeros(n, dtype=bool)
            false = np.zeros(n, dtype=bool)
            decided = np.zeros(n, dtype=bool)
            for arg in e.args:
                t, f = _boolean(arg, sample, n)
                true |= ~decided & t
                false |= ~decided & f
                decided |= t | f
            return true, false
        raise Unsupported(e.form)
    if isinstance(e, Call):
        if e.name in COMPARE:
            left, left_nulls = _value(e.args[0], sample, n)
            right, right_nulls = _value(e.args[1], sample, n)
            left, right = _dated(left, right), _dated(right, left)
            known = ~left_nulls & ~right_nulls
            coded = _coded_column(e.args[0], left, right, sample) if e.name in ("eq", "neq") else None
            result = _compare(e.name, left, right, coded)
            return known & result, known & ~result
        if e.name == "like":
            values, nulls = _value(e.args[0], sample, n)
            pattern = e.args[1]
            if not isinstance(pattern, Constant) or not isinstance(pattern.value, str):
                raise Unsupported("LIKE with a non-constant pattern")
            strings = None
            if "\\" not in pattern.value and isinstance(e.args[0], ColumnRef) and _is_strings(values):
                strings = sample.made(e.args[0], "arrow", _arrow)
            matched = _like(values, pattern.value, n, strings)
            return matched & ~nulls, ~matched & ~nulls
    if isinstance(e, Constant) and isinstance(e.value, bool):
        return np.full(n, e.value), np.full(n, not e.value)
    if isinstance(e, Constant) and e.value is None:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if isinstance(e, ColumnRef):
        values, nulls = _value(e, sample, n)
        return values.astype(bool) & ~nulls, ~values.astype(bool) & ~nulls
    raise Unsupported(type(e).__name__)


def _dated(value: Any, other: Any) -> Any:
    """A string compared with dates or timestamps (``d_date BETWEEN '2000-01-27' AND ...``) as
    the date or timestamp it spells, as the engines cast it; anything else as it is."""
    if type(value) is not str or not isinstance(other, np.ndarray) or not np.issubdtype(other.dtype, np.datetime64):
        return value
    try:
        return np.datetime64(value.strip()).astype(other.dtype)
    except ValueError:
        raise Unsupported(f"{value!r} compared with dates") from None


def _like(values: Any, pattern: str, n: int, strings: Any = None) -> np.ndarray:
    """Rows whose string matches the LIKE ``pattern``: in Arrow's kernel over the column's
    Arrow copy (``strings``, made once per sample column where given), one vectorized kernel
    instead of a regular expression per row; the regular expression where Arrow's LIKE would read a
    backslash as an escape, which cbo's does not."""
    if not isinstance(values, np.ndarray) or not values.ndim:
        return np.zeros(n, dtype=bool)
    if "\\" not in pattern and values.dtype == object:
        import pyarrow.compute as pc

        matched = pc.fill_null(pc.match_like(strings if strings is not None else _arrow(values), pattern), False)
        return np.asarray(matched.to_numpy(zero_copy_only=False), dtype=bool)
    regex = like_regex(pattern)
    return np.fromiter((bool(regex.fullmatch(v)) if isinstance(v, str) else False for v in values),
                       dtype=bool, count=len(values))


def _is_strings(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1


def _arrow(values: np.ndarray) -> Any:
    """An Arrow string array of a column's values (non-strings as nulls)."""
    import pyarrow as pa

    return pa.array([v if isinstance(v, str) else None for v in values], type=pa.string())


def _coded_column(e: Expr, values: Any, right: Any, sample: _Columns) -> tuple[np.ndarray, dict[str, int]] | None:
    """The codes (``_coded``) of a sample column of strings compared with a string, None for
    any other comparison."""
    if type(right) is str and isinstance(e, ColumnRef) and _is_strings(values):
        return sample.made(e, "codes", _coded)
    return None


def _compare(name: str, left: Any, right: Any, coded: tuple[np.ndarray, dict[str, int]] | None = None) -> np.ndarray:
    """``left`` compared with ``right``; ``coded``: the codes of ``left``, a sample column, through
    which a string is compared for (in)equality."""
    if coded is not None and name in ("eq", "neq") and type(right) is str:
        codes, known = coded
        code = known.get(right)
        if code is None:    # no row holds the string: none is equal, all differ
            return np.zeros(len(codes), dtype=bool) if name == "eq" else np.ones(len(codes), dtype=bool)
        return codes == code if name == "eq" else codes != code
    result = COMPARE[name](left, right)
    return np.asarray(result, dtype=bool)


def _coded(values: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """Per row of an object column, the code of its string (-1 for anything else: a NULL, a
    number), and the code of each string. A string column compared with ``=``, ``<>`` or
    ``IN`` would compare each row's Python string (TPC-H's filters make dozens of such
    comparisons per query); its codes compare as integers. A row equals a string exactly where
    its code is the string's (dictionary keys compare as ``==`` does; no other object equals a
    string)."""
    known: dict[str, int] = {}
    codes = np.fromiter((known.setdefault(v, len(known)) if isinstance(v, str) else -1 for v in values),
                        dtype=np.int64, count=len(values))
    codes.flags.writeable = False
    return codes, known


def _value(e: Expr, sample: _Columns, n: int) -> tuple[Any, np.ndarray]:
    """(values, nulls): an array or a scalar (constants broadcast), and a NULL mask."""
    if isinstance(e, ColumnRef):
        found = sample.arrays(e.column)
        if found is None:
            raise Unsupported(f"no sample column for {e.column}")
        return found
    if isinstance(e, Constant):
        if e.value is None:
            return np.zeros(n), np.ones(n, dtype=bool)
        return scalar(e.value), np.zeros(n, dtype=bool)
    if isinstance(e, Call):
        if e.name in ARRAY_ARITHMETIC or e.name in ("divide", "float_divide", "int_divide"):
            folded = constant_value(e)    # constants alone: exactly, before the floats
            if folded is not NOT_CONSTANT and folded is not None:
                return scalar(folded), np.zeros(n, dtype=bool)
            (a, an), (b, bn) = _value(e.args[0], sample, n), _value(e.args[1], sample, n)
            if e.name not in ARRAY_ARITHMETIC:   # a division (a zero divisor: NULL here, a row that fails)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out = np.true_divide(a, b)
                    if e.name == "int_divide":
                        out = np.trunc(out)
                zero = np.asarray(b == 0)
                return out, an | bn | zero
            return ARRAY_ARITHMETIC[e.name](a, b), an | bn
        if e.name == "negate":
            a, an = _value(e.args[0], sample, n)
            return -a, an
        if e.name == "extract_year":
            a, an = _value(e.args[0], sample, n)
            if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.datetime64):
                return a.astype("datetime64[Y]").astype(np.int64).astype(np.float64) + 1970, an
        if e.name == "substring" and len(e.args) in (2, 3):
            a, an = _value(e.args[0], sample, n)
            start = e.args[1]
            length = e.args[2] if len(e.args) == 3 else None
            if isinstance(start, Constant) and (length is None or isinstance(length, Constant)) and \
                    isinstance(a, np.ndarray) and a.dtype == object:
                s = int(start.value) - 1
                end = None if length is None else s + int(length.value)
                return np.array([v[s:end] for v in a], dtype=object), an
    if isinstance(e, SpecialForm) and e.form == "CAST":
        a, an = _value(e.args[0], sample, n)
        if e.type.is_numeric and (not isinstance(a, np.ndarray) or a.dtype.kind in "fiu"):
            return a, an
    raise Unsupported(str(e))


def scalar(value: Any) -> Any:
    """A constant as the sample arrays hold it (float, datetime64, str)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return np.datetime64(value, "us")
    if isinstance(value, dt.date):
        return np.datetime64(value, "D")
    if isinstance(value, str):
        return value
    raise Unsupported(f"constant {value!r}")
