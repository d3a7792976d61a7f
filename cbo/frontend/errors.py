"""Errors of the frontend, each naming where in the SQL text it happened."""

from __future__ import annotations

from sqlglot import exp

from cbo.errors import SqlError

__all__ = ["SqlError", "error_at", "position"]


def position(node: exp.Expr | None) -> str:
    """'line L, column C: ' for a node that carries a position (identifiers do), else ''."""
    if node is None:
        return ""
    # sqlglot positions identifiers (by where they end); the node's first identifier stands for it.
    for candidate in (node, *node.find_all(exp.Identifier)):
        meta = candidate.meta
        if "line" in meta:
            return f"line {meta['line']}, column {meta['col'] - (meta['end'] - meta['start'])}: "
    return ""


def error_at(node: exp.Expr | None, message: str) -> SqlError:
    return SqlError(f"{position(node)}{message}")
