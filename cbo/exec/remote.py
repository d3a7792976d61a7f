"""Folding work into JDBC sources: a [Project] [Filter] Scan of a remote table becomes one query.

Which subtrees fold, and into which SQL, is decided in one place, :meth:`RemoteQueries.pushed`:
top-down, the largest [Project] [Filter] Scan wins. Execution (``cbo.exec.spark_sql``) sends
exactly those queries and EXPLAIN shows exactly those, so the two cannot disagree (EXPLAIN
once showed the bare scan's query while the filtered one was sent).

Spark's JDBC reader sends each query as ``SELECT <columns> FROM (<query>) <alias>``, with a key
range per partition when read in parallel partitions; it is told not to add filters of its own
(``pushDownPredicate`` off; Spark would push the IS NOT NULL it infers for join keys), so the
database receives no predicate cbo did not put there.

The query is rendered from the plan's AST in the source's dialect (identifiers quoted, literals
escaped by sqlglot) and names its columns by identity, like every other rendered subplan. When
the table is large and has a numeric key, its bounds let Spark read it in parallel partitions.

Whole subplans of one source (joins, aggregations, top-N: JDBC join pushdown) run there when the search
chose their remote-query alternative (``Algorithm.REMOTE_QUERY``, added by the connector rules
of ``cbo.memo.rules.jdbc_pushdown``): the physical plan says which subtrees are remote queries,
and :meth:`RemoteQueries.pushed` reads it, so nothing is decided here a second time. A pushed
[Project] [Filter] Scan is the per-table fold above (with its parallel partitioned read); any
other pushed subplan is rendered whole in the source's dialect, its aggregates cast to cbo's
types (PostgreSQL's ``sum`` of a decimal is an unbounded ``numeric``, MariaDB's ``sum`` of
integers a ``DECIMAL``), and read in parallel partitions on a column of its result when its
estimate is large and the split is sound (``cbo.exec.remote_partitions``: no LIMIT or ORDER BY
in it, a column that reaches a table scan, bounds and count from the statistics), else whole.

What differs between sources is asked of the source's connector (``cbo.connectors``): its SQL
dialect, how a pushed join keeps its order (``JoinOrder``), whether reads split into key
ranges, and a key's bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from cbo.catalog_types import Catalog, Source, TableDef
from cbo.connectors import JoinOrder, connector_of
from cbo.errors import CboError
from cbo.exec.remote_join_order import driving_order
from cbo.exec.remote_partitions import ROWS_PER_PARTITION, Partitioning, choose
from cbo.ir import types as T
from cbo.ir.expressions import Column, Expr, can_raise, uses_row_id
from cbo.ir.operators import Aggregate, Filter, Plan, Project, Scan, Window, walk
from cbo.physical.algorithm import Algorithm
from cbo.physical.remote_work import remote_work
from cbo.sqlgen import InputOrder, SqlRenderer, ident, name_of

PARTITIONED_READ_MIN_ROWS = 200_000
# A pushed query estimated to return at most this many rows is read in one fetch (RemoteScan.
# whole_result): the driver then holds at most a few MiB even if the estimate is 10x low.
WHOLE_RESULT_ROWS = 100_000


@dataclass(frozen=True)
class RemoteScan:
    source: str
    sql: str
    partition_column: str | None = None
    bounds: tuple[Any, Any] | None = None     # ints, or dates (a pushed query's date column)
    partitions: int | None = None             # None: the reader's default (the cluster's cores)
    # Read in one fetch (no fetch size): the search estimates at most ``WHOLE_RESULT_ROWS`` rows.
    # PostgreSQL runs a query read through a cursor with a fetch size (a portal executed a batch
    # at a time) without parallel workers; read at once, its scans and aggregations get them, and
    # a scan-heavy aggregation (TPC-H's pricing summary) runs about twice as fast.
    whole_result: bool = False
    # the result's columns, by name, with cbo's types (a source whose results carry no types,
    # SQLite's, is read with them: Connector.query_options)
    columns: tuple[tuple[str, T.DataType], ...] = ()

    def describe_partitions(self) -> str | None:
        """The partitioned read as EXPLAIN shows it, or None for a read in one partition."""
        if not self.partition_column or not self.bounds:
            return None
        count = f"{self.partitions} partitions" if self.partitions else "one partition per core"
        return f"{count} on {self.partition_column} in [{self.bounds[0]}, {self.bounds[1]}]"


class RemoteQueries:
    """``partitioned_reads``: a JDBC table's read is split on its numeric key (the bounds are
    read from the database). ``pushed_partitions``: at most this many parallel partitions for a
    pushed subplan's query (``cbo.exec.remote_partitions``; the bounds come from statistics);
    below 2 every pushed subplan is read whole."""

    def __init__(self, catalog: Catalog, partitioned_reads: bool = True,
                 min_rows_for_partitions: int = PARTITIONED_READ_MIN_ROWS, pushed_partitions: int = 0,
                 rows_per_partition: float = ROWS_PER_PARTITION):
        self.catalog = catalog
        self.partitioned_reads = partitioned_reads
        self.min_rows = min_rows_for_partitions
        self.pushed_partitions = pushed_partitions
        self.rows_per_partition = rows_per_partition   # of a pushed query (tests lower it)
        self._bounds: dict[str, tuple[int, int] | None] = {}

    def for_explain(self) -> RemoteQueries:
        """The same choices without reading the database (a table read's key bounds): EXPLAIN's."""
        return RemoteQueries(self.catalog, False, self.min_rows, self.pushed_partitions, self.rows_per_partition)

    def pushed(self, plan: Plan, operators: dict[int, Any] | None = None) -> dict[Plan, RemoteScan]:
        """Every subtree of ``plan`` that runs as a remote query, with that query. Execution and
        EXPLAIN both read this.

        With the plan's physical operators (``PhysicalPlan.by_logical``), the search's choice:
        each remote-query operator's subplan, and each JDBC table read by a scan of its own.
        Without (a plan made outside the search): top-down, the largest foldable subtree
        (``fold``), its inputs no further."""
        found: dict[Plan, RemoteScan] = {}
        stack = [plan]
        chosen = bool(operators) and any(o.algorithm is Algorithm.REMOTE_QUERY or isinstance(o.logical, Scan)
                                         for o in operators.values())  # type: ignore[union-attr]
        while stack:
            node = stack.pop()
            if node in found:
                continue
            if chosen:
                assert operators is not None
                operator = operators.get(id(node))
                remote = None
                if operator is not None and operator.algorithm is Algorithm.REMOTE_QUERY and operator.logical is node:
                    remote = self.remote_query(node, operator)
                elif isinstance(node, Scan):
                    remote = self.fold(node)
            else:
                remote = self.fold(node)
            if remote is not None:
                found[node] = remote
            else:
                stack.extend(node.children)
        return found

    def remote_query(self, plan: Plan, operator: Any = None,
                     estimate_rows: Callable[[Plan], float] | None = None) -> RemoteScan:
        """The query running a pushed subplan (every table in one JDBC source) in its source;
        with its physical operator (``PhysicalPlan``: estimated rows, width and memo group), read
        in partitions where ``cbo.exec.remote_partitions`` allows. The search's estimates (the
        operator's memo's, else ``estimate_rows``) give a source whose join order cbo pins
        (``JoinOrder.PINNED``) its order."""
        folded = self.fold(plan)
        if folded is not None:
            return folded
        scans = [n for n in walk(plan) if isinstance(n, Scan)]
        sources = {self.catalog.source_of(self.catalog.table(s.table)).name for s in scans}
        if len(sources) != 1:
            raise AssertionError(f"a remote query reads {len(sources)} sources")
        source = self.catalog.sources[sources.pop()]
        connector = connector_of(source)

        def remote_table(scan: Scan) -> exp.Expr:
            return connector.remote_table(source, self.catalog.table(scan.table))

        split = self._split(plan, operator)
        # A repeated aggregation is computed once (a materialized CTE) where the dialect can; not
        # in a partitioned read, whose key range the source cannot move into a materialized CTE.
        # which repeated joins the remote cost shared (the connector rule's record)
        work = remote_work(plan)
        # A source whose join order cbo pins (MariaDB) joins in the order cbo's estimates give
        # (cbo.exec.remote_join_order), where the search's estimator is known; one that plans a
        # flat join itself (PostgreSQL) gets the tables in the order its estimates use best.
        estimated = self._estimated_rows(operator) or estimate_rows
        # (not in a partitioned read: see below)
        pinned = connector.join_order is JoinOrder.PINNED and estimated is not None and split is None
        order: InputOrder = self._referencing_first
        if pinned and estimated is not None:
            known = estimated

            def order(inputs: list[Plan], conditions: list[Expr]) -> list[Plan]:
                return driving_order(inputs, conditions, known)
        caps = connector.capabilities
        renderer = SqlRenderer(connector.sql, remote_table,
                               share_repeated=split is None and caps is not None and caps.shares_repeated,
                               flat_joins=connector.join_order is JoinOrder.FLAT or pinned, order=order,
                               shared_joins=work.shared_joins if work is not None else frozenset())
        query = renderer.shared_query(plan)
        # Aggregates come back in the source's types (PostgreSQL's sum of a decimal is an
        # unbounded numeric, MariaDB's sum of integers a DECIMAL): cast to cbo's. Other computed
        # columns keep the source's type (cbo's decimal type of a quotient, e.g. decimal(38,38),
        # need not hold the source's value; Spark reads it as a decimal either way). Window
        # functions likewise (their aggregates, and PostgreSQL's INTEGER ntile).
        aggregated = {c for n in walk(plan) if isinstance(n, Aggregate) for c, _ in n.aggregates}
        aggregated |= {c for n in walk(plan) if isinstance(n, Window) for c, _ in n.functions}
        columns = []
        for column in plan.output:
            value: exp.Expr = exp.column(ident(column))
            if column in aggregated and column.type.name in ("decimal", "double", "bigint"):
                value = exp.Cast(this=value, to=column.type.to_sqlglot())
            columns.append(exp.alias_(value, ident(column)))
        query = renderer.with_ctes(exp.select(*columns).from_(_derived(query, "q")))
        if pinned:
            # a partitioned read's range could not reach the scans of a pinned query (MariaDB
            # materializes it), so a split query is left to the source's own order
            query = connector.pin_join_order(query)
        typed = _typed(plan.output)
        if split is None:
            rows = getattr(operator, "rows", None)
            return RemoteScan(source.name, connector.render(query),
                              whole_result=rows is not None and rows <= WHOLE_RESULT_ROWS, columns=typed)
        return RemoteScan(source.name, connector.render(query), split.column, (split.lower, split.upper),
                          split.partitions, columns=typed)

    @staticmethod
    def _estimated_rows(operator: Any) -> Callable[[Plan], float] | None:
        """The search's estimate of a plan's rows (None without the remote query's memo group)."""
        group = getattr(operator, "group", None)
        estimator = getattr(group.find().memo, "estimator", None) if group is not None else None
        return estimator.rows if estimator is not None else None

    def _referencing_first(self, inputs: list[Plan], conditions: list[Expr] | None = None) -> list[Plan]:
        """A flat join's inputs with each table before the tables it references (foreign keys,
        through the other tables of the join), else in the join's order: PostgreSQL then applies
        the fact table's foreign keys first (``cbo.sqlgen``: TPC-H Q9's lineitem -> partsupp key
        before partsupp -> part)."""
        tables = {id(i): self.catalog.table(i.table) for i in inputs if isinstance(i, Scan)}
        names = {t.qualified_name for t in tables.values()}
        references: dict[str, set[str]] = {}
        for table in tables.values():
            found = set()
            for fk in table.foreign_keys:
                try:   # a key names a table of its own source
                    target = self.catalog.table(f"{table.source}.{fk.references}").qualified_name
                except CboError:
                    continue
                if target in names and target != table.qualified_name:
                    found.add(target)
            references[table.qualified_name] = found
        depth: dict[str, int] = {}

        def chain(name: str, seen: frozenset[str]) -> int:
            # the longest path of references from ``name`` through the join's tables
            if name not in depth:
                depth[name] = max((1 + chain(t, seen | {name}) for t in references[name] if t not in seen),
                                  default=0)
            return depth[name]

        def rank(i: Plan) -> int:
            table = tables.get(id(i))
            return -chain(table.qualified_name, frozenset()) if table is not None else 0

        return sorted(inputs, key=rank)

    def _split(self, plan: Plan, operator: Any) -> Partitioning | None:
        if self.pushed_partitions < 2 or operator is None or operator.group is None:
            return None
        group = operator.group.find()
        estimator = getattr(group.memo, "estimator", None)
        stats = getattr(estimator, "stats", None) or {}

        def table_rows(table: str) -> float:
            found = stats.get(table)
            return float(found.row_count) if found is not None else 0.0

        return choose(plan, group.estimate, operator.rows, operator.width, self.pushed_partitions, table_rows,
                      self.rows_per_partition)

    def fold(self, plan: Plan) -> RemoteScan | None:
        """The remote query for a [Project] [Filter] Scan of a JDBC table, else None."""
        project = plan if isinstance(plan, Project) else None
        node = project.input if project is not None else plan
        filter_ = node if isinstance(node, Filter) else None
        scan = filter_.input if filter_ is not None else node
        if not isinstance(scan, Scan):
            return None
        table = self.catalog.table(scan.table)
        source = self.catalog.source_of(table)
        if source.type != "jdbc":
            return None
        if project is not None and any(can_raise(e) or uses_row_id(e) for _, e in project.assignments):
            return None
        if filter_ is not None and can_raise(filter_.predicate):
            return None
        connector = connector_of(source)

        def remote_table(_: Scan) -> exp.Expr:
            return connector.remote_table(source, table)

        renderer = SqlRenderer(connector.sql, remote_table)
        query = renderer.query(scan)
        # The scan names its columns by identity; filters and projections read those names
        # from it as a derived table (the database flattens this).
        if filter_ is not None:
            query = exp.select(*[exp.column(exp.to_identifier(name_of(c), quoted=True)) for c in scan.columns]) \
                .from_(_derived(query, "s")).where(renderer.expr(filter_.predicate))
        if project is not None:
            query = exp.select(*[exp.alias_(renderer.expr(e), exp.to_identifier(name_of(c), quoted=True))
                                 for c, e in project.assignments]).from_(_derived(query, "p"))
        partition = self._partition_key(scan, table, source) if self.partitioned_reads else None
        output = project.output if project is not None else scan.output
        return RemoteScan(source.name, connector.render(query),
                          partition[0] if partition else None, partition[1] if partition else None,
                          columns=_typed(output))

    def _partition_key(self, scan: Scan, table: TableDef, source: Source) -> tuple[str, tuple[int, int]] | None:
        connector = connector_of(source)
        if not table.primary_key or not connector.parallel_reads:
            return None
        key = table.primary_key[0]
        if key not in scan.column_names:
            return None
        column = scan.columns[scan.column_names.index(key)]
        if column.type.name not in ("integer", "bigint"):
            return None
        if table.qualified_name not in self._bounds:
            self._bounds[table.qualified_name] = connector.key_bounds(source, table, key, self.min_rows)
        bounds = self._bounds[table.qualified_name]
        return (name_of(column), bounds) if bounds else None


def _derived(query: exp.Expr, alias: str) -> exp.Expr:
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _typed(columns: tuple[Column, ...]) -> tuple[tuple[str, T.DataType], ...]:
    """A result's columns as a remote query names them, with their types."""
    return tuple((name_of(c), c.type) for c in columns)
