"""Plan to SQL: any subplan rendered through sqlglot's AST in a chosen dialect.

Every operator becomes one SELECT over its inputs as derived tables, and every column is
named after its identity (``"c12"``), so names never collide however the plan was rewritten.
Identifiers are quoted and literals escaped by sqlglot: no SQL is assembled from strings.
An inner join without a condition is a CROSS JOIN; semi and anti joins become [NOT] EXISTS, a
null-aware anti join NOT IN;
a mark join becomes a CASE over two EXISTS that yields TRUE, NULL or FALSE. The root's Sort,
Limit and final Project share one SELECT so the order of the answer is that of the outermost
query.

With ``share_repeated`` (a pushed query in PostgreSQL), an aggregation or an inner join whose
shape (``cbo.ir.shape``: equal up to column ids) appears more than once is computed once, as a
common table expression ``WITH w1 AS MATERIALIZED (...)`` that each occurrence reads with its
own column names (TPC-H Q15 names its view twice; inlined, the source would aggregate lineitem
twice; Q17's outer join of lineitem and part is also what its subquery aggregates, after
``cbo.memo.rules.table_copy``). Not a repeated table or filtered table: reading it again costs
about what reading the CTE would, and a CTE hides the table's indexes. Repeated joins are
shared only where ``shared_joins`` lists them (the remote cost decides, ``cbo.memo.rules.
jdbc_pushdown``: outside a CTE PostgreSQL runs without parallel workers, which a small join does
not pay for).

With ``flat_joins`` (pushed queries), a tree of inner joins, with the filters and pass-through
projections among them, is one ``SELECT ... FROM a, b, c WHERE ...`` over its other inputs
(``flat_inputs``), listed in the order ``order`` gives. The database flattens the nested form
itself, so the meaning is the same; the point is the order. PostgreSQL estimates a join with a
foreign key by the first matching foreign key in the order of the referencing tables in FROM, and
gives up on a key whose join condition an earlier key already took: TPC-H Q9 listed as cbo joined
it (part, partsupp, supplier, lineitem) lets partsupp -> part take l_partkey = ps_partkey before
lineitem -> partsupp, and the lineitem-partsupp join is estimated at 20 rows instead of 50,509
(319,404 real), which makes PostgreSQL pick nested loops. Nested derived tables keep the tree's
order, so the inputs must be one list to be reordered (``cbo.exec.remote``: referencing tables first).
MariaDB's flat join is listed in cbo's driving order, which ``SELECT STRAIGHT_JOIN`` makes it
keep (``cbo.exec.remote_join_order``: its optimizer misjudges filters it cannot estimate).

What differs between dialects beyond sqlglot's own rendering is a ``SqlDialect`` value: how LIKE
is written to mean cbo's LIKE, whether a CTE can be materialized, how ``any_value`` and a row id
are computed, and a hook for functions a dialect spells its own way. DuckDB's and Spark's are
here (cbo's engines); each source's is its connector's (``cbo.connectors``).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sqlglot import exp, transforms
from sqlglot.dialects.dialect import Dialect
from sqlglot.dialects.spark import Spark
from sqlglot.generators.spark import SparkGenerator

from cbo.ir import types as T
from cbo.ir.dispatch import UnsupportedOperator
from cbo.ir.expressions import (
    ROW_ID,
    TRUE,
    AggregateCall,
    Call,
    Column,
    ColumnRef,
    Constant,
    Expr,
    SpecialForm,
    WindowCall,
    columns_of,
)
from cbo.ir.intervals import IntervalValue
from cbo.ir.moments import is_moment
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
    SortKey,
    SubqueryExpr,
    Values,
    Window,
    walk,
)
from cbo.ir.shape import shape
from cbo.ir.windows import BoundKind, Frame, FrameBound
from cbo.ir.windows import is_aggregate as is_window_aggregate
from cbo.limits import on_deep_stack

TableRenderer = Callable[[Scan], exp.Expr]
# a flat inner join's inputs, and its conditions, to the inputs in the order to list them
InputOrder = Callable[[list[Plan], list[Expr]], list[Plan]]

BINARY = {"eq": exp.EQ, "neq": exp.NEQ, "lt": exp.LT, "lte": exp.LTE, "gt": exp.GT, "gte": exp.GTE,
          "add": exp.Add, "subtract": exp.Sub, "multiply": exp.Mul, "divide": exp.Div, "modulus": exp.Mod,
          "is_not_distinct_from": exp.NullSafeEQ}
UNARY_FUNCTIONS = {"upper": exp.Upper, "lower": exp.Lower, "length": exp.Length, "trim": exp.Trim, "abs": exp.Abs,
                   "sqrt": exp.Sqrt}
# Division and remainder, by their meaning (``cbo.frontend.division``); rendered by ``_division``.
DIVISIONS = ("divide", "int_divide", "float_divide", "modulus", "float_modulus")
NEEDS_PARENS = (exp.Binary, exp.Connector, exp.Not, exp.Between, exp.In, exp.Is, exp.Like, exp.Escape,
                exp.Neg)


class AddDays(Enum):
    """How a dialect adds a number of days to a date (a DATE in every dialect)."""

    PLUS = "plus"                    # date + integer (DuckDB, PostgreSQL)
    DATE_ADD = "date_add"            # date_add(date, days) (Spark)
    INTERVAL = "interval"            # DATE_ADD(date, INTERVAL days DAY) (MariaDB)


class LikeEscape(Enum):
    """How a dialect's LIKE is written so that only ``%`` and ``_`` are special (cbo's and
    DuckDB's meaning; a backslash is an ordinary character)."""

    PLAIN = "plain"                        # the dialect's LIKE has no escape character by default
    ESCAPE_OFF = "escape_off"              # it escapes with a backslash unless told ``ESCAPE ''``
    DOUBLE_BACKSLASH = "double_backslash"  # it escapes with a backslash, and that cannot be turned off


@dataclass(frozen=True)
class SqlDialect:
    """What rendering needs to know of a dialect beyond sqlglot's ``name`` for it.

    ``like``: how LIKE keeps cbo's meaning (``LikeEscape``). ``materialized_ctes``: a shared
    common table expression is written ``AS MATERIALIZED`` (computed once, PostgreSQL 12+).
    ``any_value_as_array``: ``any_value(x)`` as the first element of ``array_agg(x)`` (a
    dialect without ``any_value``). ``raise_error``: the function raising an error with a
    message. ``row_id``: a function numbering rows without a sort, else a window's
    ``row_number()``. ``add_days``: how a date plus days is written (``AddDays``).
    ``double_moments``: a variance or standard deviation of a non-double is computed over its
    argument cast to DOUBLE (PostgreSQL's of an integer or numeric is numeric).
    ``ieee_division``: ``/`` never raises, following IEEE 754 (a zero divisor gives Infinity or
    NaN), and ``%`` of doubles gives NaN (DuckDB); otherwise every zero divisor raises (Spark's
    ANSI mode, PostgreSQL). ``nulls_order``: ORDER BY takes NULLS FIRST / NULLS LAST (MariaDB's
    does not: it puts NULLs first in ascending order, last in descending). Subclasses override
    ``function`` for functions spelled their own way.
    """

    name: str
    like: LikeEscape = LikeEscape.PLAIN
    generator: type[Dialect] | None = None   # sqlglot's dialect writing the text, if not ``name``'s
    materialized_ctes: bool = False
    any_value_as_array: bool = False
    raise_error: str = "raise_error"
    row_id: str | None = None
    add_days: AddDays = AddDays.PLUS
    double_moments: bool = False
    ieee_division: bool = False
    nulls_order: bool = True

    def function(self, call: Call, args: list[exp.Expr]) -> exp.Expr | None:
        """The dialect's own rendering of ``call`` (its arguments rendered), or None for the
        common one."""
        return None

    @property
    def sqlglot(self) -> type[Dialect] | str:
        """What sqlglot writes this dialect's text with."""
        return self.generator or self.name


class SparkStatements(Spark):
    """sqlglot's Spark dialect without its rewrite of ``x > ANY(array)`` in every SELECT.

    That rewrite (``transforms.any_to_exists``) searches each SELECT's whole subtree, so a
    statement of derived tables nested one per operator, as cbo writes it, takes time quadratic
    in its depth: writing TPC-DS q14 for Spark took about 0.3 s, most of it there, inside the
    timed run of the query. cbo never writes ANY (a quantified comparison is a join by the time
    a plan is rendered), so the text is the same; the rest of the SELECT rewrites are kept."""

    class Generator(SparkGenerator):
        TRANSFORMS = {**SparkGenerator.TRANSFORMS,
                      exp.Select: transforms.preprocess([transforms.eliminate_qualify,
                                                         transforms.eliminate_distinct_on,
                                                         transforms.unnest_to_explode])}


DUCKDB = SqlDialect("duckdb", raise_error="error", ieee_division=True)
# Spark numbers rows per partition without a shuffle (monotonically_increasing_id).
SPARK = SqlDialect("spark", like=LikeEscape.DOUBLE_BACKSLASH, row_id="monotonically_increasing_id",
                   add_days=AddDays.DATE_ADD, generator=SparkStatements)
ENGINE_DIALECTS = {d.name: d for d in (DUCKDB, SPARK)}


def sql_dialect(dialect: SqlDialect | str) -> SqlDialect:
    """``dialect`` as a ``SqlDialect``: one of cbo's engines' by name (``duckdb``, ``spark``)."""
    if isinstance(dialect, SqlDialect):
        return dialect
    if dialect not in ENGINE_DIALECTS:
        raise ValueError(f"no SQL dialect {dialect!r} among the engines' ({', '.join(ENGINE_DIALECTS)}); "
                         "a source's dialect is its connector's (cbo.connectors)")
    return ENGINE_DIALECTS[dialect]


def name_of(column: Column) -> str:
    return f"c{column.id}"


def ident(column: Column) -> exp.Identifier:
    return exp.to_identifier(name_of(column), quoted=True)


def default_tables(scan: Scan) -> exp.Expr:
    """Tables named as in the catalog (the DuckDB and Spark views use these names)."""
    return exp.Table(this=exp.to_identifier(scan.table.split(".", 1)[-1], quoted=True))


class SqlRenderer:
    def __init__(self, dialect: SqlDialect | str = DUCKDB, tables: TableRenderer = default_tables,
                 share_repeated: bool = False, flat_joins: bool = False, order: InputOrder | None = None,
                 shared_joins: frozenset[Hashable] | None = None, grouping_sets_as_union: bool = False):
        self.sql_dialect = sql_dialect(dialect)
        self.dialect = self.sql_dialect.name   # sqlglot's name for it
        # every GroupingSets as a union of one aggregation per set (``grouping_sets_union``)
        self.grouping_sets_as_union = grouping_sets_as_union
        self.tables = tables
        self.flat_joins = flat_joins
        self.order = order
        self._aliases = 0
        self.share_repeated = share_repeated
        self.shared_joins = shared_joins   # the repeated joins computed once (None: all of them)
        self._repeated: set[Hashable] = set()          # shapes of the aggregations computed once
        self._shared: dict[Hashable, tuple[str, tuple[Column, ...]]] = {}   # shape -> (CTE, its columns)
        self.ctes: list[tuple[str, exp.Query]] = []     # in order of definition (a CTE reads earlier ones)

    # -- statements ------------------------------------------------------------------------------

    def statement(self, plan: Plan, names: tuple[str, ...] | None = None) -> str:
        """SQL for the whole plan, with output columns named ``names`` (default: column names)."""
        return self.statement_ast(plan, names).sql(dialect=self.sql_dialect.sqlglot, copy=False)

    def statement_ast(self, plan: Plan, names: tuple[str, ...] | None = None) -> exp.Select:
        names = names or tuple(c.name for c in plan.output)
        project: Project | None = None
        node = plan
        if isinstance(node, Project):
            project, node = node, node.input
        limit: Limit | None = None
        if isinstance(node, Limit):
            limit, node = node, node.input
        sort: Sort | None = None
        if isinstance(node, Sort):
            sort, node = node, node.input
        if sort is None and limit is None:
            node, project = plan, None
        source = self._derived(node)
        if project is not None:
            columns = [self._alias(self.expr(e), name) for (_, e), name in zip(project.assignments, names)]
        else:
            columns = [self._alias(exp.column(ident(c), copy=False), name) for c, name in zip(plan.output, names)]
        select = _select(columns, source)
        if sort is not None:
            ordered = [self._ordered(k) for k in sort.keys]
            # ORDER BY resolves a bare name to an output column first: where the answer's names
            # (the user's aliases) take an input column's name, the keys name their table.
            taken = set(names)
            if any(name_of(k.column) in taken for k in sort.keys):
                for o in ordered:
                    o.this.set("table", exp.to_identifier(source.alias))
            select = select.order_by(*ordered, copy=False)
        if limit is not None:
            select = self._apply_limit(select, limit)
        return select

    def _alias(self, value: exp.Expr, name: str) -> exp.Expr:
        return exp.alias_(value, exp.to_identifier(name, quoted=True), copy=False)

    def query(self, plan: Plan) -> exp.Query:
        """A query whose columns are named by column identity."""
        method = getattr(self, f"_{type(plan).__name__}", None)
        if method is None:
            raise UnsupportedOperator(f"SQL rendering has no handler for the operator {type(plan).__name__}")
        return method(plan)

    @classmethod
    def handles(cls, operator: type) -> bool:
        """Whether plans of ``operator`` render (one ``_Name`` method per operator)."""
        return callable(getattr(cls, f"_{operator.__name__}", None))

    def _derived(self, plan: Plan) -> exp.Expr:
        alias = self._next_alias()  # numbered before the inputs are
        if self._repeated and _shareable(plan):
            key = shape(plan)
            if key in self._repeated:
                return exp.Subquery(this=self._read_shared(plan, key), alias=alias)
        return exp.Subquery(this=self.query(plan), alias=alias)

    def _is_shared(self, plan: Plan) -> bool:
        return bool(self._repeated) and _shareable(plan) and shape(plan) in self._repeated

    # -- repeated aggregations, computed once ------------------------------------------------------

    def shared_query(self, plan: Plan) -> exp.Query:
        """``query(plan)``, each aggregation or inner join repeated in it read from a common table
        expression (``self.ctes``, for ``with_ctes``) when ``share_repeated`` is set."""
        if self.share_repeated:
            self._repeated = repeated_subtrees(plan, self.shared_joins)
        return self.query(plan)

    def with_ctes(self, select: exp.Select) -> exp.Select:
        """``select`` with the common table expressions its repeated aggregations read."""
        for name, body in self.ctes:
            select = select.with_(name, as_=body, materialized=self.sql_dialect.materialized_ctes or None)
        return select

    def _read_shared(self, plan: Plan, key: Hashable) -> exp.Query:
        found = self._shared.get(key)
        if found is None:
            body = self.query(plan)   # may define the CTEs it reads itself first
            found = self._shared[key] = (f"w{len(self._shared) + 1}", plan.output)
            self.ctes.append((found[0], body))
        name, columns = found
        # equal shapes: the same columns in the same order of output
        renamed = [exp.alias_(exp.column(ident(src)), ident(dst)) for src, dst in zip(columns, plan.output)]
        return exp.select(*renamed).from_(exp.Table(this=exp.to_identifier(name)))

    def _next_alias(self, columns: list[exp.Identifier] | None = None) -> exp.TableAlias:
        self._aliases += 1
        return exp.TableAlias(this=exp.to_identifier(f"t{self._aliases}"), columns=columns)

    def _columns(self, columns: tuple[Column, ...]) -> list[exp.Expr]:
        return [exp.column(ident(c), copy=False) for c in columns]

    # -- operators ---------------------------------------------------------------------------------

    def _Scan(self, scan: Scan) -> exp.Query:
        columns = [exp.alias_(exp.column(exp.to_identifier(name, quoted=True), copy=False), ident(c), copy=False)
                   for c, name in zip(scan.columns, scan.column_names)]
        return _select(columns, self.tables(scan))

    def _Filter(self, node: Filter) -> exp.Query:
        if self.flat_joins and _joins_below(node):
            return self._flat(node)
        return _select(self._columns(node.output), self._derived(node.input)) \
            .where(self.expr(node.predicate), copy=False)

    def _Project(self, node: Project) -> exp.Query:
        if self.flat_joins and _passes_through(node) and _joins_below(node):
            return self._flat(node)
        columns = [exp.alias_(self.expr(e), ident(c), copy=False) for c, e in node.assignments]
        if not columns:
            columns = [exp.alias_(exp.Literal.number(1), "_empty", copy=False)]
        return _select(columns, self._derived(node.input))

    def _Join(self, node: Join) -> exp.Query:
        if self.flat_joins and node.kind == "inner":
            return self._flat(node)
        left = self._derived(node.left)
        if node.kind == "null_aware_anti":
            return _select(self._columns(node.output), left).where(self.not_in(node), copy=False)
        if node.kind in ("semi", "anti", "mark"):
            right = self._derived(node.right)

            def exists(extra: exp.Expr | None = None) -> exp.Expr:
                condition = self.expr(node.condition)
                if extra is not None:
                    condition = exp.and_(_paren(condition), _paren(extra), copy=False)
                return exp.Exists(this=_select([exp.Literal.number(1)], right.copy()).where(condition, copy=False))

            if node.kind == "semi":
                return _select(self._columns(node.output), left).where(exists(), copy=False)
            if node.kind == "anti":
                return _select(self._columns(node.output), left).where(exp.Not(this=exists()), copy=False)
            assert node.mark is not None and node.mark_predicate is not None
            predicate = self.expr(node.mark_predicate)
            if isinstance(predicate, exp.Boolean) and predicate.this:
                mark = exp.Case(ifs=[exp.If(this=exists(), true=exp.true())], default=exp.false())
            else:
                mark = exp.Case(ifs=[exp.If(this=exists(predicate), true=exp.true()),
                                     exp.If(this=exists(exp.Is(this=_paren(predicate.copy()), expression=exp.Null())),
                                            true=exp.Null())],
                                default=exp.false())
            columns = self._columns(node.left.output) + [exp.alias_(mark, ident(node.mark), copy=False)]
            return _select(columns, left)
        right = self._derived(node.right)
        if node.kind == "inner" and node.condition == TRUE:
            join = exp.Join(this=right, kind="CROSS")
        else:
            side = {"inner": None, "left": "LEFT", "right": "RIGHT", "full": "FULL"}[node.kind]
            join = exp.Join(this=right, on=self.expr(node.condition), side=side)
        select = _select(self._columns(node.output), left)
        select.append("joins", join)
        return select

    def _flat(self, node: Plan) -> exp.Query:
        """An inner-join tree as one SELECT over a comma-separated FROM list, every join
        condition and filter in WHERE (in the tree's order, bottom up)."""
        # A repeated join below is one input: it is read from its CTE.
        inputs, conditions = flat_inputs(node, self._is_shared if self._repeated else None)
        if self.order is not None:
            inputs = self.order(inputs, conditions)
        derived = [self._derived(i) for i in inputs]
        select = _select(self._columns(node.output), derived[0])
        for other in derived[1:]:
            select.append("joins", exp.Join(this=other))
        if conditions:
            select = select.where(exp.and_(*[_paren(self.expr(c)) for c in conditions]) if len(conditions) > 1
                                  else self.expr(conditions[0]))
        return select

    def not_in(self, node: Join) -> exp.Expr:
        """A null-aware anti join's filter: ``x NOT IN (SELECT y FROM right)``, which every
        engine evaluates with NOT IN's NULL semantics (the join's own)."""
        x, y = null_aware_key(node)
        subquery = _select([self.expr(y)], self._derived(node.right))
        return exp.Not(this=exp.In(this=_paren(self.expr(x)), query=exp.Subquery(this=subquery)))

    def _Aggregate(self, node: Aggregate) -> exp.Query:
        columns = self._columns(node.group_by) + [exp.alias_(self.aggregate(a), ident(c), copy=False)
                                                  for c, a in node.aggregates]
        if not columns:  # a global aggregation of nothing still has its one row
            columns = [exp.alias_(exp.Count(this=exp.Star()), "_empty", copy=False)]
        select = _select(columns, self._derived(node.input))
        if node.group_by:
            select = select.group_by(*self._columns(node.group_by), copy=False)
        return select

    def _GroupingSets(self, node: GroupingSets) -> exp.Query:
        """``GROUP BY GROUPING SETS (...)``, each output a key read in the grouped SELECT (NULL
        in the rows of sets without it) and each GROUPING column the dialect's GROUPING of the
        keys it lists (Spark's ``grouping_id``: its ``grouping`` takes one argument)."""
        if self.grouping_sets_as_union:
            return self.grouping_sets_union(node)
        if self.dialect == "spark" and any(not s for s in node.sets):
            return self._spark_grouping_sets(node)
        columns = self._grouping_set_columns(node, self._aggregate_calls(node.aggregates))
        select = _select(columns, self._derived(node.input))
        return select.group_by(self._grouping_sets_clause(node), copy=False)

    def _grouping_set_columns(self, node: GroupingSets, aggregates: list[exp.Expr]) -> list[exp.Expr]:
        return ([exp.alias_(exp.column(ident(k)), ident(o), copy=False) for k, o in zip(node.keys, node.outputs)]
                + [exp.alias_(a, ident(c), copy=False) for a, (c, _) in zip(aggregates, node.aggregates)]
                + [exp.alias_(self._grouping([node.keys[i] for i in positions]), ident(c), copy=False)
                   for c, positions in node.groupings])

    def _aggregate_calls(self, aggregates: tuple[tuple[Column, AggregateCall], ...]) -> list[exp.Expr]:
        return [self.aggregate(a) for _, a in aggregates]

    def _grouping_sets_clause(self, node: GroupingSets) -> exp.Expr:
        return exp.GroupingSets(expressions=[exp.Tuple(expressions=self._columns(tuple(node.keys[i] for i in s)))
                                             for s in node.sets])

    def _grouping(self, keys: list[Column]) -> exp.Expr:
        """SQL's GROUPING of ``keys`` as a BIGINT. Spark's ``grouping`` takes one column and its
        ``grouping_id`` all of them: there the bits are added up, one ``grouping`` each."""
        if self.dialect != "spark":
            return exp.Cast(this=exp.Grouping(expressions=self._columns(tuple(keys))), to=T.BIGINT.to_sqlglot())
        total: exp.Expr | None = None
        for index, key in enumerate(keys):
            bit: exp.Expr = exp.Cast(this=exp.Anonymous(this="grouping", expressions=[exp.column(ident(key))]),
                                           to=T.BIGINT.to_sqlglot())
            weight = 2 ** (len(keys) - 1 - index)
            if weight > 1:
                bit = exp.Mul(this=bit, expression=exp.Literal.number(weight))
            total = bit if total is None else exp.Add(this=total, expression=bit)
        assert total is not None
        return total

    def _spark_grouping_sets(self, node: GroupingSets) -> exp.Query:
        """Grouping sets with an empty set, for Spark: Spark runs grouping sets as an Expand
        (one copy of each row per set) and an aggregation grouped by the keys and the set's
        number, so over no input it yields no row at all, where SQL (and DuckDB and PostgreSQL)
        give the empty set's one row. One all-NULL row is added to the input, marked by a NULL
        ``_present``: it is in no group's aggregates (every aggregate skips NULLs; ``count(*)``
        counts ``_present``; ``any_value`` skips NULLs), and the groups it alone makes are
        dropped, but for the empty set's, which then stands for the empty input."""
        present = exp.to_identifier("_present", quoted=True)
        inputs = node.input.output
        real = _select(self._columns(inputs) + [exp.alias_(exp.true(), present.copy(), copy=False)],
                       self._derived(node.input))
        marker = exp.select(*[exp.alias_(exp.Cast(this=exp.Null(), to=c.type.to_sqlglot()), ident(c), copy=False)
                              for c in inputs],
                            exp.alias_(exp.Cast(this=exp.Null(), to=T.BOOLEAN.to_sqlglot()), present.copy()))
        marked = exp.Subquery(this=exp.Union(this=real, expression=marker, distinct=False), alias=self._next_alias())
        aggregates: list[exp.Expr] = []
        for _, call in node.aggregates:
            if call.name == "count_star":
                aggregates.append(exp.Count(this=exp.column(present.copy())))
            elif call.name == "any_value":
                aggregates.append(exp.Anonymous(this="any_value", expressions=[self.expr(call.args[0]), exp.true()]))
            else:
                aggregates.append(self.aggregate(call))
        count, rolled = exp.to_identifier("_rows", quoted=True), exp.to_identifier("_rolled", quoted=True)
        extra = [exp.alias_(exp.Count(this=exp.column(present.copy())), count.copy(), copy=False)]
        if node.keys:
            extra.append(exp.alias_(self._grouping(list(node.keys)), rolled.copy(), copy=False))
        grouped = _select(self._grouping_set_columns(node, aggregates) + extra, marked)
        grouped = grouped.group_by(self._grouping_sets_clause(node), copy=False)
        result = _select(self._columns(node.output), exp.Subquery(this=grouped, alias=self._next_alias()))
        if not node.keys:
            return result   # every set is the empty one: each keeps its row
        everything = exp.Literal.number(2 ** len(node.keys) - 1)
        kept = exp.or_(exp.GT(this=exp.column(count), expression=exp.Literal.number(0)),
                       exp.EQ(this=exp.column(rolled), expression=everything))
        return result.where(kept, copy=False)

    def grouping_sets_union(self, node: GroupingSets, repartition: bool = False) -> exp.Query:
        """The grouping sets as a union of aggregations of the input, one per set (UNION ALL),
        each with the keys it rolls up as NULL and its GROUPING values as constants; the empty
        set's a scalar aggregation (one row, even over no input). The input is written once per
        set: Spark computes the same exchange once (its ``ReuseExchange``); ``repartition``
        (Spark) hash-partitions it on every key first (a ``REPARTITION`` hint), an exchange
        each branch reads."""
        branches: list[exp.Query] = []
        aggregates = self._aggregate_calls(node.aggregates)
        for grouping_set in node.sets:
            columns = [exp.alias_(exp.column(ident(k)) if i in grouping_set
                                  else exp.Cast(this=exp.Null(), to=k.type.to_sqlglot()), ident(o), copy=False)
                       for i, (k, o) in enumerate(zip(node.keys, node.outputs))]
            columns += [exp.alias_(a.copy(), ident(c), copy=False) for a, (c, _) in zip(aggregates, node.aggregates)]
            columns += [exp.alias_(exp.Cast(this=exp.Literal.number(node.grouping_value(positions, grouping_set)),
                                            to=T.BIGINT.to_sqlglot()), ident(c), copy=False)
                        for c, positions in node.groupings]
            source = self._derived(node.input)
            if repartition:
                hint = exp.Hint(expressions=[exp.Anonymous(this="REPARTITION", expressions=self._columns(node.keys))])
                shuffled = _select(self._columns(node.input.output), source)
                shuffled.set("hint", hint)
                source = exp.Subquery(this=shuffled, alias=self._next_alias())
            if not grouping_set and not node.aggregates:
                # a scalar aggregation of nothing still has its one row
                source = exp.Subquery(this=_select([exp.alias_(exp.Count(this=exp.Star()), "_rows", copy=False)],
                                                   source), alias=self._next_alias())
            select = _select(columns, source)
            if grouping_set:
                select = select.group_by(*self._columns(tuple(node.keys[i] for i in grouping_set)), copy=False)
            branches.append(select)
        combined = branches[0]
        for branch in branches[1:]:
            combined = exp.Union(this=combined, expression=branch, distinct=False)
        return _select(self._columns(node.output), exp.Subquery(this=combined, alias=self._next_alias()))

    def _Sort(self, node: Sort) -> exp.Query:
        return _select(self._columns(node.output), self._derived(node.input)) \
            .order_by(*[self._ordered(k) for k in node.keys], copy=False)

    def _ordered(self, key: SortKey) -> exp.Ordered:
        return exp.Ordered(this=exp.column(ident(key.column)), desc=not key.ascending, nulls_first=key.nulls_first)

    def _Limit(self, node: Limit) -> exp.Query:
        if isinstance(node.input, Sort):
            inner = node.input
            select = _select(self._columns(node.output), self._derived(inner.input)) \
                .order_by(*[self._ordered(k) for k in inner.keys], copy=False)
        else:
            select = _select(self._columns(node.output), self._derived(node.input))
        return self._apply_limit(select, node)

    def _apply_limit(self, select: exp.Select, node: Limit) -> exp.Select:
        if node.count is not None:
            select = select.limit(node.count, copy=False)
        if node.offset:
            select = select.offset(node.offset, copy=False)
        return select

    def _Window(self, node: Window) -> exp.Query:
        """``SELECT <input columns>, f(...) OVER (PARTITION BY ... ORDER BY ... frame) ...`` over
        the input: each order key with its NULL order spelled out, so every engine orders NULLs
        as the query's dialect did (Spark puts them first in ascending order, DuckDB and
        PostgreSQL last)."""
        partition = self._columns(node.partition_by)
        order = self._window_order(node.order_by)
        columns = self._columns(node.input.output)
        for column, call in node.functions:
            window = exp.Window(this=self.window_function(call), partition_by=[p.copy() for p in partition] or None,
                                order=exp.Order(expressions=[o.copy() for o in order]) if order else None,
                                spec=self._frame(call.frame, bool(node.order_by)), over="OVER")
            if not order and self.dialect == "spark" and call.frame is None:
                # Spark refuses a ranking or offset function over an unordered window; with
                # every row a peer of every other, ordering by a constant is the same window.
                window.set("order", exp.Order(expressions=[exp.Ordered(this=exp.Literal.number(0))]))
            columns.append(exp.alias_(window, ident(column), copy=False))
        return _select(columns, self._derived(node.input))

    def _window_order(self, keys: tuple[SortKey, ...]) -> list[exp.Expr]:
        """A window's order keys. Where ORDER BY takes no NULLS FIRST/LAST (MariaDB: NULLs
        first in ascending order, last in descending), a key whose NULL order differs is
        preceded by ``x IS NULL`` in the direction that puts them where they belong (peers stay
        peers)."""
        found: list[exp.Expr] = []
        for key in keys:
            if not self.sql_dialect.nulls_order:
                if key.nulls_first != key.ascending:
                    found.append(exp.Ordered(this=exp.Is(this=exp.column(ident(key.column)), expression=exp.Null()),
                                             desc=key.nulls_first, nulls_first=not key.nulls_first))
                # (written as MariaDB orders: nothing for sqlglot to translate)
                found.append(exp.Ordered(this=exp.column(ident(key.column)), desc=not key.ascending,
                                         nulls_first=key.ascending))
            else:
                found.append(self._ordered(key))
        return found

    def _frame(self, frame: Frame | None, ordered: bool) -> exp.WindowSpec | None:
        if frame is None or (frame.whole_partition and not ordered):
            return None   # the whole partition: every engine's frame without ORDER BY

        def bound(b: FrameBound) -> tuple[object, str | None]:
            if b.kind is BoundKind.CURRENT_ROW:
                return "CURRENT ROW", None
            side = "PRECEDING" if b.kind in (BoundKind.UNBOUNDED_PRECEDING, BoundKind.PRECEDING) else "FOLLOWING"
            if b.offset is None:
                return "UNBOUNDED", side
            return exp.Literal.number(str(b.offset)), side

        start, start_side = bound(frame.start)
        end, end_side = bound(frame.end)
        return exp.WindowSpec(kind=frame.unit.value, start=start, start_side=start_side, end=end, end_side=end_side)

    def window_function(self, call: WindowCall) -> exp.Expr:
        args = [_paren(self.expr(a)) for a in call.args]
        simple = {"row_number": exp.RowNumber, "rank": exp.Rank, "dense_rank": exp.DenseRank,
                  "percent_rank": exp.PercentRank, "cume_dist": exp.CumeDist}
        if call.name in simple:
            return simple[call.name]()
        if call.name == "ntile":
            return exp.Ntile(this=args[0])
        if call.name in ("lag", "lead"):
            builder = exp.Lag if call.name == "lag" else exp.Lead
            return builder(this=args[0], offset=args[1], default=args[2])
        if call.name in ("first_value", "last_value"):
            return (exp.FirstValue if call.name == "first_value" else exp.LastValue)(this=args[0])
        if is_window_aggregate(call.name):
            return self.aggregate(AggregateCall(call.name, call.args, False, call.type))
        raise AssertionError(f"no SQL for window function {call.name}")

    def _SetOp(self, node: SetOp) -> exp.Query:
        branches = []
        for child, columns in zip(node.inputs, node.inputs_columns):
            renamed = [exp.alias_(exp.column(ident(src)), ident(dst), copy=False)
                       for src, dst in zip(columns, node.columns)]
            branches.append(_select(renamed, self._derived(child)))
        builder = {"union": exp.Union, "intersect": exp.Intersect, "except": exp.Except}[node.kind]
        combined = builder(this=branches[0], expression=branches[1], distinct=node.distinct)
        return _select(self._columns(node.output), exp.Subquery(this=combined, alias=self._next_alias()))

    def _CteAnchor(self, node: CteAnchor) -> exp.Query:
        # The producer as a common table expression the body's consumers read; materialized
        # where the dialect says so (PostgreSQL would otherwise inline it again).
        producer = self.query(node.producer)
        select = _select(self._columns(node.output), self._derived(node.body))
        return select.with_(cte_name(node.cte), as_=producer, materialized=self.sql_dialect.materialized_ctes or None,
                            copy=False)

    def _CteConsumer(self, node: CteConsumer) -> exp.Query:
        renamed = [exp.alias_(exp.column(ident(src)), ident(dst), copy=False)
                   for src, dst in zip(node.producer.output, node.columns)]
        return _select(renamed, exp.Table(this=exp.to_identifier(cte_name(node.cte))))

    def _Values(self, node: Values) -> exp.Query:
        if not node.columns:
            return exp.select(exp.alias_(exp.Literal.number(1), "_empty", copy=False), copy=False)
        rows = [exp.Tuple(expressions=[self._typed(v, c.type) for v, c in zip(row, node.columns)]) for row in node.rows]
        alias = self._next_alias([ident(c) for c in node.columns])
        return _select(self._columns(node.columns), exp.Values(expressions=rows, alias=alias))

    def _typed(self, value: Expr, type_: T.DataType) -> exp.Expr:
        rendered = self.expr(value)
        if value.type != type_:
            return exp.Cast(this=rendered, to=type_.to_sqlglot())
        return rendered

    # -- expressions ---------------------------------------------------------------------------------

    def expr(self, e: Expr) -> exp.Expr:
        if isinstance(e, ColumnRef):
            return exp.column(ident(e.column), copy=False)
        if isinstance(e, Constant):
            return self.constant(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, SpecialForm):
            return self.special(e)
        if isinstance(e, AggregateCall):
            return self.aggregate(e)
        if isinstance(e, SubqueryExpr):
            raise AssertionError("subquery expressions are removed by decorrelation before SQL generation")
        raise AssertionError(f"cannot render {e!r}")

    def constant(self, c: Constant) -> exp.Expr:
        value = c.value
        if value is None:
            return exp.Null() if c.type in (T.NULL, T.INTERVAL) else exp.Cast(this=exp.Null(), to=c.type.to_sqlglot())
        if isinstance(value, bool):
            return exp.Boolean(this=value)
        if isinstance(value, IntervalValue):
            return _interval(value)
        if isinstance(value, dt.datetime):
            return exp.Cast(this=exp.Literal.string(value.isoformat(sep=" ")), to=T.TIMESTAMP.to_sqlglot())
        if isinstance(value, dt.date):
            return exp.Cast(this=exp.Literal.string(value.isoformat()), to=T.DATE.to_sqlglot())
        literal: exp.Expr
        if isinstance(value, (int, decimal.Decimal)):
            literal = exp.Literal.number(str(value))
            return exp.Neg(this=exp.Literal.number(str(-value))) if value < 0 else literal
        if isinstance(value, float):
            literal = exp.Cast(this=exp.Literal.number(repr(abs(value))), to=T.DOUBLE.to_sqlglot())
            return exp.Neg(this=literal) if value < 0 else literal
        return exp.Literal.string(str(value))

    def _like(self, value: exp.Expr, pattern: exp.Expr) -> exp.Expr:
        """``value LIKE pattern`` as the dialect reads it with cbo's (and DuckDB's) meaning: only
        ``%`` and ``_`` are special, a backslash is an ordinary character.

        PostgreSQL's LIKE escapes with a backslash by default (``'back\\slash' LIKE
        'back\\slash'`` is false there); ``ESCAPE ''`` turns escaping off. Spark's LIKE escapes
        with a backslash too and rejects one before an ordinary character
        (``INVALID_FORMAT.ESC_IN_THE_MIDDLE``); MariaDB's treats it as an escape, and ``ESCAPE
        ''`` does not turn that off. For those two every backslash is doubled (a doubled
        backslash matches one): in the literal itself, or by REPLACE around a computed pattern.
        """
        like = self.sql_dialect.like
        if like is LikeEscape.ESCAPE_OFF:
            return exp.Escape(this=exp.Like(this=value, expression=pattern), expression=exp.Literal.string(""))
        if like is LikeEscape.PLAIN:
            return exp.Like(this=value, expression=pattern)
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            doubled: exp.Expr = exp.Literal.string(pattern.this.replace("\\", "\\\\"))
        else:
            doubled = exp.Anonymous(this="REPLACE", expressions=[pattern, exp.Literal.string("\\"),
                                                                  exp.Literal.string("\\\\")])
        return exp.Like(this=value, expression=doubled)

    def call(self, c: Call) -> exp.Expr:
        args = [_paren(self.expr(a)) for a in c.args]
        own = self.sql_dialect.function(c, args)
        if own is not None:
            return own
        if c.name in DIVISIONS:
            return self._division(c, args[0], args[1])
        if c.name in BINARY:
            return BINARY[c.name](this=args[0], expression=args[1])
        if c.name == "negate":
            return exp.Neg(this=args[0])
        if c.name == "like":
            return self._like(args[0], args[1])
        if c.name == "substring":
            return exp.Substring(this=args[0], start=args[1], length=args[2] if len(args) > 2 else None)
        if c.name in UNARY_FUNCTIONS:
            return UNARY_FUNCTIONS[c.name](this=args[0])
        if c.name == "round":
            return exp.Round(this=args[0], decimals=args[1])
        if c.name == "concat":
            result = args[0]
            for arg in args[1:]:
                result = exp.DPipe(this=result, expression=arg, safe=True)
            return result
        if c.name.startswith("extract_"):
            return exp.Extract(this=exp.var(c.name.split("_", 1)[1].upper()), expression=args[0])
        if c.name == "add_days":
            return self._add_days(args[0], args[1], c.args[1].type)
        if c.name in ("date_add", "date_sub"):
            interval = c.args[1]
            assert isinstance(interval, Constant) and isinstance(interval.value, IntervalValue)
            value = interval.value if c.name == "date_add" else interval.value.negated()
            return exp.Add(this=args[0], expression=_interval(value))
        if c.name == ROW_ID:
            # Spark numbers rows per partition without a shuffle; a window over no order is
            # the portable form (one sort-free pass in DuckDB and PostgreSQL).
            if self.sql_dialect.row_id is not None:
                return exp.Anonymous(this=self.sql_dialect.row_id)
            return exp.Window(this=exp.RowNumber())
        if c.name == "raise_error":
            return exp.Anonymous(this=self.sql_dialect.raise_error, expressions=args)
        raise AssertionError(f"no SQL for function {c.name}")

    def _division(self, c: Call, a: exp.Expr, b: exp.Expr) -> exp.Expr:
        """``/`` and ``%`` with the meaning ``cbo.frontend.division`` gives each IR function, on
        DuckDB (whose ``/`` never raises and whose ``%`` of doubles gives NaN) and on Spark
        (whose ANSI mode raises on every zero divisor). A divisor that is a non-zero constant
        needs no guard."""
        divisor = c.args[1]
        guarded = not (isinstance(divisor, Constant) and divisor.value not in (None, 0))
        operator = exp.Div if c.name in ("divide", "float_divide") else exp.Mod
        if c.name == "int_divide":
            return exp.IntDiv(this=a, expression=b)   # DuckDB //, Spark DIV: truncated, raising on zero
        if c.name in ("divide", "modulus"):
            doubles = T.DOUBLE in (c.args[0].type, divisor.type)
            if self.sql_dialect.ieee_division and guarded and (c.name == "divide" or doubles):
                error = exp.Anonymous(this=self.sql_dialect.raise_error,
                                      expressions=[exp.Literal.string("division by zero")])
                b = exp.Case(ifs=[exp.If(this=exp.EQ(this=b, expression=exp.Literal.number(0)), true=error)],
                             default=b.copy())
            return operator(this=a, expression=b)
        # IEEE 754 in doubles: x / 0 is x * Infinity (+Inf, -Inf, or NaN for 0 and NaN), x % 0 NaN
        a = exp.Cast(this=a, to=T.DOUBLE.to_sqlglot())
        if self.sql_dialect.ieee_division or not guarded:
            return operator(this=a, expression=b)
        special = "Infinity" if operator is exp.Div else "NaN"
        zero = exp.Mul(this=a.copy(), expression=exp.Cast(this=exp.Literal.string(special), to=T.DOUBLE.to_sqlglot()))
        return exp.Case(ifs=[exp.If(this=exp.EQ(this=b, expression=exp.Literal.number(0)), true=zero)],
                        default=operator(this=a, expression=b.copy()))

    def _add_days(self, date: exp.Expr, days: exp.Expr, days_type: T.DataType) -> exp.Expr:
        """A date plus a number of days, a DATE in every dialect."""
        if days_type != T.INTEGER:   # Spark's date_add and DuckDB's and PostgreSQL's + take an INT
            days = exp.Cast(this=days, to=T.INTEGER.to_sqlglot())
        style = self.sql_dialect.add_days
        if style is AddDays.DATE_ADD:
            return exp.Anonymous(this="date_add", expressions=[date, days])
        if style is AddDays.INTERVAL:
            return exp.DateAdd(this=date, expression=days, unit=exp.var("DAY"))
        return exp.Add(this=date, expression=days)   # date + integer is a date

    def special(self, s: SpecialForm) -> exp.Expr:
        args = [_paren(self.expr(a)) for a in s.args]
        if s.form == "AND":
            return exp.and_(*args, copy=False)
        if s.form == "OR":
            return exp.or_(*args, copy=False)
        if s.form == "NOT":
            return exp.Not(this=args[0])
        if s.form == "IN":
            return exp.In(this=args[0], expressions=args[1:])
        if s.form == "BETWEEN":
            return exp.Between(this=args[0], low=args[1], high=args[2])
        if s.form == "IS_NULL":
            return exp.Is(this=args[0], expression=exp.Null())
        if s.form == "COALESCE":
            return exp.Coalesce(this=args[0], expressions=args[1:])
        if s.form == "CAST":
            return exp.Cast(this=args[0], to=s.type.to_sqlglot())
        if s.form == "CASE":
            ifs = [exp.If(this=args[i], true=args[i + 1]) for i in range(0, len(args) - 1, 2)]
            return exp.Case(ifs=ifs, default=args[-1])
        raise AssertionError(f"no SQL for special form {s.form}")

    def aggregate(self, a: AggregateCall) -> exp.Expr:
        if a.name == "count_star":
            return exp.Count(this=exp.Star())
        arg = self.expr(a.args[0])
        if a.distinct:
            arg = exp.Distinct(expressions=[arg])
        if a.name == "any_value" and self.sql_dialect.any_value_as_array:
            # (PostgreSQL has any_value only from 16.) The first element of the group's values
            # is one of them, for every type (min would not take booleans).
            return exp.Bracket(this=exp.Paren(this=exp.ArrayAgg(this=arg)), expressions=[exp.Literal.number(1)],
                               offset=1)
        if is_moment(a.name) and self.sql_dialect.double_moments and a.args[0].type != T.DOUBLE:
            # (PostgreSQL's moments of an integer or numeric are numeric): in DOUBLE, as elsewhere
            inner = exp.Cast(this=_paren(self.expr(a.args[0])), to=T.DOUBLE.to_sqlglot())
            arg = exp.Distinct(expressions=[inner]) if a.distinct else inner
        builder = {"count": exp.Count, "sum": exp.Sum, "avg": exp.Avg, "min": exp.Min, "max": exp.Max,
                   "any_value": exp.AnyValue, "var_samp": exp.Variance, "var_pop": exp.VariancePop,
                   "stddev_samp": exp.StddevSamp, "stddev_pop": exp.StddevPop}[a.name]
        return builder(this=arg)


def _passes_through(node: Project) -> bool:
    return bool(node.assignments) and all(isinstance(e, ColumnRef) and e.column == c for c, e in node.assignments)


def _joins_below(node: Plan) -> bool:
    """Whether an inner join is under ``node`` through filters and pass-through projections."""
    while isinstance(node, (Filter, Project)):
        if isinstance(node, Project) and not _passes_through(node):
            return False
        node = node.input
    return isinstance(node, Join) and node.kind == "inner"


def flat_inputs(node: Plan, stop: Callable[[Plan], bool] | None = None) -> tuple[list[Plan], list[Expr]]:
    """The inputs of the tree of inner joins, filters and pass-through projections at ``node``,
    left to right, and its join conditions and filter predicates, bottom up; a join below
    ``node`` for which ``stop`` holds is an input. Columns are named by identity, so every
    input's columns keep their names in the one flat scope."""
    inputs: list[Plan] = []
    conditions: list[Expr] = []

    def visit(n: Plan) -> None:
        if n is not node and stop is not None and stop(n):
            inputs.append(n)
        elif isinstance(n, Join) and n.kind == "inner":
            visit(n.left)
            visit(n.right)
            if n.condition != TRUE:
                conditions.append(n.condition)
        elif isinstance(n, Filter):
            visit(n.input)
            conditions.append(n.predicate)
        elif isinstance(n, Project) and _passes_through(n):
            visit(n.input)
        else:
            inputs.append(n)

    visit(node)
    return inputs, conditions


def _select(columns: list[Any], source: exp.Expr) -> exp.Select:
    """``SELECT columns FROM source``, built in place (``copy=False``): every node handed in is
    fresh, and sqlglot's builders otherwise deep-copy the whole input subtree at each level,
    which makes rendering quadratic in the plan's depth. A node without output columns (what
    EXISTS reads) selects a constant: ``SELECT FROM`` is no SQL."""
    if not columns:
        columns = [exp.alias_(exp.Literal.number(1), "_empty", copy=False)]
    return exp.select(*columns, copy=False).from_(source, copy=False)


def _paren(node: exp.Expr) -> exp.Expr:
    return exp.Paren(this=node) if isinstance(node, NEEDS_PARENS) else node


def _interval(value: IntervalValue) -> exp.Expr:
    parts: list[exp.Expr] = []
    if value.months:
        parts.append(exp.Interval(this=exp.Literal.string(str(value.months)), unit=exp.var("MONTH")))
    if value.days or not parts:
        parts.append(exp.Interval(this=exp.Literal.string(str(value.days)), unit=exp.var("DAY")))
    if value.micros:
        parts.append(exp.Interval(this=exp.Literal.string(str(value.micros // 1_000_000)), unit=exp.var("SECOND")))
    result = parts[0]
    for part in parts[1:]:
        result = exp.Add(this=result, expression=part)
    return result


def _shareable(plan: Plan) -> bool:
    """Whether a repeated ``plan`` is computed once (an aggregation or an inner join)."""
    return isinstance(plan, Aggregate) or isinstance(plan, Join) and plan.kind == "inner"


def repeated_subtrees(plan: Plan, joins: frozenset[Hashable] | None = None) -> set[Hashable]:
    """Shapes of the aggregations and inner joins ``plan`` reads more than once, counting what
    is inside a repeated one once (it is computed once); of the joins only those in ``joins``
    (None: all)."""
    counts: Counter[Hashable] = Counter()

    def visit(node: Plan) -> None:
        key = shape(node) if _shareable(node) else None
        if key is not None and (joins is None or isinstance(node, Aggregate) or key in joins):
            counts[key] += 1
            if counts[key] > 1:
                return
        for child in node.children:
            visit(child)

    visit(plan)
    return {key for key, n in counts.items() if n > 1}


@on_deep_stack
def to_sql(plan: Plan, names: tuple[str, ...] | None = None, dialect: SqlDialect | str = DUCKDB,
           tables: TableRenderer = default_tables, grouping_sets_as_union: bool = False) -> str:
    """SQL for ``plan``; a subplan that reads a CTE whose anchor is above it (EXPLAIN ANALYZE
    on DuckDB counts each subplan's rows) defines that CTE itself, from its consumers' producer."""
    renderer = SqlRenderer(dialect, tables, grouping_sets_as_union=grouping_sets_as_union)
    outside = _outside_ctes(plan)
    if not outside:
        return renderer.statement(plan, names)
    select = renderer.statement_ast(plan, names)
    for number, producer in outside:
        body = SqlRenderer(dialect, tables, grouping_sets_as_union=grouping_sets_as_union).query(producer)
        select = select.with_(cte_name(number), as_=body, materialized=renderer.sql_dialect.materialized_ctes or None,
                              append=True, copy=False)
    return select.sql(dialect=renderer.sql_dialect.sqlglot, copy=False)


def _outside_ctes(plan: Plan) -> list[tuple[int, Plan]]:
    """The CTEs ``plan`` reads but does not compute (no anchor of theirs in it), each with its
    producer, a CTE before those whose producers read it."""
    defined = {node.cte for node in walk(plan) if isinstance(node, CteAnchor)}
    found: list[tuple[int, Plan]] = []

    def visit(subplan: Plan) -> None:
        for node in walk(subplan):
            if isinstance(node, CteConsumer) and node.cte not in defined and all(n != node.cte for n, _ in found):
                visit(node.producer)   # the CTEs it reads first
                if all(n != node.cte for n, _ in found):
                    found.append((node.cte, node.producer))

    visit(plan)
    return found


def null_aware_key(node: Join) -> tuple[Expr, Expr]:
    """The (left, right) sides of a null-aware anti join's one equality ``x = y``."""
    condition = node.condition
    assert isinstance(condition, Call) and condition.name == "eq" and len(condition.args) == 2, condition
    x, y = condition.args
    if columns_of(x) <= set(node.left.output):
        return x, y
    return y, x


def cte_name(number: int) -> str:
    """The name a plan's CTE number ``number`` has in rendered SQL."""
    return f"cte{number}"
