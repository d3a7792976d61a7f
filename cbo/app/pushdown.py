"""What a plan pushed to its JDBC sources, and what it kept local: ``Session.pushdown(sql)``.

One record per subplan the search could have run as one remote query and that the chosen plan
shows: where it was pushed, the remote query's root operator; where it was not, the local
operator that won against it. Each carries the query its source runs (or would have run), in
the source's dialect, and the two costs the search compared (seconds of the cost model), so
a notebook can put them side by side.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cbo.exec.remote import RemoteQueries
    from cbo.planner import PlannedQuery


@dataclass(frozen=True)
class PushdownRecord:
    """A subplan one source could run: pushed or not, its SQL there, and both costs.

    ``remote_cost``/``local_cost``: the whole subplan's cost run as the remote query / as the
    cheapest local plan. None where the search pruned that side without completing it (it could
    not win); ``*_bound`` is then the lower bound it was pruned at, where known."""

    source: str
    dialect: str
    pushed: bool
    operator: str          # the subplan's root operator (Join, Aggregate, Filter, ...)
    tables: tuple[str, ...]
    sql: str
    rows: float            # estimated output rows of the subplan
    remote_cost: float | None
    local_cost: float | None
    remote_bound: float | None = None
    local_bound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pushdown_records(planned: PlannedQuery, remote: RemoteQueries) -> list[PushdownRecord]:
    """The records of a planned query (empty without a search, or without JDBC sources)."""
    from cbo.ir.operators import Scan, walk

    if planned.optimized is None:
        return []
    records = []
    # the search's estimates: the SQL is the one execution sends (MariaDB's join order)
    estimator = getattr(planned.optimized.memo, "estimator", None)
    rows = estimator.rows if estimator is not None else None
    for choice in planned.optimized.pushdown:
        plan = choice.remote_plan
        tables = tuple(sorted({n.table for n in walk(plan) if isinstance(n, Scan)}))
        records.append(PushdownRecord(
            choice.source, choice.dialect, choice.pushed, type(plan).__name__, tables,
            remote.remote_query(plan, estimate_rows=rows).sql, choice.rows, choice.remote_cost, choice.local_cost,
            choice.remote_bound, choice.local_bound))
    return records

