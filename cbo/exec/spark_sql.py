"""A plan as one Spark SQL statement that keeps the plan's shape.

Spark builds a DataFrame from one statement in one parse and one analysis; built operator by
operator through PySpark, every step is a round trip to the JVM that re-analyzes the plan so
far, which costs several times more and is most of a small query's run.

The statement is the shared renderer's (``cbo.sqlgen``: one SELECT per operator over derived
tables, columns named by identity, identifiers quoted and literals escaped by sqlglot), with
three differences that keep Spark to cbo's plan:

* each equi-join carries the strategy the planner chose as a hint on its right input's alias
  (``/*+ SHUFFLE_HASH(t7) */``); Spark resolves a join hint within its own SELECT, so the hint
  reaches exactly that input;
* semi and anti joins are ``LEFT SEMI JOIN`` / ``LEFT ANTI JOIN`` rather than [NOT] EXISTS, so
  they are joins with a side and a strategy, as planned;
* a mark join on key equalities is, for EXISTS (a TRUE mark predicate), an EXISTS in the
  select list, which Spark runs as an existence join; for IN, a left join with the right's
  distinct keys and IN's value, at most one match per row, whose NULL and FALSE come from a
  second left join with the rows and non-NULL values counted per key (``keyed_mark``). Any
  other mark join tags left rows with an id, left-joins the right side and keeps, per id, the
  best outcome: TRUE if some row matched, NULL if only unknown comparisons, else FALSE.

Tables are read through temporary views the executor registers once per table (``SparkViews``);
each remote query the search chose (a pushed subplan, or a JDBC table's [Project] [Filter] Scan;
``cbo.exec.remote``) is read through a view of its own.

A CTE the search chose to compute once (``CteAnchor``) cannot be one part of the statement:
Spark inlines every deterministic CTE of a statement (its ``InlineCTE`` rule), and a reused
exchange needs the references' subplans identical after Spark's own filter pushdown and column
pruning, which differ per reference. So its producer is a DataFrame of its own, persisted
(Spark's cached relation: computed by the first job that reads it, then read from memory) and
registered as a view that each consumer reads (``SparkViews.persisted``); the executor
unpersists it once the statement's rows are collected.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from typing import TYPE_CHECKING

from sqlglot import exp

from cbo.catalog_types import Catalog
from cbo.connectors import connector_of
from cbo.exec.remote import RemoteQueries, RemoteScan
from cbo.ir.expressions import TRUE, Call, Column, Expr, can_raise, columns_of, conjuncts
from cbo.ir.operators import CteAnchor, CteConsumer, GroupingSets, Join, Limit, Plan, Project, Scan, Sort
from cbo.physical.algorithm import Algorithm
from cbo.physical.plan import PhysicalPlan
from cbo.sqlgen import SqlRenderer, _select, ident

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# View numbers are unique in the process (one Spark session): two executors over different
# catalogs must never replace each other's views.
_view_numbers = itertools.count()


class SparkViews:
    """Temporary views over the catalog's tables and over remote queries, made once each.

    A Parquet table's view lists its files and reads footers when made, as Spark's own catalog
    tables do once; a rewritten directory (new mtime) gets a
    fresh view. View names are generated (``cbo_t3_lineitem``), so they never meet a user's nor
    another executor's."""

    def __init__(self, spark: SparkSession, catalog: Catalog, partitions: int):
        self.spark = spark
        self.catalog = catalog
        self.partitions = partitions
        self.remote = RemoteQueries(catalog, pushed_partitions=partitions)
        self._tables: dict[str, tuple[int | None, str]] = {}   # table -> (mtime, view)
        self._remote_views: dict[str, str] = {}                # remote query key -> view

    def table(self, name: str) -> str:
        from cbo.engines.spark import read_table

        table = self.catalog.table(name)
        stamp = table.path.stat().st_mtime_ns if table.path is not None and table.path.exists() else None
        known = self._tables.get(table.qualified_name)
        if known is None or known[0] != stamp:
            view = f"cbo_t{next(_view_numbers)}_{_word(table.name)}"
            read_table(self.spark, self.catalog, table).createOrReplaceTempView(view)
            known = self._tables[table.qualified_name] = (stamp, view)
        return known[1]

    def persisted(self, statement: str) -> tuple[str, DataFrame]:
        """A view over ``statement``'s rows, persisted (memory, then disk): Spark computes them
        once, in the first job that reads the view, and every read after that scans the
        stored rows. The caller unpersists the frame when done."""
        from pyspark import StorageLevel

        view = f"cbo_cte{next(_view_numbers)}"
        frame = self.spark.sql(statement).persist(StorageLevel.MEMORY_AND_DISK)
        frame.createOrReplaceTempView(view)
        return view, frame

    def remote_view(self, remote: RemoteScan) -> str:
        """The view reading one remote query (``RemoteQueries.pushed`` says which)."""
        key = hashlib.sha256(repr((remote.source, remote.sql, remote.partition_column, remote.bounds,
                                   remote.partitions, remote.whole_result))
                             .encode()).hexdigest()
        if key not in self._remote_views:
            view = f"cbo_r{next(_view_numbers)}_{key[:12]}"
            self._read_remote(remote).createOrReplaceTempView(view)
            self._remote_views[key] = view
        return self._remote_views[key]

    def _read_remote(self, remote: RemoteScan) -> DataFrame:
        from cbo.engines.spark import jdbc_reader

        # Spark would push the filters it infers (IS NOT NULL on join keys) into the remote query;
        # off, the database receives exactly the query cbo built and EXPLAIN shows.
        source = self.catalog.sources[remote.source]
        reader = jdbc_reader(self.spark, source).option("pushDownPredicate", "false")
        # the source's options for a pushed query (a fetch size; the result's types)
        reader = reader.options(**connector_of(source).query_options(remote.whole_result, remote.columns))
        if remote.partition_column and remote.bounds:
            # Spark reads "(<sql>) cbo_remote" once per range of the column (cbo.exec.remote_partitions
            # says why that is the same answer); an int's upper bound is exclusive there.
            lower, upper = remote.bounds
            upper = upper + 1 if isinstance(upper, int) else upper
            reader = (reader.option("dbtable", f"({remote.sql}) cbo_remote")
                      .option("partitionColumn", remote.partition_column)
                      .option("lowerBound", str(lower)).option("upperBound", str(upper))
                      .option("numPartitions", str(remote.partitions or self.partitions)))
        else:
            reader = reader.option("query", remote.sql)
        return reader.load()


class SparkPlanSql(SqlRenderer):
    """Renders a plan for Spark to run as planned: join hints, explicit semi/anti joins, mark
    joins as a grouped left join, tables and remote queries through ``SparkViews``."""

    def __init__(self, views: SparkViews, operators: dict[int, PhysicalPlan] | None = None,
                 persisted: list[DataFrame] | None = None):
        # The physical operator running each logical node, by the node's identity (two equal
        # joins of a self-join may run differently): its algorithm gives the join hint, or says
        # that a join runs as a scalar subquery.
        super().__init__("spark", self._table)
        self.views = views
        self.operators = operators or {}
        self._pushed: dict[Plan, RemoteScan] = {}
        # the frames of the CTEs computed once, persisted while this statement was built
        self.persisted = persisted if persisted is not None else []
        self._cte_views: dict[int, str] = {}

    def statement_ast(self, plan: Plan, names: tuple[str, ...] | None = None) -> exp.Select:
        # The subtrees that run as remote queries, decided once for the whole plan by the
        # function EXPLAIN reads too.
        self._pushed = self.views.remote.pushed(plan, self.operators)
        names = names or tuple(c.name for c in plan.output)
        node, project = plan, None
        if isinstance(node, Project) and node not in self._pushed:
            project, node = node, node.input
        remote = self._pushed.get(node)
        if remote is None:
            select = super().statement_ast(plan, names)
            if isinstance(node, Sort) and self._small_remote_read(node.input):
                # A global sort range-partitions its input, and the range bounds come from a
                # sampling job over that input: over a remote read, a second run of the remote
                # query (a sorted result of one pushed query made PostgreSQL run it twice). A result
                # read whole is small (RemoteScan.whole_result): gathered into its one partition
                # without a shuffle, it is sorted there and read once.
                select.set("hint", exp.Hint(expressions=[exp.Anonymous(this="COALESCE",
                                                                       expressions=[exp.Literal.number(1)])]))
            return select
        # The query's top runs in the source: read its rows, named (and projected) as the
        # answer, and order them again (the source's top-N order does not survive the read;
        # at most its k rows are sorted).
        view = exp.Table(this=exp.to_identifier(self.views.remote_view(remote), quoted=True))
        if project is not None:
            columns = [self._alias(self.expr(e), name) for (_, e), name in zip(project.assignments, names)]
        else:
            columns = [self._alias(exp.column(ident(c)), name) for c, name in zip(plan.output, names)]
        select = exp.select(*columns).from_(view)
        if isinstance(node, Limit) and isinstance(node.input, Sort):
            # with its LIMIT Spark sorts the k rows in one task (no range shuffle)
            select = select.order_by(*[self._ordered(k) for k in node.input.keys])
            if node.count is not None:
                select = select.limit(node.count)
        return select

    def _small_remote_read(self, node: Plan) -> bool:
        """Whether ``node`` (through projections) is a remote query read whole, in one fetch."""
        while node not in self._pushed and isinstance(node, Project):
            node = node.input
        remote = self._pushed.get(node)
        return remote is not None and remote.whole_result and not remote.partition_column

    def _table(self, scan: Scan) -> exp.Expr:
        return exp.Table(this=exp.to_identifier(self.views.table(scan.table), quoted=True))

    def query(self, plan: Plan) -> exp.Query:
        remote = self._pushed.get(plan)
        if remote is not None:
            view = self.views.remote_view(remote)
            return exp.select(*self._columns(plan.output)).from_(exp.Table(this=exp.to_identifier(view, quoted=True)))
        return super().query(plan)

    def _algorithm(self, node: Plan) -> Algorithm | None:
        operator = self.operators.get(id(node))
        return operator.algorithm if operator is not None and operator.logical is node else None

    def _Join(self, node: Join) -> exp.Query:
        if self._algorithm(node) is Algorithm.SCALAR_SUBQUERY:
            return self._scalar_subquery(node)
        if node.kind == "mark":
            return self._mark_join(node)
        if node.kind == "null_aware_anti":
            # NOT IN (subquery): Spark plans it as its null-aware BroadcastHashJoin LeftAnti;
            # a LEFT ANTI JOIN on x = y would drop NOT IN's NULL semantics.
            return _select(self._columns(node.output), self._derived(node.left)).where(self.not_in(node))
        if node.kind not in ("semi", "anti"):
            select = super()._Join(node)
            assert isinstance(select, exp.Select)
            return self._hinted(select, node, select.args["joins"][-1].this)
        left, right = self._derived(node.left), self._derived(node.right)
        select = _select(self._columns(node.output), left)
        select.append("joins", exp.Join(this=right, on=self.expr(node.condition), side="LEFT",
                                        kind=node.kind.upper()))
        return self._hinted(select, node, right)

    def _GroupingSets(self, node: GroupingSets) -> exp.Query:
        operator = self.operators.get(id(node))
        if operator is None or operator.logical is not node or operator.algorithm is not Algorithm.UNION_AGGREGATE:
            return super()._GroupingSets(node)
        # A union of aggregations reads its input once per set; Spark computes it once when
        # each read is the same exchange. Where cbo planned that exchange (an enforcer on the
        # input), a REPARTITION hint makes it; else the input ends in one already.
        shuffled = bool(operator.inputs) and operator.inputs[0].is_enforcer
        return self.grouping_sets_union(node, repartition=shuffled)

    def _hinted(self, select: exp.Select, node: Join, right: exp.Expr) -> exp.Select:
        algorithm = self._algorithm(node)
        hint = algorithm.spark_hint if algorithm is not None else None
        if hint:
            alias = right.args["alias"].this
            select.set("hint", exp.Hint(expressions=[exp.Anonymous(this=hint.upper(), expressions=[alias.copy()])]))
        return select

    def _mark_join(self, node: Join) -> exp.Select:
        keyed = keyed_mark(node)
        if keyed is not None:
            return self._hashed_mark(node, *keyed)
        return self._grouped_mark(node)

    def _hashed_mark(self, node: Join, keys: list[tuple[Column, Column]],
                     operand: Expr | None, value: Expr | None) -> exp.Select:
        """A mark join on key equalities, with an equality or no mark predicate (IN and EXISTS),
        as left joins on hash keys. EXISTS: the left rows joined with the right's distinct keys;
        one match at most per row, so the left rows stay as they are, and the mark is whether
        one matched. ``x IN (y ...)``: TRUE where the distinct (keys, y) hold the row's keys and
        x; else, among the right rows with the row's keys, FALSE where there are none, NULL where
        x is NULL or some y is, FALSE otherwise: SQL's three-valued IN, from a second left join
        with the rows and non-NULL values counted per key. (That second join reads the right
        input again: Spark reuses its exchange where the two reads are one plan.)"""
        assert node.mark is not None
        tag = node.mark.id
        matched = exp.to_identifier(f"_matched{tag}", quoted=True)
        right_keys = [exp.column(ident(r)) for _, r in keys]
        if operand is None and keys:
            # EXISTS in the select list, which Spark plans as an existence join: the left rows
            # probe the right's rows as they are, with no aggregation (and no shuffle) making
            # the right's keys distinct first. The hint inside the subquery names its input,
            # and Spark keeps it when it turns the subquery into that join.
            right = self._derived(node.right)
            probe = self._hinted(exp.select(exp.Literal.number(1)).from_(right)
                                 .where(self._key_condition(keys, None)), node, right)
            return exp.select(*self._columns(node.left.output),
                              exp.alias_(exp.Exists(this=probe), ident(node.mark))).from_(self._derived(node.left))
        if operand is None:
            distinct = exp.select(*right_keys, exp.alias_(exp.true(), matched.copy())).from_(self._derived(node.right))
            found = self._wrap(distinct.distinct())
            select = exp.select(*self._columns(node.left.output),
                                exp.alias_(exp.Not(this=exp.Is(this=exp.column(matched.copy()), expression=exp.Null())),
                                           ident(node.mark))).from_(self._derived(node.left))
            select.append("joins", exp.Join(this=found, on=self._key_condition(keys, None), side="LEFT"))
            return self._hinted(select, node, found)
        assert value is not None
        held = exp.to_identifier(f"_value{tag}", quoted=True)
        distinct = exp.select(*right_keys, exp.alias_(self.expr(value), held.copy()),
                              exp.alias_(exp.true(), matched.copy())).from_(self._derived(node.right)).distinct()
        found = self._wrap(distinct)
        counted_keys = [exp.to_identifier(f"_key{tag}_{i}", quoted=True) for i in range(len(keys))]
        rows, values = exp.to_identifier(f"_rows{tag}", quoted=True), exp.to_identifier(f"_values{tag}", quoted=True)
        per_key = exp.select(*[exp.alias_(exp.column(ident(r)), k.copy()) for (_, r), k in zip(keys, counted_keys)],
                             exp.alias_(exp.Count(this=exp.Star()), rows.copy()),
                             exp.alias_(exp.Count(this=exp.column(held.copy())), values.copy())) \
            .from_(self._wrap(distinct.copy()))
        if keys:
            per_key = per_key.group_by(*[exp.column(ident(r)) for _, r in keys])
        counted = self._wrap(per_key)
        x = self.expr(operand)
        null_bool = exp.Cast(this=exp.Null(), to=exp.DataType.build("boolean"))
        mark = exp.Case(ifs=[
            exp.If(this=exp.Not(this=exp.Is(this=exp.column(matched.copy()), expression=exp.Null())), true=exp.true()),
            exp.If(this=exp.or_(exp.Is(this=exp.column(rows.copy()), expression=exp.Null()),
                                exp.EQ(this=exp.column(rows.copy()), expression=exp.Literal.number(0))),
                   true=exp.false()),
            exp.If(this=exp.or_(exp.Is(this=exp.Paren(this=x.copy()), expression=exp.Null()),
                                exp.LT(this=exp.column(values.copy()), expression=exp.column(rows.copy()))),
                   true=null_bool)],
            default=exp.false())
        select = exp.select(*self._columns(node.left.output), exp.alias_(mark, ident(node.mark))) \
            .from_(self._derived(node.left))
        on_found = exp.and_(self._key_condition(keys, None), exp.EQ(this=x, expression=exp.column(held.copy())))
        select.append("joins", exp.Join(this=found, on=on_found, side="LEFT"))
        select.append("joins", exp.Join(this=counted, on=self._key_condition(keys, counted_keys), side="LEFT"))
        algorithm = self._algorithm(node)
        hint = algorithm.spark_hint if algorithm is not None else None
        if hint:
            select.set("hint", exp.Hint(expressions=[
                exp.Anonymous(this=hint.upper(), expressions=[found.args["alias"].this.copy(),
                                                              counted.args["alias"].this.copy()])]))
        return select

    @staticmethod
    def _key_condition(keys: list[tuple[Column, Column]], renamed: list[exp.Identifier] | None) -> exp.Expr:
        """The keys' equalities, each right key under its own name or ``renamed``; TRUE without
        keys."""
        parts: list[exp.Expr] = [
            exp.EQ(this=exp.column(ident(left)),
                   expression=exp.column(renamed[i].copy()) if renamed is not None else exp.column(ident(right)))
            for i, (left, right) in enumerate(keys)]
        return exp.and_(*parts) if parts else exp.true()

    def _grouped_mark(self, node: Join) -> exp.Select:
        """Any other mark join: the left rows numbered, left-joined with the right on the
        condition, and grouped back per row with the mark's three values ranked."""
        assert node.mark is not None and node.mark_predicate is not None
        row_id = exp.to_identifier(f"_row{node.mark.id}", quoted=True)
        matched = exp.to_identifier(f"_matched{node.mark.id}", quoted=True)
        tagged = exp.select(*self._columns(node.left.output),
                            exp.alias_(exp.Anonymous(this="monotonically_increasing_id"), row_id.copy())) \
            .from_(self._derived(node.left))
        marked = exp.select(*self._columns(node.right.output), exp.alias_(exp.true(), matched.copy())) \
            .from_(self._derived(node.right))
        left, right = self._wrap(tagged), self._wrap(marked)
        predicate = self.expr(node.mark_predicate)
        score = exp.Case(ifs=[exp.If(this=exp.Is(this=exp.column(matched.copy()), expression=exp.Null()),
                                     true=exp.Literal.number(0)),
                              exp.If(this=predicate, true=exp.Literal.number(2)),
                              exp.If(this=exp.Is(this=exp.Paren(this=predicate.copy()), expression=exp.Null()),
                                     true=exp.Literal.number(1))],
                         default=exp.Literal.number(0))
        outcome = exp.Max(this=score)
        mark = exp.Case(ifs=[exp.If(this=exp.EQ(this=outcome, expression=exp.Literal.number(2)), true=exp.true()),
                             exp.If(this=exp.EQ(this=outcome.copy(), expression=exp.Literal.number(1)),
                                    true=exp.Cast(this=exp.Null(), to=exp.DataType.build("boolean")))],
                        default=exp.false())
        columns = [exp.alias_(exp.Anonymous(this="first", expressions=[exp.column(ident(c))]), ident(c))
                   for c in node.left.output]
        select = exp.select(*columns, exp.alias_(mark, ident(node.mark))).from_(left)
        select.append("joins", exp.Join(this=right, on=self.expr(node.condition), side="LEFT"))
        select = select.group_by(exp.column(row_id.copy()))
        return self._hinted(select, node, right)

    def _scalar_subquery(self, node: Join) -> exp.Select:
        """The join with its one-row right input as that input's value: each of its columns a
        scalar subquery (Spark runs each once, and merges those over the same plan), added to
        the left input's rows, then the join condition as a filter (TRUE for a left join)."""
        values = [exp.alias_(exp.Subquery(this=exp.select(exp.column(ident(c))).from_(self._derived(node.right))),
                             ident(c)) for c in node.right.output]
        widened = exp.select(*self._columns(node.left.output), *values).from_(self._derived(node.left))
        select = _select(self._columns(node.output), self._wrap(widened))
        if node.kind == "inner":
            select = select.where(self.expr(node.condition))
        return select

    def _CteAnchor(self, node: CteAnchor) -> exp.Query:
        # The producer as a persisted view of its own statement, rendered with this plan's
        # strategies; the body reads it through its consumers.
        producer = SparkPlanSql(self.views, self.operators, self.persisted)
        producer._cte_views = self._cte_views   # a producer may read an earlier CTE
        names = tuple(ident(c).name for c in node.producer.output)
        view, frame = self.views.persisted(producer.statement(node.producer, names))
        self.persisted.append(frame)
        self._cte_views[node.cte] = view
        return exp.select(*self._columns(node.output)).from_(self._derived(node.body))

    def _CteConsumer(self, node: CteConsumer) -> exp.Query:
        view = self._cte_views.get(node.cte)
        if view is None:
            raise AssertionError(f"CTE {node.name} is read outside its anchor")
        renamed = [exp.alias_(exp.column(ident(src)), ident(dst))
                   for src, dst in zip(node.producer.output, node.columns)]
        return exp.select(*renamed).from_(exp.Table(this=exp.to_identifier(view, quoted=True)))

    def _wrap(self, query: exp.Query) -> exp.Subquery:
        return exp.Subquery(this=query, alias=self._next_alias())


def keyed_mark(node: Join) -> tuple[list[tuple[Column, Column]], Expr | None, Expr | None] | None:
    """A mark join's hash keys and IN operands, where it is one ``_hashed_mark`` renders: every
    conjunct of the condition equates a left column with a right one by ``=`` (its
    ``equi_keys``; a null-safe key keeps the grouped form), and the mark predicate is TRUE
    (EXISTS) or ``x = y`` with x over the left input and y over the right (IN). Returns (keys
    as (left, right), x, y), x and y None for EXISTS; None for any other mark join."""
    parts = conjuncts(node.condition)
    keys = list(node.equi_keys)
    if len(keys) != len(parts) or any(isinstance(c, Call) and c.name == "is_not_distinct_from" for c in parts):
        return None
    left = {c.id for c in node.left.output}
    right = {c.id for c in node.right.output}
    predicate = node.mark_predicate
    if predicate is None or predicate == TRUE:
        return keys, None, None
    if not (isinstance(predicate, Call) and predicate.name == "eq"):
        return None
    x, y = predicate.args
    x_columns, y_columns = {c.id for c in columns_of(x)}, {c.id for c in columns_of(y)}
    if x_columns <= right and y_columns <= left and x_columns and y_columns:
        x, y = y, x
        x_columns, y_columns = y_columns, x_columns
    if not (x_columns <= left and y_columns <= right) or can_raise(predicate):
        return None
    return keys, x, y


def _word(name: str) -> str:
    return re.sub(r"\W", "_", name)[:40]
