"""The order a MariaDB source joins a pushed inner-join tree in: cbo's, fixed by STRAIGHT_JOIN.

MariaDB runs an inner join as nested loops over index lookups, in one order of its tables that
its optimizer picks from its own row estimates. It has no estimate for a predicate such as
``p_name LIKE '%green%'`` (no index, and a histogram cannot bound a pattern), so it takes that
filter as keeping every row. TPC-H Q9's pushed part-partsupp-supplier-nation join (federated3,
SF 1) then starts at nation and looks up all 800,000 partsupp rows by supplier and each one's
part, 18.1 s (load 8); started at the filtered part it looks up 43,000 rows, 1.3 s. cbo's
estimates do see the filter, so the flat join's inputs are listed in the order cbo chooses and
joined with ``STRAIGHT_JOIN``, which makes MariaDB keep that order (tables of one input stay
free among themselves; the rows are the same in any order: only the work changes).

The order (``driving_order``) is the left-deep one with the fewest intermediate rows (the sum of
every prefix's estimated rows, C_out) found greedily from each starting input: at each step the
input connected to those already placed by a join condition that gives the fewest rows (an input
not connected is taken only when none is). A nested-loop join reads each prefix row once to
probe the next table, so C_out is the number of lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cbo.ir.expressions import TRUE, Column, Expr, columns_of, conjunction
from cbo.ir.operators import Filter, Join, Plan

Rows = Callable[[Plan], float]


def driving_order(inputs: Sequence[Plan], conditions: Sequence[Expr], rows: Rows) -> list[Plan]:
    """``inputs`` of a flat inner join with ``conditions`` (its join conditions and filters over
    them) in the order with the fewest estimated intermediate rows; ``rows`` estimates a plan.
    Ties keep the given order."""
    if len(inputs) < 2:
        return list(inputs)
    columns = [frozenset(i.output) for i in inputs]
    needs = [columns_of(c) for c in conditions]
    best: tuple[float, list[int]] | None = None
    for start in range(len(inputs)):
        total, order = _greedy(start, inputs, columns, conditions, needs, rows)
        if best is None or total < best[0]:
            best = (total, order)
    assert best is not None
    return [inputs[i] for i in best[1]]


def _greedy(start: int, inputs: Sequence[Plan], columns: list[frozenset[Column]], conditions: Sequence[Expr],
            needs: list[frozenset[Column]], rows: Rows) -> tuple[float, list[int]]:
    applied: set[int] = set()
    plan = _with_own(start, inputs, columns, conditions, needs, applied)
    placed_columns = set(columns[start])
    order, total = [start], rows(plan)
    remaining = [i for i in range(len(inputs)) if i != start]
    while remaining:
        choice: tuple[bool, float, int, Plan, set[int]] | None = None
        for candidate in remaining:
            own: set[int] = set(applied)
            right = _with_own(candidate, inputs, columns, conditions, needs, own)
            reach = placed_columns | columns[candidate]
            joining = [k for k in range(len(conditions)) if k not in own and needs[k] <= reach]
            connected = any(needs[k] & columns[candidate] and needs[k] & placed_columns for k in joining)
            joined = Join("inner", plan, right, conjunction(conditions[k] for k in joining) if joining else TRUE)
            found = rows(joined)
            key = (not connected, found)
            if choice is None or key < (not choice[0], choice[1]):
                choice = (connected, found, candidate, joined, own | set(joining))
        assert choice is not None
        _, found, candidate, plan, applied = choice
        order.append(candidate)
        remaining.remove(candidate)
        placed_columns |= columns[candidate]
        total += found
    return total, order


def _with_own(index: int, inputs: Sequence[Plan], columns: list[frozenset[Column]], conditions: Sequence[Expr],
              needs: list[frozenset[Column]], applied: set[int]) -> Plan:
    """Input ``index`` with the conditions over its columns alone (a filter the flat join lifted
    off it), marking them in ``applied``."""
    own = [k for k in range(len(conditions)) if k not in applied and needs[k] <= columns[index]]
    applied.update(own)
    return Filter(inputs[index], conjunction(conditions[k] for k in own)) if own else inputs[index]
