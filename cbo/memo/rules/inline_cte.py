"""InlineCte: a CTE computed once, or copied into each of its references; cost picks.

A CTE the query names more than once is bound once (``cbo.frontend.binder``): the plan is
``CteAnchor[n](P, B)``, which computes the producer ``P`` once and runs the body ``B``, whose
``CteConsumer[n]`` leaves read ``P``'s rows under their own column ids (Orca's CTEAnchor,
CTEProducer and CTEConsumer; El-Helw et al., "Optimization of Common Table Expressions in MPP
Database Systems", VLDB 2015). This rule puts beside it, in the same memo group, the body with
each consumer replaced by a copy of ``P`` (``cbo.ir.shape.fresh_copy``: every column renamed, a
projection giving the copy's output the consumer's ids), normalized again, so that each
reference's filters reach its copy and its unread columns are pruned.

Pattern: ``CteAnchor``. Result: ``normalize(B[C_i := Project[c_i := p'](P'_i)])`` for each
consumer ``C_i`` of CTE ``n`` in ``B`` (in producers of later CTEs too), ``P'_i`` a fresh copy.

Equivalence: a consumer's rows are the producer's rows, column for column; a copy of ``P``
computes those same rows (the same plan under new ids), so each reference reads the same bag
either way. It holds when ``P`` is deterministic and reads no column of an enclosing query:
the binder shares only a CTE whose plan has no free columns, and cbo's expressions are
deterministic (``row_id()``, the one that is not, numbers rows for keys only, never shown).

Which is cheaper is the cost model's call: computing once stores the producer's rows and reads
them back once per consumer (``CostModel._cte_anchor``, ``_cte_consumer``), and no consumer's
filter can reach the shared rows; inlined, each copy is computed on its own, filters pushed in.
EXPLAIN notes both costs at the anchor's group (``note_cte_costs``). Off with
``cte_strategy=SHARE`` (always computed once); ``cte_strategy=INLINE`` never shares.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cbo.ir.expressions import ColumnRef
from cbo.ir.operators import CteAnchor, CteConsumer, Plan, Project, consumers_of
from cbo.ir.shape import fresh_copy
from cbo.memo.memo import Group, group_of
from cbo.memo.pattern import Pattern
from cbo.memo.rules.base import TransformationRule
from cbo.normalize import normalize
from cbo.normalize.ctes import with_producers

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class InlineCte(TransformationRule):
    """Inline a CTE computed once: each of its consumers becomes a copy of the producer, with
    the reference's filters pushed into it (Orca's CTE inlining, beside the shared plan)."""

    name = "InlineCte"
    patterns = (Pattern(CteAnchor),)

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, CteAnchor)
        producer = _plan_of(group_of(expr.producer))
        body = _plan_of(group_of(expr.body))
        inlined = _inline(body, expr.cte, producer, context)
        yield with_producers(normalize(inlined))


def _plan_of(group: Group) -> Plan:
    """The group's first expression as a plan, its inputs' likewise (the form it was written in)."""
    first = group.find().first
    if not first.children:
        return first
    return first.with_children(tuple(_plan_of(group_of(c)) for c in first.children))


def _inline(plan: Plan, cte: int, producer: Plan, context: SearchContext) -> Plan:
    if isinstance(plan, CteConsumer) and plan.cte == cte:
        copy, _ = fresh_copy(producer, context.memo.new_column)
        return Project(copy, tuple((c, ColumnRef(p)) for c, p in zip(plan.columns, copy.output)))
    children = tuple(_inline(child, cte, producer, context) for child in plan.children)
    return plan.with_children(children) if any(a is not b for a, b in zip(children, plan.children)) else plan


def note_cte_costs(context: SearchContext, search: Any, chosen: Any) -> None:
    """For each group of the chosen plan (``cbo.physical.plan.PhysicalPlan``) that holds a CTE's
    anchor, note the best cost of computing it once and of inlining it (EXPLAIN shows them)."""
    groups = {node.group.find().id: node.group.find() for node in chosen.operators() if node.group is not None}
    anchored = [g for g in groups.values() if any(isinstance(e, CteAnchor) for e in g.expressions)]
    if not anchored:
        return
    # the CTEs the chosen plan computes once, by group (a bound can undercut the cost it
    # pruned, so the label says what was chosen, not which figure is lower)
    kept = {(node.group.find().id, node.expression.cte) for node in chosen.operators()
            if isinstance(node.expression, CteAnchor) and node.group is not None}
    costs = search.expression_costs()
    bounds = search.expression_bounds()
    for group in anchored:
        for number, name in sorted({(e.cte, e.name) for e in group.expressions if isinstance(e, CteAnchor)}):
            shared: list[tuple[float, str] | None] = []
            inlined: list[tuple[float, str] | None] = []
            reads = 0
            for index, expr in enumerate(group.expressions):
                mine = isinstance(expr, CteAnchor) and expr.cte == number
                if mine:
                    reads = max(reads, len(consumers_of(_plan_of(group_of(expr.body)), number)))
                (shared if mine else inlined).append(_cost_text(costs, bounds, group.id, index))
            once, copied = _best(shared), _best(inlined)
            if once is None or copied is None:
                continue
            chosen_text = "computed once" if (group.id, number) in kept else "inlined"
            context.memo.note(group, f"CTE {name} ({reads} reads): computed once {once[1]} s, inlined {copied[1]} s: "
                                     f"{chosen_text}")


def _cost_text(costs: dict[tuple[int, int], float | None], bounds: dict[tuple[int, int], float], gid: int,
               index: int) -> tuple[float, str] | None:
    cost = costs.get((gid, index))
    if cost is not None:
        return cost, f"{cost:.4g}"
    bound = bounds.get((gid, index))
    if bound is not None and bound != float("inf"):
        return bound, f"at least {bound:.4g}"
    return None


def _best(found: list[tuple[float, str] | None]) -> tuple[float, str] | None:
    known = [f for f in found if f is not None]
    return min(known, key=lambda f: f[0]) if known else None
