"""EagerPushdown: the filter that makes ``join_pushdown_strategy=EAGER`` push whatever it can.

Under ``EAGER`` (the behaviour of Presto's RFC-0004: push whenever the source can evaluate the
subplan), a group where a connector rule (``PushSubplanToPostgres`` and the others of
``cbo.memo.rules.jdbc_pushdown``) made a remote-query alternative runs that alternative only:
the local alternatives of its expressions are dropped, whatever they cost. Groups with no
remote alternative (tables of two sources, an operator or expression the source cannot
evaluate) keep their local plans, and their pushable inputs are forced remote in turn, so the
largest pushable subplans are pushed. The remote query is priced as under ``AUTOMATIC`` (the
plan's cost stays a predicted runtime).
It changes no equivalence: it only narrows which equivalent alternatives may run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cbo.ir.operators import Plan
from cbo.memo.rules.base import ImplementationFilter
from cbo.physical.algorithm import Algorithm

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext
    from cbo.memo.memo import Group, PhysicalExpr


class EagerPushdown(ImplementationFilter):
    """Under ``join_pushdown_strategy=EAGER``, a group with a remote-query alternative runs only it."""

    name = "EagerPushdown"

    def narrow(self, alternatives: list[PhysicalExpr], expr: Plan, group: Group,
               context: SearchContext) -> list[PhysicalExpr]:
        if context.settings.join_pushdown_strategy != "EAGER":
            return alternatives
        # a connector rule yields its group's remote alternative for every expression of the
        # group, so each expression's list holds it when the group has one
        remote = [a for a in alternatives if a.algorithm is Algorithm.REMOTE_QUERY]
        return remote or alternatives
