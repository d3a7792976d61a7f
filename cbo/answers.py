"""Comparing query answers across engines.

Engines return the same answer in different clothes: PostgreSQL and Spark give ``Decimal``,
DuckDB gives ``float`` for averages; Spark rounds decimal division to 6 places. Answers are
normalized (numbers to float, dates to ISO text) and compared with a tolerance. Row order is
compared only when the query's outermost SELECT has an ORDER BY.
"""

from __future__ import annotations

import bisect
import datetime as dt
import decimal
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    # Exact values, None first. Rounding here (to let near-equal values from two engines sort
    # alike) would make distinct values tie, and a stable sort then pairs rows by their input
    # order; near-equal values are paired by ``_match_rows`` instead.
    return tuple((0, 0.0, "") if v is None else (1, v, "") if isinstance(v, float) else (2, 0.0, str(v))
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
    for index, (want, got) in enumerate(zip(left, right)):
        if len(want) != len(got):
            return Comparison(False, f"row {index}: {len(got)} columns, expected {len(want)}")
    if ordered:
        return _compare_in_order(left, right)
    left, right = sorted(left, key=_sort_key), sorted(right, key=_sort_key)
    if _compare_in_order(left, right).matches:   # the usual case: exact sorting pairs them
        return Comparison(True)
    return _match_rows(left, right)


def _compare_in_order(left: list[Row], right: list[Row]) -> Comparison:
    for index, (want, got) in enumerate(zip(left, right)):
        if len(want) != len(got):
            return Comparison(False, f"row {index}: {len(got)} columns, expected {len(want)}")
        for column, (a, b) in enumerate(zip(want, got)):
            if not values_match(a, b):
                return Comparison(False, f"row {index} column {column}: {b!r}, expected {a!r}")
    return Comparison(True)


def rows_match(a: Row, b: Row) -> bool:
    return len(a) == len(b) and all(values_match(x, y) for x, y in zip(a, b))


def _exact_part(row: Row) -> tuple[Any, ...]:
    """What two matching rows share exactly: every value but the floats (and where they are)."""
    return tuple(("<nan>" if math.isnan(v) else "<float>") if isinstance(v, float) else v for v in row)


def _match_rows(left: list[Row], right: list[Row]) -> Comparison:
    """Pair the rows of two equally long multisets so that paired rows match within tolerance.

    Exact sorting fails to pair rows when floats differ in their last digits across engines
    and another column breaks the tie the other way, e.g. (0.3, 1.0), (0.30000000000000004, 2.0)
    against (0.30000000000000004, 1.0), (0.3, 2.0). Rows are grouped by their exact part, and
    within a group a bipartite matching (Kuhn's augmenting paths) over the pairs that match
    within tolerance decides; candidates come from a window on the first float column, so large
    answers stay near-linear.
    """
    groups: dict[tuple[Any, ...], tuple[list[Row], list[Row]]] = {}
    for row in left:
        groups.setdefault(_exact_part(row), ([], []))[0].append(row)
    for row in right:
        groups.setdefault(_exact_part(row), ([], []))[1].append(row)
    for wants, gots in groups.values():
        if len(wants) != len(gots):
            missing = wants[0] if len(wants) > len(gots) else None
            if missing is not None:
                return Comparison(False, f"no row matches expected row {missing!r}")
            return Comparison(False, f"unexpected row {gots[0]!r}")
        unmatched = _unmatched(wants, gots)
        if unmatched is not None:
            return Comparison(False, f"no row matches expected row {unmatched!r}")
    return Comparison(True)


def _unmatched(wants: list[Row], gots: list[Row]) -> Row | None:
    """An expected row left without a partner by a maximum matching, or None if all pair up."""
    first = next((i for i, v in enumerate(wants[0]) if isinstance(v, float) and not math.isnan(v)), None)
    if first is None:   # no floats: the exact parts were equal, so every pair matches
        return None
    keys = sorted(range(len(gots)), key=lambda j: gots[j][first])
    values = [gots[j][first] for j in keys]

    def candidates(want: Row) -> list[int]:
        v = want[first]
        slack = max(ABS_TOL, REL_TOL * abs(v)) * 1.000001
        low, high = bisect.bisect_left(values, v - slack), bisect.bisect_right(values, v + slack)
        return [keys[k] for k in range(low, high) if rows_match(want, gots[keys[k]])]

    partner: dict[int, int] = {}   # right row -> left row

    def augment(i: int, seen: set[int], edges: list[list[int]]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in partner or augment(partner[j], seen, edges):
                partner[j] = i
                return True
        return False

    edges = [candidates(want) for want in wants]
    for i in range(len(wants)):
        if not augment(i, set(), edges):
            return wants[i]
    return None


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
