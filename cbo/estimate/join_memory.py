"""What inner-join sets keep of the leaf estimates they read (``cbo.estimate.join_sets``).

The join sets of one tree, and the groups of one memo, share their leaves: a class's factor, a
leaf's correlation, a class's joint distribution or a whole set's estimate computed for the
same columns of the same leaf estimates is read again rather than computed again. It is kept on
the first of those estimates, keyed by what was computed and the others (by identity: the entry
holds them, so they live as long as it does). A leaf estimate is the estimate of one plan node
in one estimation (``EstimationContext``) or of one memo group, and goes with it: what a query
derived is never read by another.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from cbo.estimate.relation import Leaf, RelEstimate
from cbo.ir.expressions import Column

T = TypeVar("T")


def _remembered(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                compute: Callable[[list[str]], float], notes: list[str]) -> float:
    """A class's (or a leaf's) factor, computed once for the same columns of the same leaf
    estimates: the sets of one join tree, and the groups of one memo, share their leaves, and
    a class or leaf met again is not measured again (its notes are repeated)."""
    return _remembered_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute, notes)


def _remembered_over(what: tuple, estimates: tuple[RelEstimate, ...], compute: Callable[[list[str]], float],
                     notes: list[str]) -> float:
    """``_remembered`` of the columns whose leaf estimates are ``estimates``, in their order."""
    def measured() -> tuple[float, list[str]]:
        own: list[str] = []
        return compute(own), own

    value, own = _kept_over(("factor", what), estimates, measured)
    notes.extend(own)
    return value


def _kept(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
          compute: Callable[[], T]) -> T:
    """``compute()``, computed once for the same columns of the same leaf estimates."""
    return _kept_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute)


def _kept_over(what: Hashable, estimates: tuple[RelEstimate, ...], compute: Callable[[], T]) -> T:
    """``_kept`` of the columns whose leaf estimates are ``estimates``, in their order."""
    first, others = estimates[0], estimates[1:]
    memory = first.__dict__.get("_join_memory")   # (the entries kept on the first estimate)
    if memory is None:
        memory = first.__dict__["_join_memory"] = {}
    key = (what, *[id(e) for e in others])
    found = memory.get(key)
    if found is not None:
        return found[1]
    value = compute()
    memory[key] = (others, value)   # (the others held: their ids stay theirs)
    return value
