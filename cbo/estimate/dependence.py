"""Which column of a table determines another, measured on the table's row sample.

Fact tables hold a document's lines: every line of a TPC-DS ``store_sales`` ticket has the
ticket's date, store, customer and household. A filter through those columns (a join with a
filtered ``date_dim``) keeps or drops a ticket's lines together, so the tickets left are the
kept share of the tickets, not the many more that rows surviving one by one would leave
(``column.thinned``); and a grouping by ticket and customer has as many groups as tickets, not
their product. Both follow from a functional dependency ``ticket -> customer``.

``determines(sample, a, b)``: among the sampled rows that share their value of ``a`` with
another sampled row, whether the groups they form nearly all (``AGREEMENT``) hold one value of
``b``. Rows where either is NULL are left out: a generator that blanks single fields of rows
at random (TPC-DS's does) leaves the dependency in the other rows. It takes at least
``MIN_GROUPS`` such groups to say yes: a sample too thin to see repeated values of ``a``
decides nothing, and the estimate stays the independent one.
"""

from __future__ import annotations

import numpy as np

from cbo.estimate.relation import Origin
from cbo.estimate.samples import TableSample

MIN_GROUPS = 30     # groups of sampled rows sharing a value of the determining column
AGREEMENT = 0.95    # share of those groups holding a single value of the determined column


def determines(sample: TableSample, a: str, b: str) -> bool:
    """Whether column ``a`` functionally determines column ``b`` on ``sample`` (kept there)."""
    if a == b:
        return True
    return sample.kept(("determines", a, b), lambda: _measured(sample, a, b))


def origin_determines(a: Origin | None, b: Origin | None) -> bool:
    """``determines`` for two plan columns by their origins: both from one table's sample."""
    if a is None or b is None or a.sample is None or b.sample is None or a.name is None or b.name is None \
            or a.extreme is not None or b.extreme is not None or a.sample.sample is not b.sample.sample:
        return False
    return determines(a.sample.sample, a.name, b.name)


def _measured(sample: TableSample, a: str, b: str) -> bool:
    first, second = sample.column(a), sample.column(b)
    if first is None or second is None:
        return False
    present = ~first[1] & ~second[1]
    if int(present.sum()) < 2:
        return False
    first_codes, second_codes = _codes(sample, a), _codes(sample, b)
    if first_codes is None or second_codes is None:
        return False
    groups, others = first_codes[present], second_codes[present]
    sizes = np.bincount(groups)
    shared = sizes[groups] >= 2
    repeated = int((sizes >= 2).sum())
    if repeated < MIN_GROUPS:
        return False
    width = int(others.max()) + 1
    pairs = np.unique(groups[shared].astype(np.int64) * width + others[shared])
    values_per_group = np.bincount(pairs // width, minlength=len(sizes))
    return int((values_per_group[sizes >= 2] == 1).sum()) >= AGREEMENT * repeated


def _codes(sample: TableSample, name: str) -> np.ndarray | None:
    """Each sampled row's value of a column as a small integer (equal values, equal codes),
    kept on the sample: a column is compared with several others, and sorting its values is
    the expensive part."""
    def measured() -> np.ndarray | None:
        column = sample.column(name)
        if column is None:
            return None
        try:
            return np.unique(column[0], return_inverse=True)[1].reshape(-1)
        except TypeError:   # values of mixed types that do not sort
            return None
    return sample.kept(("sorted codes", name), measured)
