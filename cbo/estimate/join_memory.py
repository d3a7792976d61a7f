"""What inner-join sets keep of the leaf estimates they read (``cbo.estimate.join_sets``).

The join sets of one tree, and the groups of one memo, share their leaves: a class's factor, a
leaf's correlation or a class's joint distribution computed for the same columns of the same
leaf estimates is read again rather than computed again. Entries are keyed by the identity of
the leaf estimates and hold them by weak references (an id may be reused once an estimate is
gone); ``join_sets.forget_plans`` empties them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cbo.estimate.relation import Leaf, RelEstimate
from cbo.ir.expressions import Column

T = TypeVar("T")


def _alive(refs: tuple[weakref.ref, ...], estimates: Sequence[object]) -> bool:
    """Whether the remembered objects are these very objects (an id may be reused)."""
    for ref, estimate in zip(refs, estimates):
        if ref() is not estimate:
            return False
    return True


# Weak references to the leaf estimates: the cache must not keep every estimate it met alive
# (tens of thousands of them, each with its columns and sample masks, which every full garbage
# collection then walks).
_REMEMBERED: dict[tuple, tuple[tuple[weakref.ref, ...], float, list[str]]] = {}


def _remembered(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                compute: Callable[[list[str]], float], notes: list[str]) -> float:
    """A class's (or a leaf's) factor, computed once for the same columns of the same leaf
    estimates: the sets of one join tree, and the groups of one memo, share their leaves, and
    a class or leaf met again is not measured again (its notes are repeated)."""
    return _remembered_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute, notes)


def _remembered_over(what: tuple, estimates: tuple[RelEstimate, ...], compute: Callable[[list[str]], float],
                     notes: list[str]) -> float:
    """``_remembered`` of the columns whose leaf estimates are ``estimates``, in their order."""
    key = (what, tuple([id(e) for e in estimates]))
    found = _REMEMBERED.get(key)
    if found is not None and _alive(found[0], estimates):
        notes.extend(found[2])
        return found[1]
    own: list[str] = []
    value = compute(own)
    notes.extend(own)
    if len(_REMEMBERED) > 20_000:
        _REMEMBERED.clear()
    _REMEMBERED[key] = (tuple([weakref.ref(e) for e in estimates]), value, own)
    return value


# Values computed from the estimates of some leaves (a class's joint distribution, a leaf's
# matched share), kept as ``_REMEMBERED`` keeps factors: the join sets of one memo share their
# leaves, and an aggregation above each order of a join reads the same grouping columns.
_KEPT: dict[tuple, tuple[tuple[weakref.ref, ...], Any]] = {}


def _kept(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
          compute: Callable[[], T]) -> T:
    """``compute()``, computed once for the same columns of the same leaf estimates."""
    return _kept_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute)


def _kept_over(what: tuple, estimates: tuple[RelEstimate, ...], compute: Callable[[], T]) -> T:
    """``_kept`` of the columns whose leaf estimates are ``estimates``, in their order."""
    key = (what, tuple([id(e) for e in estimates]))
    found = _KEPT.get(key)
    if found is not None and _alive(found[0], estimates):
        return found[1]
    value = compute()
    if len(_KEPT) > 20_000:
        _KEPT.clear()
    _KEPT[key] = (tuple([weakref.ref(e) for e in estimates]), value)
    return value
