"""Sub-plans in a canonical description: what a cardinality plug-in is asked about.

The memo asks for one estimate per group (and for a few plans a rule weighs without adding
them). Each such sub-plan is described here the way a researcher writes it down, in the spirit
of the sub-plan files of STATS-CEB and Han et al.'s benchmark: the tables it reads, each under
an alias; its filters; its join conditions; its grouping; and SQL that runs it.

The description is **canonical**: it does not depend on join order, on column ids or on the
process that made it, so its ``key`` names the same sub-plan in every run.

* A tree of inner joins and filters is flattened into its *relations* and its conjuncts. A
  conjunct reading one relation is a filter, one reading several a join condition; both are
  sorted, so ``a ⋈ (b ⋈ c)`` and ``(a ⋈ b) ⋈ c`` describe alike. Equalities between columns
  are written as their equivalence classes (``customer.c_nationkey = nation.n_nationkey =
  supplier.s_nationkey``), since two orders may state a class by different pairs.
* A relation is a base table (``alias``, ``table``) or any other operator (an aggregation, a
  semi or outer join, ...) described in the same way, nested.
* A table's alias is its name without the source (``lineitem``); a table read more than once in
  the query is numbered in the order its columns were bound (``nation_1``, ``nation_2``, the
  first written first). Columns are ``alias.column``; a computed column keeps its name.
* A projection or sort does not change the rows: it is described (and keyed) as its input is;
  nor does a CTE's anchor (``CteAnchor``), described as its body.
* A read of a CTE computed once (``CteConsumer``) is a relation of its own, aliased by the CTE's
  name as a table is (``year_total_1``, ``year_total_2``: a CTE joined with itself reads two
  relations), of the producer's operator class, with the producer's description nested; its
  tables are the producer's. Its ``plan`` inlines the CTE (``cbo.ir.shape.without_ctes``), so
  that its SQL runs on its own. The same query planned with every CTE inlined
  (``cte_strategy=INLINE``) reads copies of the tables instead, described as the tables are.

The key is a SHA-256 digest of the description as sorted JSON, prefixed by the operator class:
``join-3f09c2a1b4d5e6f7``. Nothing in it comes from Python's per-process string hashing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from cbo.ir.expressions import Column, ColumnRef, Expr, columns_of, conjuncts, substitute
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
    equated_columns,
    walk,
)
from cbo.ir.shape import without_ctes


class OperatorClass(Enum):
    """What a sub-plan is, by its top operator (projections and sorts looked through). A
    plug-in says which classes it answers (``CardinalityEstimator.answers``)."""

    SCAN = "scan"                  # a base table, no filter
    FILTER = "filter"              # one relation under filters
    JOIN = "join"                  # inner joins of two or more relations (with their filters)
    OUTER_JOIN = "outer_join"      # LEFT, RIGHT or FULL join
    SEMI_JOIN = "semi_join"        # semi, anti and mark joins (IN, EXISTS, NOT IN, ...)
    AGGREGATE = "aggregate"        # GROUP BY, DISTINCT, a global aggregate
    LIMIT = "limit"
    SET_OPERATION = "set_operation"
    VALUES = "values"
    WINDOW = "window"              # window functions over a relation (its rows, each gaining columns)


ALL_CLASSES = frozenset(OperatorClass)


@dataclass(frozen=True)
class SubPlan:
    """One sub-plan as a plug-in sees it.

    ``tables``: every base table it reads, as (alias, table), sorted; ``filters`` and ``joins``:
    the conjuncts of its top region of inner joins and filters (empty for other operators);
    ``grouping``: an aggregation's grouping columns; ``description``: the whole canonical
    description, nested; ``plan``: the sub-plan in cbo's IR (``sql`` renders it for DuckDB over
    the catalog's table names, ``count_sql`` counts its rows)."""

    key: str
    operator: OperatorClass
    tables: tuple[tuple[str, str], ...]
    filters: tuple[str, ...]
    joins: tuple[str, ...]
    grouping: tuple[str, ...]
    description: dict[str, Any] = field(compare=False, hash=False, repr=False)
    plan: Plan = field(compare=False, hash=False, repr=False)

    @property
    def relations(self) -> int:
        """Base tables read (a self-join counts each read)."""
        return len(self.tables)

    @cached_property
    def sql(self) -> str:
        """The sub-plan as DuckDB SQL over the catalog's table names (output columns c0, c1, ...)."""
        from cbo.sqlgen import to_sql

        return to_sql(self.plan, tuple(f"c{i}" for i in range(len(self.plan.output))), "duckdb")

    @property
    def count_sql(self) -> str:
        """SQL counting the sub-plan's rows (DuckDB, over the catalog's table names)."""
        return f"SELECT count(*) FROM ({self.sql}) AS subplan"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "operator": self.operator.value, "tables": [list(t) for t in self.tables],
                "filters": list(self.filters), "joins": list(self.joins), "grouping": list(self.grouping),
                "description": self.description, "count_sql": self.count_sql}


class Describer:
    """Describes the sub-plans of one query. Aliases are given by the query's scans (``seed``
    with the plan the search starts from), so every sub-plan of the query names a table alike;
    a scan a rule adds later (a copied table) gets the next number of its table. Descriptions
    are kept by plan, for the describer's lifetime (one search's)."""

    def __init__(self, query: Plan | None = None):
        self._aliases: dict[tuple[str, int], str] = {}   # (table, first column id) -> alias
        self._counts: dict[str, int] = {}
        self._described: dict[Plan, SubPlan] = {}
        if query is not None:
            self.seed(query)

    def seed(self, query: Plan) -> None:
        scans = sorted({(s.table, _first_id(s)) for s in walk(query) if isinstance(s, Scan)} |
                       {(_cte_table(c), _first_id(c)) for c in walk(query) if isinstance(c, CteConsumer)},
                       key=lambda item: (item[0], item[1]))
        by_table: dict[str, list[int]] = {}
        for table, first in scans:
            by_table.setdefault(table, []).append(first)
        for table, firsts in by_table.items():
            for number, first in enumerate(firsts, start=1):
                self._aliases[(table, first)] = _short(table) if len(firsts) == 1 else f"{_short(table)}_{number}"
            self._counts[table] = len(firsts)

    def alias(self, scan: Scan | CteConsumer) -> str:
        table = scan.table if isinstance(scan, Scan) else _cte_table(scan)
        key = (table, _first_id(scan))
        found = self._aliases.get(key)
        if found is None:
            number = self._counts.get(table, 0) + 1
            self._counts[table] = number
            found = self._aliases[key] = _short(table) if number == 1 else f"{_short(table)}_{number}"
        return found

    def describe(self, plan: Plan) -> SubPlan:
        """The canonical description of ``plan`` (a plain plan: no group references)."""
        found = self._described.get(plan)
        if found is None:
            names: dict[Column, str] = {}
            tables: set[tuple[str, str]] = set()
            description = self._node(plan, names, tables)
            operator = OperatorClass(description["operator"])
            text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=str)
            key = f"{operator.value}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
            found = SubPlan(key, operator, tuple(sorted(tables)), tuple(description.get("filters", ())),
                            tuple(description.get("joins", ())), tuple(description.get("grouping", ())),
                            description, without_ctes(plan))
            self._described[plan] = found
        return found

    # -- the description ---------------------------------------------------------------------------

    def _node(self, plan: Plan, names: dict[Column, str], tables: set[tuple[str, str]]) -> dict[str, Any]:
        projections: list[Project] = []
        while isinstance(plan, (Project, Sort, CteAnchor)):
            if isinstance(plan, Project):
                projections.append(plan)
            plan = plan.body if isinstance(plan, CteAnchor) else plan.input
        found = self._operator(plan, names, tables)
        for projection in reversed(projections):   # bottom up: a projection reads the one below
            for column, expr in projection.assignments:
                if column not in names:
                    names[column] = self._text(expr, names)
        return found

    def _operator(self, plan: Plan, names: dict[Column, str], tables: set[tuple[str, str]]) -> dict[str, Any]:
        if isinstance(plan, Scan):
            alias = self.alias(plan)
            tables.add((alias, plan.table))
            for column, name in zip(plan.columns, plan.column_names):
                names[column] = f"{alias}.{name}"
            return {"operator": OperatorClass.SCAN.value, "relations": [alias], "tables": {alias: plan.table}}
        if isinstance(plan, Filter) or (isinstance(plan, Join) and plan.kind == "inner"):
            return self._region(plan, names, tables)
        if isinstance(plan, CteConsumer):
            alias = self.alias(plan)
            producer = self.describe(plan.producer)
            tables.update(producer.tables)
            for column in plan.columns:
                names[column] = f"{alias}.{column.name}"
            return {"operator": producer.operator.value, "cte": alias, "producer": producer.description}
        if isinstance(plan, Join):
            left = self._node(plan.left, names, tables)
            right = self._node(plan.right, names, tables)
            _name_outputs(plan, names)
            kind = OperatorClass.OUTER_JOIN if plan.kind in ("left", "right", "full") else OperatorClass.SEMI_JOIN
            return {"operator": kind.value, "kind": plan.kind, "left": left, "right": right,
                    "condition": sorted(self._text(c, names) for c in conjuncts(plan.condition))}
        if isinstance(plan, Aggregate):
            below = self._node(plan.input, names, tables)
            grouping = sorted(self._column(c, names) for c in plan.group_by)
            aggregates = sorted(self._text(call, names) for _, call in plan.aggregates)
            for column, call in plan.aggregates:
                names[column] = self._text(call, names)
            return {"operator": OperatorClass.AGGREGATE.value, "grouping": grouping, "aggregates": aggregates,
                    "input": below}
        if isinstance(plan, GroupingSets):
            below = self._node(plan.input, names, tables)
            keys = [self._column(c, names) for c in plan.keys]
            sets = sorted([keys[i] for i in group] for group in plan.sets)
            aggregates = sorted(self._text(call, names) for _, call in plan.aggregates)
            for key, output in zip(plan.keys, plan.outputs):
                names[output] = self._column(key, names)
            for column, call in plan.aggregates:
                names[column] = self._text(call, names)
            for column, positions in plan.groupings:
                names[column] = "grouping(" + ", ".join(keys[i] for i in positions) + ")"
            return {"operator": OperatorClass.AGGREGATE.value, "grouping_sets": sets, "aggregates": aggregates,
                    "input": below}
        if isinstance(plan, Window):
            below = self._node(plan.input, names, tables)
            partition = sorted(self._column(c, names) for c in plan.partition_by)
            order = [f"{self._column(k.column, names)} {'ASC' if k.ascending else 'DESC'} "
                     f"NULLS {'FIRST' if k.nulls_first else 'LAST'}" for k in plan.order_by]
            functions = sorted(self._text(function, names) for _, function in plan.functions)
            for column, function in plan.functions:
                names[column] = self._text(function, names)
            return {"operator": OperatorClass.WINDOW.value, "partition": partition, "order": order,
                    "functions": functions, "input": below}
        if isinstance(plan, Limit):
            return {"operator": OperatorClass.LIMIT.value, "count": plan.count, "offset": plan.offset,
                    "input": self._node(plan.input, names, tables)}
        if isinstance(plan, SetOp):
            inputs = [self._node(child, names, tables) for child in plan.inputs]
            _name_outputs(plan, names)
            return {"operator": OperatorClass.SET_OPERATION.value, "kind": plan.kind, "distinct": plan.distinct,
                    "inputs": inputs}
        if isinstance(plan, Values):
            _name_outputs(plan, names)
            return {"operator": OperatorClass.VALUES.value, "rows": [[str(e) for e in row] for row in plan.rows]}
        raise TypeError(f"cannot describe {type(plan).__name__}")

    def _region(self, plan: Plan, names: dict[Column, str], tables: set[tuple[str, str]]) -> dict[str, Any]:
        leaves: list[Plan] = []
        predicates: list[Expr] = []
        _flatten(plan, leaves, predicates)
        relations: list[str] = []
        nested: list[dict[str, Any]] = []
        owner: dict[Column, int] = {}
        for index, leaf in enumerate(leaves):
            described = self._node(leaf, names, tables)
            for column in leaf.output:
                owner[column] = index
            if described["operator"] == OperatorClass.SCAN.value and "cte" not in described:
                relations.extend(described["relations"])
            else:
                nested.append(described)
        filters: list[str] = []
        joins: list[str] = []
        # Equalities between columns are written as their classes ("a = b = c"): two join orders
        # of one set may state a class by different pairs (a = b, b = c or a = b, a = c).
        parent: dict[str, str] = {}

        def find(name: str) -> str:
            while parent.get(name, name) != name:
                name = parent[name]
            return name

        for predicate in predicates:
            pair = equated_columns(predicate)
            touched = {owner[c] for c in columns_of(predicate) if c in owner}
            if pair is not None and len(touched) > 1:
                a, b = find(self._column(pair[0], names)), find(self._column(pair[1], names))
                if a != b:
                    parent[max(a, b)] = min(a, b)
                continue
            (joins if len(touched) > 1 else filters).append(self._text(predicate, names))
        classes: dict[str, list[str]] = {}
        for name in list(parent):
            classes.setdefault(find(name), [])
        for name in set(parent) | set(parent.values()):
            classes.setdefault(find(name), []).append(name)
        for members in classes.values():
            joins.append(" = ".join(sorted(set(members))))
        operator = OperatorClass.JOIN if len(leaves) > 1 else \
            OperatorClass.FILTER if filters else OperatorClass(_only(leaves, nested, relations))
        scans = {alias: table for alias, table in tables if alias in relations}
        found: dict[str, Any] = {"operator": operator.value, "relations": sorted(relations), "tables": scans,
                                 "filters": sorted(filters), "joins": sorted(joins)}
        if nested:
            found["inputs"] = sorted(nested, key=lambda d: json.dumps(d, sort_keys=True, default=str))
        return found

    def _column(self, column: Column, names: dict[Column, str]) -> str:
        return names.get(column, column.name)

    def _text(self, expr: Expr, names: dict[Column, str]) -> str:
        """An expression with each column written by its canonical name."""
        mapping: dict[Column, Expr] = {c: ColumnRef(Column(-1, self._column(c, names), c.type, c.nullable))
                                       for c in columns_of(expr)}
        return str(substitute(expr, mapping) if mapping else expr).replace("#-1", "")


def _only(leaves: list[Plan], nested: list[dict[str, Any]], relations: list[str]) -> str:
    """The class of a region of one relation without filters (a filter that was only TRUE)."""
    return nested[0]["operator"] if nested else OperatorClass.SCAN.value


def _flatten(node: Plan, leaves: list[Plan], predicates: list[Expr]) -> None:
    if isinstance(node, Join) and node.kind == "inner":
        _flatten(node.left, leaves, predicates)
        _flatten(node.right, leaves, predicates)
        predicates.extend(c for c in conjuncts(node.condition) if not _is_true(c))
    elif isinstance(node, Filter):
        _flatten(node.input, leaves, predicates)
        predicates.extend(c for c in conjuncts(node.predicate) if not _is_true(c))
    else:
        leaves.append(node)


def _is_true(expr: Expr) -> bool:
    from cbo.ir.expressions import Constant

    return isinstance(expr, Constant) and expr.value is True


def _name_outputs(plan: Plan, names: dict[Column, str]) -> None:
    for column in plan.output:
        names.setdefault(column, column.name)


def _first_id(scan: Scan | CteConsumer) -> int:
    return min((c.id for c in scan.columns), default=0)


def _cte_table(consumer: CteConsumer) -> str:
    # a CTE's reads are numbered apart from any table's (a CTE may be named as a table is)
    return f"cte:{consumer.name}"


def _short(table: str) -> str:
    return table.split(":", 1)[-1].split(".", 1)[-1]


def keys_of(subplans: Iterable[SubPlan]) -> list[str]:
    return [s.key for s in subplans]


__all__ = ["ALL_CLASSES", "Describer", "OperatorClass", "SubPlan"]
