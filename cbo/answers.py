"""Comparing query answers across engines.

Engines return the same answer in different clothes: PostgreSQL and Spark give ``Decimal``,
DuckDB gives ``float`` for averages; Spark rounds decimal division to 6 places. Answers are
normalized (numbers to float, dates to ISO text) and compared with a tolerance. Row order is
compared only when the query's outermost SELECT has an ORDER BY.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Sequence

import sqlglot
from sqlglot import exp

Row = tuple[Any, ...]

REL_TOL = 1e-6
ABS_TOL = 1e-4  # answers carry at most 4 meaningful decimals (money, Spark's 6-place division)


def normalize_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return normalize_value(value.item())
    return value


def normalize_rows(rows: Sequence[Sequence[Any]]) -> list[Row]:
    return [tuple(normalize_value(v) for v in row) for row in rows]


def _sort_key(row: Row) -> tuple[Any, ...]:
    # None sorts first; numbers are rounded so near-equal values from two engines sort alike.
    return tuple((0, "") if v is None else (1, round(v, 2)) if isinstance(v, float) else (2, str(v))
                 for v in row)


def values_match(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


@dataclass(frozen=True)
class Comparison:
    matches: bool
    detail: str = ""


def compare(expected: Sequence[Sequence[Any]], actual: Sequence[Sequence[Any]], *, ordered: bool) -> Comparison:
    """Compare two answers as lists (``ordered``) or multisets of rows, numbers within tolerance."""
    left, right = normalize_rows(expected), normalize_rows(actual)
    if len(left) != len(right):
        return Comparison(False, f"{len(right)} rows, expected {len(left)}")
    if not ordered:
        left, right = sorted(left, key=_sort_key), sorted(right, key=_sort_key)
    for index, (want, got) in enumerate(zip(left, right)):
        if len(want) != len(got):
            return Comparison(False, f"row {index}: {len(got)} columns, expected {len(want)}")
        for column, (a, b) in enumerate(zip(want, got)):
            if not values_match(a, b):
                return Comparison(False, f"row {index} column {column}: {b!r}, expected {a!r}")
    return Comparison(True)


def is_ordered(sql_text: str, dialect: str | None = None) -> bool:
    """Whether the statement's outermost query has an ORDER BY (so row order is part of the answer)."""
    tree = sqlglot.parse_one(sql_text, read=dialect)
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return tree.args.get("order") is not None


def digest(rows: Sequence[Sequence[Any]], *, ordered: bool) -> str:
    """A short fingerprint of an answer, for spotting changes between runs on one engine.

    Numbers are rounded to 9 significant digits, so two engines usually agree, but rounding
    can differ at the last digit: compare answers across engines with :func:`compare`.
    """
    normal = normalize_rows(rows)
    if not ordered:
        normal = sorted(normal, key=_sort_key)
    text = "\n".join("|".join(f"{v:.9g}" if isinstance(v, float) else "NULL" if v is None else str(v)
                              for v in row) for row in normal)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
