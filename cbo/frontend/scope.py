"""Name resolution: which column a name in the SQL text refers to.

A scope lists the relations of one query's FROM clause (each with an alias and named columns)
and points to the scope of the enclosing query: a name not found locally is looked up outward,
and such a hit is an outer reference (the subquery is correlated). Names compare
case-insensitively, as identifiers do in Trino, Spark and DuckDB.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from sqlglot import exp

from cbo.frontend.errors import error_at
from cbo.ir.expressions import Column
from cbo.ir.operators import Plan


@dataclass
class Relation:
    alias: str | None
    columns: list[tuple[str, Column]]
    source: str = ""  # for messages: the table or "subquery"


@dataclass
class CteDefinition:
    name: str
    query: exp.Expr
    column_aliases: list[str]
    scope: Scope | None  # the scope that sees the CTEs defined before this one
    references: int = 0     # how many table references in the query name it (outside itself)
    # Bound once when referenced more than once (``Binder.share_ctes``): its number, plan and
    # column names; False when it cannot be shared (it reads an enclosing query's columns).
    shared: tuple[int, Plan, list[str]] | bool | None = None


@dataclass
class Scope:
    relations: list[Relation] = field(default_factory=list)
    parent: Scope | None = None
    ctes: dict[str, CteDefinition] = field(default_factory=dict)
    using: dict[str, Column] = field(default_factory=dict)  # USING columns: one column per name
    using_pairs: dict[str, tuple[Column, Column]] = field(default_factory=dict)  # name -> (left, right)
    windows: dict[str, exp.Window] = field(default_factory=dict)  # the WINDOW clause's, by name

    def beside(self) -> Scope:
        """The scope a derived table of this query's FROM clause is bound in: it sees this
        query's CTEs and the enclosing queries' columns, but not the other FROM items (a derived
        table is not LATERAL)."""
        return Scope(parent=self.parent, ctes=self.ctes)

    def cte(self, name: str) -> CteDefinition | None:
        scope: Scope | None = self
        while scope is not None:
            if name.lower() in scope.ctes:
                return scope.ctes[name.lower()]
            scope = scope.parent
        return None

    def all_columns(self) -> list[Column]:
        return [c for r in self.relations for _, c in r.columns]

    def resolve(self, node: exp.Column) -> tuple[Column, bool]:
        """The column a reference names, and whether it comes from an enclosing query."""
        name = node.name.lower()
        qualifier = node.table.lower() if node.table else None
        scope: Scope | None = self
        outer = False
        while scope is not None:
            found = scope._local(name, qualifier, node)
            if found is not None:
                return found, outer
            scope = scope.parent
            outer = True
        raise error_at(node, self._unknown_message(name, qualifier))

    def _local(self, name: str, qualifier: str | None, node: exp.Column) -> Column | None:
        if qualifier is None and name in self.using:
            return self.using[name]
        hits = []
        for relation in self.relations:
            if qualifier is not None and (relation.alias or "").lower() != qualifier:
                continue
            hits += [(relation, c) for n, c in relation.columns if n.lower() == name]
        if not hits:
            return None
        if len(hits) > 1:
            sources = ", ".join(f"{r.alias or r.source}.{name}" for r, _ in hits)
            raise error_at(node, f"column reference '{name}' is ambiguous: it matches {sources}")
        return hits[0][1]

    def _unknown_message(self, name: str, qualifier: str | None) -> str:
        candidates: list[str] = []
        aliases: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            for relation in scope.relations:
                aliases.append((relation.alias or "").lower())
                if qualifier is None or (relation.alias or "").lower() == qualifier:
                    candidates += [n for n, _ in relation.columns]
            scope = scope.parent
        if qualifier is not None and qualifier not in aliases:
            close = difflib.get_close_matches(qualifier, [a for a in aliases if a], n=3)
            hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
            return f"unknown table or alias '{qualifier}' in '{qualifier}.{name}'{hint}"
        close = difflib.get_close_matches(name, candidates, n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        full = f"{qualifier}.{name}" if qualifier else name
        return f"unknown column '{full}'{hint}"
