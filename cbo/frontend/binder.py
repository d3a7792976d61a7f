"""Binding queries: a sqlglot AST and the catalog become a typed logical plan.

A SELECT is bound in the order SQL evaluates it: FROM (tables, derived tables, CTEs, VALUES,
joins) -> WHERE -> GROUP BY and aggregates (``cbo.frontend.aggregation``) -> HAVING -> SELECT
list -> DISTINCT -> ORDER BY -> LIMIT/OFFSET.
Subqueries are bound in a scope whose parent is the enclosing query's, so outer references
resolve there; decorrelation (``cbo.normalize.decorrelate``, an IR rewrite) then turns them into joins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from sqlglot import exp

from cbo.errors import CatalogError
from cbo.frontend.aggregation import bind_aggregation, has_aggregate
from cbo.frontend.bind_expressions import ExpressionBinder
from cbo.frontend.errors import SqlError, error_at
from cbo.frontend.languages import QUERY_DIALECTS
from cbo.frontend.parse import DEFAULT_DIALECT
from cbo.frontend.scope import CteDefinition, Relation, Scope
from cbo.frontend.windows import WindowBinder, named_windows, plan_windows, replace_windows
from cbo.ir import types as T
from cbo.ir.expressions import (
    TRUE,
    Column,
    ColumnFactory,
    ColumnRef,
    Constant,
    Expr,
    SpecialForm,
    columns_of,
    compare,
    conjunction,
)
from cbo.ir.kinds import JoinKind, SetOpKind
from cbo.ir.operators import (
    Aggregate,
    AssumedKey,
    Filter,
    ForeignKeyRef,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    SortKey,
    Values,
)
from cbo.sources.catalog import Catalog, TableDef
from cbo.sources.schema import SchemaProvider

_OUTER_JOINS: dict[str, JoinKind] = {"LEFT": "left", "RIGHT": "right", "FULL": "full"}
_SET_OPERATIONS: dict[str, SetOpKind] = {"union": "union", "intersect": "intersect", "except": "except"}

@dataclass(frozen=True)
class BoundQuery:
    """A bound statement: the plan and the names of its output columns, in order."""

    plan: Plan
    names: tuple[str, ...]


class Binder:
    def __init__(self, catalog: Catalog, schemas: SchemaProvider | None = None,
                 columns: ColumnFactory | None = None,
                 assumed_keys: Mapping[str, Sequence[tuple[tuple[str, ...], str]]] | None = None,
                 dialect: str = DEFAULT_DIALECT):
        """``assumed_keys``: by qualified table name, unique keys the catalog does not declare
        (column names, and what vouches for them: ``"hint"`` or ``"statistics"``). ``dialect``:
        the SQL dialect the statement was written in, whose rules the binder applies where
        dialects differ (``date + integer`` is days in DuckDB, PostgreSQL and Spark, an error in
        Trino; division; FETCH; duplicate aliases)."""
        self.catalog = catalog
        self.dialect = dialect
        self.language = QUERY_DIALECTS[dialect]
        self.schemas = schemas or SchemaProvider(catalog)
        self.columns = columns or ColumnFactory()
        self.assumed_keys = assumed_keys or {}

    # -- entry points ----------------------------------------------------------------------------

    def bind(self, statement: exp.Expr) -> BoundQuery:
        plan, names = self.bind_query(statement, None)
        return BoundQuery(plan, tuple(names))

    def bind_subquery(self, query: exp.Expr, outer: Scope) -> tuple[Plan, list[str]]:
        return self.bind_query(query, outer)

    def bind_query(self, node: exp.Expr, outer: Scope | None) -> tuple[Plan, list[str]]:
        scope = Scope(parent=outer)
        self._register_ctes(node, scope)
        if isinstance(node, exp.Subquery):
            plan, names = self.bind_query(node.this, scope)
            return self._order_limit_of_set(node, plan, names, scope)
        if isinstance(node, exp.Select):
            return self._bind_select(node, scope)
        if isinstance(node, exp.SetOperation):
            return self._bind_set_operation(node, scope)
        if isinstance(node, exp.Values):
            return self._bind_values(node, scope)
        raise error_at(node, f"unsupported query form {node.key.upper()}")

    def _register_ctes(self, node: exp.Expr, scope: Scope) -> None:
        with_ = node.args.get("with_") or node.args.get("with")
        if not with_:
            return
        if with_.args.get("recursive"):
            raise error_at(with_, "recursive CTEs (WITH RECURSIVE) are not supported")
        for cte in with_.expressions:
            name = cte.alias_or_name.lower()
            if name in scope.ctes:
                raise error_at(cte, f"CTE '{cte.alias_or_name}' is defined twice in one WITH clause")
            aliases = [c.name for c in (cte.args.get("alias").columns if cte.args.get("alias") else [])]
            # A CTE sees the ones defined before it: bind it in a scope that holds only those.
            visible = Scope(parent=scope.parent, ctes=dict(scope.ctes))
            scope.ctes[name] = CteDefinition(name, cte.this, aliases, visible)

    # -- SELECT ----------------------------------------------------------------------------------

    def _bind_select(self, select: exp.Select, scope: Scope) -> tuple[Plan, list[str]]:
        for key in ("connect", "prewhere", "settings", "cluster", "distribute", "sort"):
            if select.args.get(key):
                raise error_at(select, f"{key.upper()} clauses are not supported")
        scope.windows = named_windows(select)
        plan = self._bind_from(select, scope)
        where = select.args.get("where")
        if where is not None:
            binder = ExpressionBinder(self, scope, "WHERE")
            plan = Filter(plan, binder._boolean(where.this))

        items = self._select_items(select, scope)
        group = select.args.get("group")
        having = select.args.get("having")
        order = select.args.get("order")
        qualify = select.args.get("qualify")
        aggregating = group is not None or any(has_aggregate(e) for _, e, _ in items) or \
            (having is not None) or (order is not None and any(has_aggregate(o.this) for o in order.expressions)) \
            or (qualify is not None and has_aggregate(qualify.this))
        having_binder = ExpressionBinder(self, scope, "HAVING", allow_aggregates=True,
                                         aliases=_select_aliases(select, items))
        having_expr = having_binder._boolean(having.this) if having is not None else None
        qualify_expr = self._qualify(qualify.this, scope, items) if qualify is not None else None

        if aggregating:
            plan, post = bind_aggregation(self, select, scope, plan, items,
                                          [e for e in (having_expr, qualify_expr) if e is not None])
        else:
            post = None

        def finish(expr: Expr, node: exp.Expr, fallbacks: dict[Column, Expr] | None = None) -> Expr:
            return post.rewrite(expr, node, fallbacks) if post is not None else expr

        if having_expr is not None:
            assert having is not None
            plan = Filter(plan, finish(having_expr, having, having_binder.alias_fallbacks))

        # The SELECT list's values and ORDER BY's, windows still in them (an ORDER BY key equal
        # to a select-list value reads its column).
        values = [finish(expr, node) for _, expr, node in items]
        names = [name for name, _, _ in items]
        hidden_values: list[Expr] = []
        targets: list[int] = []   # per ORDER BY key: its value's index in values + hidden_values
        if order is not None:
            for ordered in order.expressions:
                targets.append(self._order_target(ordered.this, scope, values, names, finish, hidden_values,
                                                  distinct=bool(select.args.get("distinct"))))
        qualify_value = finish(qualify_expr, qualify) if qualify_expr is not None and qualify is not None else None

        # Windows run after grouping and HAVING, before QUALIFY and the SELECT list.
        read = values + hidden_values + ([qualify_value] if qualify_value else [])
        plan, windows = plan_windows(self.columns, plan, read)
        if qualify_value is not None:
            plan = Filter(plan, replace_windows(qualify_value, windows))

        outputs: list[tuple[Column, Expr]] = []
        produced = set(plan.output)
        for name, value in zip(names, values):
            value = replace_windows(value, windows)
            # A column of the input passes through under its own id; anything else (an outer
            # query's column included: a correlated subquery's select list) is a new column.
            column = value.column if isinstance(value, ColumnRef) and value.column in produced \
                and value.column not in [c for c, _ in outputs] else self.columns.new(name, value.type)
            outputs.append((column, value))
        hidden = [(self.columns.new(f"_order{i}", v.type), replace_windows(v, windows))
                  for i, v in enumerate(hidden_values)]
        columns = [c for c, _ in outputs + hidden]
        sort_keys = [SortKey(columns[target], ascending=not ordered.args.get("desc"),
                             nulls_first=bool(ordered.args.get("nulls_first")))
                     for target, ordered in zip(targets, order.expressions if order is not None else [])]

        plan = Project(plan, tuple(outputs + hidden))
        if select.args.get("distinct"):
            if select.args["distinct"].args.get("on"):
                raise error_at(select, "DISTINCT ON is not supported")
            plan = Aggregate(plan, tuple(c for c, _ in outputs))
        if sort_keys:
            plan = Sort(plan, tuple(sort_keys))
        plan = self._limit(select, plan)
        if hidden:
            plan = Project(plan, tuple((c, ColumnRef(c)) for c, _ in outputs))
        return plan, names

    def _qualify(self, node: exp.Expr, scope: Scope, items: list[tuple[str, Expr, exp.Expr]]) -> Expr:
        """QUALIFY's condition: a filter after the windows, which may name select-list aliases
        (as DuckDB allows) where no column of the query has that name."""
        aliases = {name.lower(): item for name, _, item in items if isinstance(item, exp.Alias)}

        def by_alias(found: exp.Expr) -> exp.Expr:
            if isinstance(found, exp.Column) and not found.table and found.name.lower() in aliases:
                try:
                    scope.resolve(found)
                except SqlError:
                    return aliases[found.name.lower()].this.copy()
            return found

        rewritten = node.copy().transform(by_alias) if aliases else node
        return WindowBinder(self, scope, "QUALIFY", allow_aggregates=True)._boolean(rewritten)

    def _select_items(self, select: exp.Select, scope: Scope) -> list[tuple[str, Expr, exp.Expr]]:
        items: list[tuple[str, Expr, exp.Expr]] = []
        for position_, node in enumerate(select.expressions, start=1):
            if isinstance(node, exp.Star):
                items += [(n, ColumnRef(c), node) for n, c in self._star(scope, None, node)]
                continue
            if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
                items += [(n, ColumnRef(c), node) for n, c in self._star(scope, node.table, node)]
                continue
            inner = node.this if isinstance(node, exp.Alias) else node
            binder = WindowBinder(self, scope, "SELECT", allow_aggregates=True)
            expr = binder.bind(inner)
            name = node.alias if isinstance(node, exp.Alias) else (
                inner.name if isinstance(inner, exp.Column) else f"_col{position_ - 1}")
            items.append((name, expr, node))
        return items

    def _star(self, scope: Scope, qualifier: str | None, node: exp.Expr) -> list[tuple[str, Column]]:
        if not scope.relations:
            raise error_at(node, "SELECT * needs a FROM clause")
        if qualifier is not None:
            matching = [r for r in scope.relations if (r.alias or "").lower() == qualifier.lower()]
            if not matching:
                raise error_at(node, f"unknown table or alias '{qualifier}' in {qualifier}.*")
            if len(matching) > 1:
                raise error_at(node, f"'{qualifier}.*' is ambiguous: {len(matching)} relations in FROM are named "
                                     f"'{qualifier}' (give one another alias)")
            return [pair for r in matching for pair in r.columns]
        using_names = set(scope.using)
        result = [(name, column) for name, column in scope.using.items()]
        for relation in scope.relations:
            result += [(n, c) for n, c in relation.columns if n.lower() not in using_names]
        return result

    def _order_target(self, node: exp.Expr, scope: Scope, values: list[Expr], names: list[str], finish,
                      hidden: list[Expr], distinct: bool) -> int:
        """The index (in ``values`` then ``hidden``) of the value an ORDER BY key orders by: a
        select-list position or name, a value equal to a select-list one, or a new hidden one."""
        if isinstance(node, exp.Literal) and not node.is_string:
            index = _position(node, len(values))
            if not 1 <= index <= len(values):
                raise error_at(node, f"ORDER BY position {index} is not in the select list (1..{len(values)})")
            return index - 1
        if isinstance(node, exp.Column) and not node.table:
            matches = [i for i, n in enumerate(names) if n.lower() == node.name.lower()]
            if len(matches) == 1 or (matches and len({values[i] for i in matches}) == 1):
                return matches[0]
        binder = WindowBinder(self, scope, "ORDER BY", allow_aggregates=True)
        value = finish(binder.bind(node), node)
        for index, known in enumerate(values + hidden):
            if known == value:
                return index
        if distinct:
            raise error_at(node, "with SELECT DISTINCT, ORDER BY expressions must appear in the select list")
        hidden.append(value)
        return len(values) + len(hidden) - 1

    def _limit(self, node: exp.Expr, plan: Plan) -> Plan:
        limit, offset = node.args.get("limit"), node.args.get("offset")
        if limit is None and offset is None:
            return plan
        count: int | None
        if isinstance(limit, exp.Fetch):
            count = self._fetch_count(limit)
        else:
            count = self._constant_int(limit.expression if limit is not None else None, "LIMIT")
        skip = self._constant_int(offset.expression if offset is not None else None, "OFFSET") or 0
        return Limit(plan, count, skip)

    def _fetch_count(self, fetch: exp.Fetch) -> int:
        """``FETCH {FIRST | NEXT} [n] {ROW | ROWS} ONLY``: LIMIT n (n is 1 when left out)."""
        options = fetch.args.get("limit_options")
        if options is not None and options.args.get("percent"):
            raise error_at(fetch, "FETCH FIRST ... PERCENT is not supported")
        if options is not None and options.args.get("with_ties"):
            raise error_at(fetch, "FETCH FIRST ... WITH TIES is not supported")
        if not self.language.fetch_first:
            raise error_at(fetch, f"FETCH FIRST is not {self.language.title} SQL: write LIMIT n")
        count = self._constant_int(fetch.args.get("count"), "FETCH FIRST")
        return 1 if count is None else count

    def _constant_int(self, node: exp.Expr | None, clause: str) -> int | None:
        if node is None:
            return None
        if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
            return int(node.this)
        raise error_at(node, f"{clause} must be a non-negative integer constant")

    # -- FROM --------------------------------------------------------------------------------------

    def _bind_from(self, select: exp.Select, scope: Scope) -> Plan:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            if select.args.get("joins"):
                raise error_at(select, "JOIN without FROM")
            return Values((), ((),))
        plan = self._bind_relation(from_.this, scope)
        item = 0   # where the current comma-separated FROM item starts, in scope.relations
        for join in select.args.get("joins") or []:
            if _is_comma(join):
                item = len(scope.relations)
            earlier = {c for relation in scope.relations[:item] for _, c in relation.columns}
            plan = self._bind_join(plan, join, scope)
            on = join.args.get("on")
            if on is not None and earlier and isinstance(plan, Join) and columns_of(plan.condition) & earlier:
                # JOIN binds tighter than the comma: in 'a, b JOIN c ON ...' the ON sees b and c
                # only. Trino and PostgreSQL reject a reference to a; DuckDB reads it laterally.
                raise error_at(on, "this ON condition reads a table listed before the comma, which it cannot "
                                   "see (JOIN binds tighter than ','): join that table with JOIN ... ON instead")
        return plan

    def _bind_relation(self, node: exp.Expr, scope: Scope) -> Plan:
        if isinstance(node, exp.Table):
            return self._bind_table(node, scope)
        if _is_join_group(node):
            return self._bind_parenthesized(node, scope)
        if isinstance(node, exp.Subquery):
            if node.args.get("lateral"):
                raise error_at(node, "LATERAL subqueries are not supported")
            plan, names = self.bind_query(node.this, scope.beside())
            return self._add_relation(scope, plan, names, node.args.get("alias"), "subquery", node)
        if isinstance(node, exp.Values):
            plan, names = self._bind_values(node, Scope(parent=scope.beside()))
            return self._add_relation(scope, plan, names, node.args.get("alias"), "values", node)
        if isinstance(node, exp.Lateral):
            raise error_at(node, "LATERAL is not supported")
        if isinstance(node, exp.Unnest):
            raise error_at(node, "UNNEST is not supported")
        raise error_at(node, f"unsupported FROM item: {node.sql()[:60]}")

    def _bind_parenthesized(self, node: exp.Subquery, scope: Scope) -> Plan:
        """``(a JOIN b ON ...)`` in FROM: a join tree in parentheses. Unnamed, its tables stay
        visible by their own names; named (``(a CROSS JOIN b) AS j``), it is one relation ``j``
        whose columns are those of the tables inside (which are then hidden, as in PostgreSQL
        and DuckDB)."""
        alias = node.args.get("alias")
        target = scope if alias is None else Scope(parent=scope.parent)
        plan = self._bind_member(node.this, target)
        if alias is None:
            return plan
        names = [name for relation in target.relations for name, _ in relation.columns]
        return self._add_relation(scope, plan, names, alias, "joined tables", node)

    def _bind_member(self, node: exp.Expr, scope: Scope) -> Plan:
        """A FROM item inside parentheses with the joins that follow it (sqlglot hangs them on
        the item: ``(a JOIN b ON ...)`` is a Table ``a`` whose ``joins`` hold b)."""
        joins = node.args.get("joins") or []
        if joins:
            node = node.copy()
            node.set("joins", None)
        plan = self._bind_relation(node, scope)
        for join in joins:
            plan = self._bind_join(plan, join, scope)
        return plan

    def _add_relation(self, scope: Scope, plan: Plan, names: list[str], alias: exp.TableAlias | None,
                      kind: str, node: exp.Expr) -> Plan:
        alias_name = alias.name if alias is not None and alias.name else None
        column_aliases = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        if column_aliases:
            if len(column_aliases) != len(names):
                raise error_at(node, f"{alias_name or kind} has {len(names)} columns but {len(column_aliases)} "
                                     "column aliases")
            names = column_aliases
        self._add_to_scope(scope, Relation(alias_name, list(zip(names, plan.output)), kind), node)
        return plan

    def _add_to_scope(self, scope: Scope, relation: Relation, node: exp.Expr) -> None:
        """A FROM item under its name. PostgreSQL rejects a name used twice in one FROM clause;
        Trino, Spark and DuckDB accept it and reject only a reference it makes ambiguous
        (``Scope.resolve``, ``a.*``)."""
        if self.language.unique_from_names and relation.alias is not None and \
                any((r.alias or "").lower() == relation.alias.lower() for r in scope.relations):
            raise error_at(node.args.get("alias") or node,
                           f'table name "{relation.alias}" specified more than once in FROM '
                                 "(give one of them another alias)")
        scope.relations.append(relation)

    def _bind_table(self, node: exp.Table, scope: Scope) -> Plan:
        name = node.name
        qualifier = node.db
        if not qualifier:
            cte = scope.cte(name)
            if cte is not None:
                return self._bind_cte_reference(cte, node, scope)
        full = f"{qualifier}.{name}" if qualifier else name
        try:
            table = self.catalog.table(full)
        except CatalogError as exc:
            raise error_at(node, str(exc)) from None
        columns_info = self.schemas.columns(table)
        columns = tuple(self.columns.new(info.name, info.type, info.nullable) for info in columns_info)
        by_name = {info.name.lower(): c for info, c in zip(columns_info, columns)}
        keys = []
        for key in ((table.primary_key,) if table.primary_key else ()) + table.unique_keys:
            if all(k.lower() in by_name for k in key):
                keys.append(tuple(by_name[k.lower()] for k in key))
        assumed: list[AssumedKey] = []
        for names, source in self.assumed_keys.get(table.qualified_name, ()):
            assumed_columns = tuple(by_name[k.lower()] for k in names if k.lower() in by_name)
            # A declared key within it already makes it unique: nothing to assume.
            if len(assumed_columns) == len(names) and not any(set(k) <= set(assumed_columns) for k in keys) \
                    and not any(set(a.columns) <= set(assumed_columns) for a in assumed):
                assumed.append(AssumedKey(assumed_columns, source))
        scan = Scan(table.qualified_name, columns, tuple(info.name for info in columns_info), tuple(keys),
                    self._references(table, by_name), tuple(assumed))
        alias = node.alias or name
        self._add_to_scope(scope, Relation(alias, [(info.name, c) for info, c in zip(columns_info, columns)],
                                           table.qualified_name), node)
        return scan

    def _references(self, table: TableDef, by_name: dict[str, Column]) -> tuple[ForeignKeyRef, ...]:
        """The table's declared foreign keys, on its columns, to the referenced table's qualified
        name (an unqualified reference names a table of the same source)."""
        found = []
        for fk in table.foreign_keys:
            if not all(c.lower() in by_name for c in fk.columns):
                continue
            target = fk.references if "." in fk.references else f"{table.source}.{fk.references}"
            try:
                referenced = self.catalog.table(target).qualified_name
            except CatalogError:
                continue   # a reference outside the catalog proves nothing here
            found.append(ForeignKeyRef(tuple(by_name[c.lower()] for c in fk.columns), referenced,
                                       tuple(fk.referenced_columns)))
        return tuple(found)

    def _bind_cte_reference(self, cte: CteDefinition, node: exp.Table, scope: Scope) -> Plan:
        # Each reference binds the CTE afresh: its columns get ids of their own, as two scans would.
        plan, names = self.bind_query(cte.query, cte.scope)
        if cte.column_aliases:
            if len(cte.column_aliases) != len(names):
                raise error_at(node, f"CTE {cte.name} has {len(names)} columns but {len(cte.column_aliases)} aliases")
            names = cte.column_aliases
        alias = node.alias or node.name
        self._add_to_scope(scope, Relation(alias, list(zip(names, plan.output)), f"cte {cte.name}"), node)
        return plan

    def _bind_join(self, left: Plan, join: exp.Join, scope: Scope) -> Plan:
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        if kind in ("SEMI", "ANTI") or join.args.get("method"):
            raise error_at(join, f"{kind or join.args.get('method')} JOIN syntax is not supported")
        if kind == "NATURAL" or join.args.get("natural"):
            raise error_at(join, "NATURAL JOIN is not supported")
        if kind == "OUTER" and not side:
            # sqlglot reads a bare OUTER JOIN as an inner join; no engine accepts it.
            raise error_at(join, "OUTER JOIN needs LEFT, RIGHT or FULL before it")
        left_relations = list(scope.relations)
        right = self._bind_relation(join.this, scope)
        join_kind: JoinKind = _OUTER_JOINS.get(side, "inner")
        on = join.args.get("on")
        using = join.args.get("using")
        if on is not None:
            condition = ExpressionBinder(self, scope, "JOIN ... ON")._boolean(on)
        elif using:
            condition = self._using_condition(join, using, left_relations, scope.relations[len(left_relations):],
                                              scope, join_kind)
        else:
            if join_kind != "inner" or (kind not in ("CROSS", "") and side):
                raise error_at(join, f"{side} JOIN needs an ON or USING condition")
            condition = TRUE
        plan: Plan = Join(join_kind, left, right, condition)
        if using and join_kind == "full":
            plan = self._coalesce_using(plan, scope)
        return plan

    def _using_condition(self, join: exp.Join, using: list, left: list[Relation], right: list[Relation],
                         scope: Scope, kind: str) -> Expr:
        parts = []
        for identifier in using:
            name = identifier.name.lower()
            lcols = [c for r in left for n, c in r.columns if n.lower() == name]
            rcols = [c for r in right for n, c in r.columns if n.lower() == name]
            if len(lcols) != 1 or len(rcols) != 1:
                raise error_at(join, f"USING column '{name}' must appear exactly once on each side")
            parts.append(compare("eq", ColumnRef(lcols[0]), ColumnRef(rcols[0])))
            scope.using[name] = rcols[0] if kind == "right" else lcols[0]
            scope.using_pairs[name] = (lcols[0], rcols[0])
        return conjunction(parts)

    def _coalesce_using(self, plan: Plan, scope: Scope) -> Plan:
        pairs = scope.using_pairs
        assignments: list[tuple[Column, Expr]] = [(c, ColumnRef(c)) for c in plan.output]
        for name, (lcol, rcol) in pairs.items():
            merged = self.columns.new(name, T.common_type(lcol.type, rcol.type) or lcol.type)
            assignments.append((merged, SpecialForm("COALESCE", (ColumnRef(lcol), ColumnRef(rcol)), merged.type)))
            scope.using[name] = merged
        return Project(plan, tuple(assignments))

    # -- VALUES and set operations -------------------------------------------------------------------

    def _bind_values(self, node: exp.Values, scope: Scope) -> tuple[Plan, list[str]]:
        rows = []
        for row_node in node.expressions:
            cells = row_node.expressions if isinstance(row_node, exp.Tuple) else [row_node]
            binder = ExpressionBinder(self, scope, "VALUES")
            rows.append([binder.bind(cell) for cell in cells])
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise error_at(node, "VALUES rows have different numbers of columns")
        types = []
        for index in range(width):
            current = T.NULL
            for row in rows:
                common = T.common_type(current, row[index].type)
                if common is None:
                    raise error_at(node, f"VALUES column {index + 1} mixes {current} and {row[index].type}")
                current = common
            types.append(T.VARCHAR if current == T.NULL else current)
        for row in rows:
            for cell in row:
                if not isinstance(cell, Constant):
                    raise error_at(node, "VALUES may hold constants only")
        names = [f"_col{i}" for i in range(width)]
        columns = tuple(self.columns.new(n, t) for n, t in zip(names, types))
        return Values(columns, tuple(tuple(r) for r in rows)), names

    def _bind_set_operation(self, node: exp.SetOperation, scope: Scope) -> tuple[Plan, list[str]]:
        left, names = self.bind_query(node.this, scope)
        right, _ = self.bind_query(node.expression, scope)
        if len(left.output) != len(right.output):
            raise error_at(node, f"{node.key.upper()} inputs have {len(left.output)} and {len(right.output)} columns")
        types = []
        for a, b in zip(left.output, right.output):
            common = T.common_type(a.type, b.type)
            if common is None:
                raise error_at(node, f"{node.key.upper()} cannot combine {a.type} and {b.type}")
            types.append(common)
        left = self._cast_to(left, types)
        right = self._cast_to(right, types)
        columns = tuple(self.columns.new(n, t) for n, t in zip(names, types))
        kind = _SET_OPERATIONS[node.key]
        distinct = node.args.get("distinct") is not False
        plan: Plan = SetOp(kind, distinct, (left, right), columns, (left.output, right.output))
        return self._order_limit_of_set(node, plan, names, scope)

    def _cast_to(self, plan: Plan, types: list[T.DataType]) -> Plan:
        if all(c.type == t for c, t in zip(plan.output, types)):
            return plan
        assignments: list[tuple[Column, Expr]] = []
        for column, type_ in zip(plan.output, types):
            if column.type == type_:
                assignments.append((column, ColumnRef(column)))
            else:
                cast = self.columns.new(column.name, type_)
                assignments.append((cast, SpecialForm("CAST", (ColumnRef(column),), type_)))
        return Project(plan, tuple(assignments))

    def _order_limit_of_set(self, node: exp.Expr, plan: Plan, names: list[str],
                            scope: Scope) -> tuple[Plan, list[str]]:
        order = node.args.get("order")
        if order is not None:
            outputs = list(zip(plan.output, [ColumnRef(c) for c in plan.output]))
            keys = []
            for ordered in order.expressions:
                target = ordered.this
                if isinstance(target, exp.Literal) and not target.is_string and \
                        1 <= _position(target, len(outputs)) <= len(outputs):
                    column = outputs[_position(target, len(outputs)) - 1][0]
                elif isinstance(target, exp.Column) and not target.table and \
                        [c for n, c in zip(names, plan.output) if n.lower() == target.name.lower()]:
                    column = [c for n, c in zip(names, plan.output) if n.lower() == target.name.lower()][0]
                else:
                    raise error_at(target, "ORDER BY of a set operation must name an output column or position")
                keys.append(SortKey(column, not ordered.args.get("desc"), bool(ordered.args.get("nulls_first"))))
            plan = Sort(plan, tuple(keys))
        return self._limit(node, plan), names


def _is_comma(join: exp.Join) -> bool:
    """Whether sqlglot's Join is a comma in FROM (no keyword: it carries nothing but its table;
    a JOIN keyword without ON leaves its other arguments set, if only to None)."""
    return not any(key != "this" for key in join.args)


def _select_aliases(select: exp.Select, items: list[tuple[str, Expr, exp.Expr]]) -> dict[str, Expr]:
    """The select list's aliases (``AS name``) that name one item each, lowercase."""
    named: dict[str, list[Expr]] = {}
    for name, expr, node in items:
        if isinstance(node, exp.Alias):
            named.setdefault(name.lower(), []).append(expr)
    return {name: exprs[0] for name, exprs in named.items() if len(exprs) == 1}


def _is_join_group(node: exp.Expr) -> TypeGuard[exp.Subquery]:
    """Whether ``node`` is a parenthesized join tree in FROM (not a derived table): sqlglot reads
    ``(a CROSS JOIN b)`` as a Subquery around a Table."""
    if not isinstance(node, exp.Subquery):
        return False
    inner = node.this
    return isinstance(inner, exp.Table) or isinstance(inner, exp.Subquery) and \
        (bool(inner.args.get("joins")) or _is_join_group(inner))


def _position(node: exp.Literal, outputs: int) -> int:
    """An ORDER BY number: a position in the select list, so a whole number (DuckDB and
    PostgreSQL reject or ignore ``ORDER BY 0.5``: it names no column)."""
    if not node.this.isdigit():
        raise error_at(node, f"ORDER BY {node.this}: a position in the select list is a whole number (1..{outputs})")
    return int(node.this)


__all__ = ["Binder", "BoundQuery", "SqlError"]
