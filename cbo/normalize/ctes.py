"""Common table expressions computed once: their consumers see the producer as normalized.

The binder binds a CTE named more than once a single time, as the producer of a ``CteAnchor``,
and each reference as a ``CteConsumer`` holding the producer's plan (for estimation and keys).
Normalization treats a consumer as a leaf (a filter above it stays above it: the producer's
rows are shared, so no one consumer's filter may go into them) and the producer as a plan of
its own, whose every column stays (some consumer may read it). Afterwards each consumer holds
its anchor's normalized producer, whose columns it renames one to one.
"""

from __future__ import annotations

from cbo.ir.operators import CteAnchor, CteConsumer, Plan


def with_producers(plan: Plan) -> Plan:
    """``plan`` with each consumer holding its anchor's producer as that anchor now has it."""
    producers: dict[int, Plan] = {}
    node = plan
    while isinstance(node, CteAnchor):
        producers[node.cte] = node.producer
        node = node.body
    if not producers:
        return plan
    return _attach(plan, producers)


def _attach(plan: Plan, producers: dict[int, Plan]) -> Plan:
    if isinstance(plan, CteConsumer):
        producer = producers.get(plan.cte, plan.producer)
        if producer is plan.producer:
            return plan
        if len(producer.output) != len(plan.columns):
            raise AssertionError(f"CTE {plan.name}: the producer has {len(producer.output)} columns, "
                                 f"its consumer {len(plan.columns)}")
        return CteConsumer(plan.cte, plan.name, plan.columns, producer)
    children = tuple(_attach(child, producers) for child in plan.children)
    # by identity: consumers are equal whatever producer they hold
    return plan.with_children(children) if any(a is not b for a, b in zip(children, plan.children)) else plan
