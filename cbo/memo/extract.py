"""The chosen plan out of the memo: the tree of physical operators (``cbo.physical.plan``), with
the enforcers the search put below each operator as nodes of their own, and each node's
estimate, delivered properties, cost quantities and cost."""

from __future__ import annotations

from cbo.memo.cascades import CascadesSearch
from cbo.memo.memo import Group, PhysicalExpr, Winner, with_inputs
from cbo.physical.algorithm import Algorithm
from cbo.physical.plan import PhysicalPlan
from cbo.physical.properties import ASC, Delivered, Required


def extract(search: CascadesSearch, winner: Winner, group: Group) -> PhysicalPlan:
    """The physical plan of ``winner``, the best plan of ``group`` under some requirement."""
    if winner.physical is None:
        assert winner.base is not None and winner.enforcer is not None
        return enforcer_node(search, group, winner.enforcer, extract(search, winner.base, group), winner.delivered)
    physical = winner.physical
    inputs = tuple(extract(search, child.winner(need), child)
                   for child, need in zip(physical.inputs, physical.required_inputs))
    return operator_node(search, group, physical, inputs, winner.delivered)


def enforcer_node(search: CascadesSearch, group: Group, need: Required, below: PhysicalPlan,
                  delivered: Delivered) -> PhysicalPlan:
    """The enforcer making ``below`` (a plan of ``group``) deliver ``need``: a sort when an
    ordering is required, else an exchange (``CascadesSearch.enforce`` prices the same)."""
    model = search.cost_model
    rows, width = search.size(group)
    if need.ordering:
        algorithm, quantities = Algorithm.LOCAL_SORT, model.sort((rows, width))
        names = _names(group, need.ordering)
        if need.directions:
            names = [n if d is ASC else f"{n} {d.value}" for n, d in zip(names, need.directions)]
        detail = "sort(" + ", ".join(names) + ")"
    else:
        algorithm, quantities = _exchange(need), model.distribute(need, (rows, width))
        detail = _exchange_name(need, group)
    cost = model.enforcer_price(algorithm, quantities, (rows, width))
    return PhysicalPlan(algorithm, below.logical, (below,), rows, width, cost, below.total + cost,
                        (), delivered, quantities, group, None, detail)


def operator_node(search: CascadesSearch, group: Group, physical: PhysicalExpr, inputs: tuple[PhysicalPlan, ...],
                  delivered: Delivered) -> PhysicalPlan:
    """The physical alternative ``physical`` of ``group`` over the plans ``inputs`` of its input groups."""
    model = search.cost_model
    rows, width = search.size(group)
    sizes = [search.size(g) for g in physical.inputs]
    quantities = model.quantities(physical.node, physical.algorithm, (rows, width), sizes)
    logical = with_inputs(physical.node, tuple(i.logical for i in inputs)) if inputs else physical.node
    cost = model.operator_price(physical.node, physical.algorithm, quantities, (rows, width), sizes)
    return PhysicalPlan(physical.algorithm, logical, inputs, rows, width, cost,
                        cost + sum(i.total for i in inputs), physical.required_inputs, delivered,
                        quantities, group, physical.rule, "", physical.logical)


def _exchange(need: Required) -> Algorithm:
    if need.distribution == "broadcast":
        return Algorithm.BROADCAST
    if need.distribution == "single":
        return Algorithm.GATHER
    return Algorithm.SHUFFLE


def _exchange_name(need: Required, group: Group) -> str:
    if need.distribution == "broadcast":
        return "broadcast"
    if need.distribution == "single":
        return "gather"
    return "shuffle(" + ", ".join(_names(group, need.partitioning)) + ")"


def _names(group: Group, ids: tuple[int, ...]) -> list[str]:
    """The group's columns with these ids as EXPLAIN names them (``c<id>`` if it has none):
    only the few an enforcer names, not every column of the group."""
    names = []
    for column_id in ids:
        name = next((str(c) for c in group.output if c.id == column_id), None)
        names.append(name if name is not None else f"c{column_id}")
    return names
