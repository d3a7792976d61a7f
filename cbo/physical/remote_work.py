"""The remote work of a pushed subplan: what its source does for it, recorded on its root.

The connector rule (``cbo.memo.rules.jdbc_pushdown``) estimates it when it proposes the remote
query; the cost model prices it (``cbo.cost.model``) and the SQL rendering reads which repeated
joins to compute once (``cbo.exec.remote``). The record travels on the subplan's root node, the
one object all three see, so one reader here serves them all.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from cbo.ir.operators import Plan


@dataclass(frozen=True)
class RemoteWork:
    """What a pushed subplan costs its source, as the memo estimates it: rows its scans,
    filters, joins and limits read (a scan its table's rows, a join both inputs and its
    output), and rows fed to its aggregations (hashed and accumulated: dearer per row)."""

    source: str
    dialect: str
    rows: float
    aggregated: float = 0.0
    # the repeated joins the source computes once (shapes; repeated aggregations always are)
    shared_joins: frozenset[Hashable] = frozenset()


def record_remote_work(root: Plan, work: RemoteWork) -> None:
    """Record ``work`` on a pushed subplan's ``root`` (a node of its own: frozen, so set directly)."""
    object.__setattr__(root, "_remote_work", work)


def remote_work(node: Plan) -> RemoteWork | None:
    """The remote work recorded on a pushed subplan's root (None for other nodes)."""
    found = node.__dict__.get("_remote_work") if hasattr(node, "__dict__") else None
    return found if isinstance(found, RemoteWork) else None
