"""Comparisons between two columns (``a < b``, ``a >= b``...) from both distributions.

The share of row pairs where ``a < b`` holds, taking the two columns as independent: each
weighted point of ``b`` (``atoms``) keeps the share of ``a``'s rows below it. NULL on either
side fails the comparison. This answers ``l_quantity < 0.2 * avg(l_quantity)`` or
``sum(x) > (SELECT 0.0001 * sum(x) ...)`` from data where the default was a third.
"""

from __future__ import annotations

import numpy as np

from cbo.estimate.atoms import atoms
from cbo.estimate.column import ColumnEstimate


def compare_columns(op: str, a: ColumnEstimate, b: ColumnEstimate) -> float | None:
    """Share of rows where ``a <op> b`` (op: lt, lte, gt, gte); None when the two
    distributions cannot be placed on one line."""
    if op in ("gt", "gte"):
        return compare_columns("lt" if op == "gt" else "lte", b, a)
    if op not in ("lt", "lte") or a.kind is None or a.kind != b.kind:
        return None
    found_a, found_b = atoms(a), atoms(b)
    if found_a is None or found_b is None:
        return None
    (pa, wa), (pb, wb) = found_a, found_b
    total_a, total_b = float(wa.sum()), float(wb.sum())
    if total_a <= 0 or total_b <= 0:
        return 0.0
    order = np.argsort(pa)
    pa, cumulative = pa[order], np.concatenate([[0.0], np.cumsum(wa[order])])
    below = np.searchsorted(pa, pb, side="left" if op == "lt" else "right")
    share = float((wb * cumulative[below]).sum()) / (total_a * total_b)
    return share * (1.0 - a.null_fraction) * (1.0 - b.null_fraction)
