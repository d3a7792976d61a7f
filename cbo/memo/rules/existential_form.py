"""ForcedExistentialForm: the filter that makes ``existential_form`` force one form of a semi join.

With ``existential_form = DISTINCT_ABOVE`` (or ``DISTINCT_BELOW``), a group holding a semi join
that the forced rewrite (the inner join under a DISTINCT, ``SemiJoinToInnerDistinctAbove``, or
over a DISTINCT of the filtering side, ``SemiJoinToInnerDistinctBelow``) rewrote runs the
rewritten form only: the semi join itself and the other rewrite's expressions get no physical
alternative there. Where the forced rewrite
does not apply (no equality to key the DISTINCT on), the group keeps its other forms. It
changes no equivalence: it only narrows which equivalent expressions may run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cbo.ir.operators import Join, Plan
from cbo.memo.rules.base import ImplementationFilter

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext
    from cbo.memo.memo import Deferred, Group

# existential_form -> the rule whose alternatives it forces (cbo.settings).
FORCED_RULE = {"DISTINCT_ABOVE": "SemiJoinToInnerDistinctAbove", "DISTINCT_BELOW": "SemiJoinToInnerDistinctBelow"}


class ForcedExistentialForm(ImplementationFilter):
    """Under a forced ``existential_form``, keep a semi join's other forms out of its group's plans."""

    name = "ForcedExistentialForm"

    def excludes(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        forced = FORCED_RULE.get(context.settings.existential_form)
        if forced is None:
            return False
        added = context.memo.added_by
        rival = (isinstance(expr, Join) and expr.kind == "semi") or added.get(expr) in FORCED_RULE.values()
        return rival and added.get(expr) != forced and any(added.get(e) == forced for e in group.expressions)

    def excludes_deferred(self, record: Deferred, group: Group, context: SearchContext) -> bool | None:
        # (unforced, the common case, excludes nothing; forced, the made join is asked)
        return False if context.settings.existential_form not in FORCED_RULE else None
