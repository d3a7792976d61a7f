"""Oracle cardinalities: every memo group's row count counted exactly, with DuckDB.

``OracleEstimator`` wraps the statistics-based estimator: it estimates as usual (so column
distributions, widths and notes stay) and then replaces the row count by the true one, found by
running ``SELECT count(*)`` over the group's first expression rendered as SQL. Planning with it
shows the plan the cost model would pick with perfect estimates: comparing that plan's runtime
with the plan from cbo's own estimates measures what estimation errors cost (setting
``cardinalities=oracle``). Counts are cached by their SQL text, so a subplan shared by several
queries or groups is counted once per session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from cbo.errors import CboError
from cbo.estimate.relation import RelEstimate
from cbo.ir.operators import Plan

if TYPE_CHECKING:
    from cbo.estimate import Estimator
    from cbo.estimate.estimator import EstimationContext


def concrete(node: Plan) -> Plan:
    """A memo expression as a plain plan: each group input replaced by its first expression.
    (A group input is recognized by its ``group``, without importing the memo: estimation sits
    below it.)"""
    group = getattr(node, "group", None)
    if group is not None:
        return concrete(group.first)
    children = tuple(concrete(child) for child in node.children)
    return node.with_children(children) if children else node


class OracleEstimator:
    def __init__(self, estimator: Estimator | EstimationContext, count: Callable[[str], int],
                 counts: dict[str, int] | None = None):
        self.estimator = estimator
        self.count = count                      # runs SQL text, returns the single count
        self.counts: dict[str, int] = {} if counts is None else counts   # by SQL text, for the session

    def __getattr__(self, name: str):
        return getattr(self.estimator, name)

    @property
    def queries_run(self) -> int:
        """Counting queries run so far (each subplan's SQL text once)."""
        return len(self.counts)

    def context(self) -> OracleEstimator:
        """The oracle over a context of the estimator (``Estimator.context``), sharing the counts."""
        return OracleEstimator(self.estimator.context(), self.count, self.counts)

    def true_rows(self, plan: Plan) -> int:
        from cbo.sqlgen import to_sql

        names = tuple(f"c{i}" for i in range(len(plan.output)))
        inner = to_sql(plan, names, "duckdb")
        text = f"SELECT count(*) FROM ({inner}) AS oracle"
        found = self.counts.get(text)
        if found is None:
            try:
                found = int(self.count(text))
            except CboError as exc:
                raise CboError(f"oracle cardinalities: counting a subplan failed: {exc}") from None
            self.counts[text] = found
        return found

    def estimate_node(self, node: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        estimated = self.estimator.estimate_node(node, inputs)
        return with_rows(estimated, float(self.true_rows(concrete(node))))

    def estimate(self, plan: Plan) -> RelEstimate:
        return with_rows(self.estimator.estimate(plan), float(self.true_rows(plan)))


def with_rows(estimate: RelEstimate, rows: float) -> RelEstimate:
    if estimate.rows == rows:
        return estimate
    columns = {c: e.with_rows(rows) for c, e in estimate.columns.items()}
    groups = {g: min(d, rows) for g, d in estimate.groups.items()}
    return replace(estimate, rows=rows, columns=columns, groups=groups)
