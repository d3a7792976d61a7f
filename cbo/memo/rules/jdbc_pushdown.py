"""JDBC pushdown as memo alternatives (connector-owned subplans): a subplan of one source as one query.

``PushSubplanToPostgres``, ``PushSubplanToMariaDB`` and ``PushSubplanToSQLite`` are connector
rules (``register_connector_rules("jdbc", ...)``), one per connector that pushes work
(``cbo.connectors``: ``Connector.rule_name``). For a memo group whose plans read only tables of
one JDBC source of the rule's connector, and whose operators the source can evaluate (the
connector's capabilities with the catalog's overrides for the source,
``cbo.connectors.capabilities``), the rule adds a *remote-query* alternative (``Algorithm.
REMOTE_QUERY``) into that same group, beside the local ones: the physical expression's node is
the whole pushed logical subplan (no group references: nothing below it runs in Spark), built
from the group's expressions and, recursively, its input groups'. The group's estimate is the
remote query's estimate (Trino loses the statistics of pushed subtrees: trino#6998; here they
stay the group's). Every group up to the largest such subplan gets its alternative, so the
cost decides how much to push: the whole subplan, a part of it with Spark doing the rest, or
nothing (``cbo.cost.model``: the remote evaluation at the dialect's rate plus the transfer of
the result through JDBC, against reading the inputs and working in Spark).

Equivalence: the source evaluates the subplan with the same semantics (only what the dialect
evaluates as Spark does is pushed; an expression it cannot evaluate keeps its operator, and
everything above it, local). Pushed: scans, filters, projections, joins (inner, cross, left,
right, full where the dialect has it, semi and anti as [NOT] EXISTS, NOT IN), aggregations
(DISTINCT is an aggregation), grouping sets where the dialect has them (PostgreSQL: ``GROUP BY
GROUPING SETS``, the source's work its input's rows once per set), LIMIT and ORDER BY ... LIMIT
(a sort alone is not: rows read through JDBC lose their order), and windows where the dialect
has them (PostgreSQL): their aggregates as the dialect's aggregates, ranking, offset and value
functions as SQL's.

Settings (``cbo.settings``, named as Presto and Trino name them): ``join_pushdown_strategy``
``AUTOMATIC`` (cost), ``EAGER`` (the remote query always wins where it exists: the filter
``EagerPushdown`` drops the group's local alternatives) or ``NONE`` (only a table's own [Project] [Filter] Scan, the
per-table fold); ``enable_join_query_pushdown`` false keeps subplans with joins local. Where a
group's plans could not be pushed, the rule notes why at the group (EXPLAIN shows it): the
capability missing, or the setting; the search adds the cost comparison
(``note_pushdown_costs``), and keeps both costs of every such group of the chosen plan, pushed or
not, for ``Session.pushdown`` (``pushdown_choices``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cbo.connectors import CONNECTORS, Connector, by_dialect
from cbo.connectors.capabilities import FLOAT_DECIMAL_DIGITS, Capabilities
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, ColumnRef, Constant, Expr, SpecialForm, WindowCall, walk
from cbo.ir.operators import Aggregate, Filter, GroupingSets, Join, Limit, Plan, Project, Scan, Sort, Window
from cbo.ir.shape import shape
from cbo.ir.windows import AGGREGATES as WINDOW_AGGREGATES
from cbo.memo.memo import Group, PhysicalExpr, group_of
from cbo.memo.rules.base import ImplementationRule, register_connector_rules
from cbo.physical.algorithm import Algorithm
from cbo.physical.remote_work import RemoteWork, record_remote_work, remote_work

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


@dataclass(frozen=True)
class RemoteSource:
    """Where a table lives: its JDBC source's name and SQL dialect (its connector's), and what
    it evaluates (the connector's capabilities with the catalog's overrides for that source;
    None: the connector's)."""

    name: str
    dialect: str
    capabilities: Capabilities | None = None

    @property
    def caps(self) -> Capabilities:
        found = self.capabilities or by_dialect(self.dialect).capabilities
        assert found is not None, f"the {self.dialect} connector pushes nothing"
        return found


_INTEGERS = ("integer", "bigint")
_ARITHMETIC = ("add", "subtract", "multiply", "divide", "modulus")


@dataclass(frozen=True)
class SharedWork:
    """An aggregation or a join inside a pushed subplan, by shape (``cbo.ir.shape``): its work
    (rows, aggregated, all of its subtree's), the rows it outputs, and the shapes of the
    aggregations and joins inside it. A dialect that computes a repeated one once
    (``Capabilities.shares_repeated``; ``cbo.sqlgen`` renders it as one materialized CTE) is
    charged its work once, and each repetition the rows of the CTE it reads instead."""

    rows: float
    aggregated: float
    inner: frozenset[Hashable]
    output: float = 0.0
    join: bool = False


@dataclass(frozen=True)
class Pushable:
    plan: Plan
    source: RemoteSource
    rows: float            # rows the source's operators read (RemoteWork.rows)
    aggregated: float      # rows its aggregations read (RemoteWork.aggregated)
    has_join: bool
    single_table: bool     # a [Project] [Filter] Scan: the per-table fold
    # the aggregations and inner joins inside, by shape (only where the dialect shares repeated ones)
    shared: tuple[tuple[Hashable, SharedWork], ...] = ()
    # the repeated inner joins among them: (shape, rows and aggregated rows taken off for sharing it)
    repeated_joins: tuple[tuple[Hashable, float, float], ...] = ()


def merge_shared(inputs: Iterable[Pushable], joins: dict[Hashable, tuple[float, float]] | None = None
                 ) -> tuple[dict[Hashable, SharedWork], float, float]:
    """The aggregations and joins inside ``inputs`` by shape, and the rows and aggregated rows to
    take off for those repeated across them (one computed once is charged once, and a repetition
    the rows it reads from the CTE). Of a repeated one, what is inside it is repeated too, and
    not taken off again. The repeated joins, with what was taken off for each, go to ``joins``."""
    merged: dict[Hashable, SharedWork] = {}
    rows = aggregated = 0.0
    for pushed in inputs:
        covered: set[Hashable] = set()
        # outer aggregations first: an aggregation's work includes that of those inside it
        for key, work in sorted(pushed.shared, key=lambda item: -(item[1].rows + item[1].aggregated)):
            if key in covered:
                continue
            if key in merged:
                rows += max(work.rows - work.output, 0.0)
                aggregated += work.aggregated
                covered |= work.inner
                if joins is not None and work.join:
                    saved = joins.get(key, (0.0, 0.0))
                    joins[key] = (saved[0] + max(work.rows - work.output, 0.0), saved[1] + work.aggregated)
            else:
                merged[key] = work
    return merged, rows, aggregated


def _cannot(expr: Expr, caps: Capabilities) -> str | None:
    """Why the dialect cannot evaluate ``expr`` (None: it can)."""
    for e in walk(expr):
        if isinstance(e, Call):
            if e.name not in caps.functions:
                return f"function {e.name}"
            if e.name in ("divide", "modulus") and any(a.type.name in _INTEGERS for a in e.args):
                return f"integer {e.name} (the source truncates)"
            if caps.float_decimals and e.name in _ARITHMETIC and _decimal(e.type, *(a.type for a in e.args)):
                return f"decimal {e.name} (the source computes it in binary floating point)"
        elif isinstance(e, SpecialForm):
            if e.form not in caps.forms:
                return f"{e.form}"
        elif isinstance(e, AggregateCall):
            if e.name not in caps.aggregates:
                return f"aggregate {e.name}"
            if e.distinct and e.name not in ("count", "sum", "avg", "min", "max"):
                return f"DISTINCT {e.name}"
            if caps.float_decimals and e.name in ("sum", "avg") and _decimal(*(a.type for a in e.args)):
                return f"decimal {e.name} (the source computes it in binary floating point)"
        elif isinstance(e, WindowCall):
            # (count(*) is the aggregate count_star; ranking, offset and value functions are
            # SQL's in every dialect with windows)
            if e.name in WINDOW_AGGREGATES and e.name not in caps.aggregates:
                return f"window aggregate {e.name}"
            if caps.float_decimals and e.name in ("sum", "avg") and _decimal(*(a.type for a in e.args)):
                return f"decimal {e.name} (the source computes it in binary floating point)"
        elif not isinstance(e, (ColumnRef, Constant)):
            return type(e).__name__
        if caps.float_decimals and _wide_decimal(e.type):
            return f"{e.type} (the source holds decimals of at most {FLOAT_DECIMAL_DIGITS} digits exactly)"
    return None


def _decimal(*types: T.DataType) -> bool:
    return any(t.name == "decimal" for t in types)


def _wide_decimal(type_: T.DataType) -> bool:
    return type_.name == "decimal" and (type_.precision or 0) > FLOAT_DECIMAL_DIGITS


def _node_cannot(node: Plan, caps: Capabilities) -> str | None:
    """Why the dialect cannot evaluate ``node`` itself (its inputs apart)."""
    if isinstance(node, Join):
        if "join" not in caps.operators:
            return "joins (disabled for the source)"
        if node.kind not in caps.join_kinds:
            return f"{node.kind} join"
    elif isinstance(node, Aggregate):
        if "aggregate" not in caps.operators:
            return "aggregations (disabled for the source)"
    elif isinstance(node, GroupingSets):
        if "grouping_sets" not in caps.operators:
            return "grouping sets"
    elif isinstance(node, Limit):
        if "limit" not in caps.operators:
            return "LIMIT (disabled for the source)"
    elif isinstance(node, Window):
        if "window" not in caps.operators:
            return "window functions"
    elif not isinstance(node, (Filter, Project)):
        return f"operator {type(node).__name__}"
    for e in node.expressions():
        reason = _cannot(e, caps)
        if reason is not None:
            return reason
    if not caps.boolean_output and any(c.type == T.BOOLEAN for c in node.output):
        return "a boolean column (read back as a number)"
    if caps.float_decimals and any(_wide_decimal(c.type) for c in node.output):
        return f"a decimal of more than {FLOAT_DECIMAL_DIGITS} digits (held as binary floating point)"
    return None


class PushdownState:
    """Per search and dialect: each group's pushable subplan (or None), and each group's remote
    alternative, so every logical expression of a group yields the same one (costed once)."""

    def __init__(self) -> None:
        self.pushable: dict[int, Pushable | None] = {}
        self.alternatives: dict[int, PhysicalExpr | None] = {}
        self.reasons: dict[int, str] = {}


class PushSubplanToSource(ImplementationRule):
    """Run a subplan whose every leaf is a table of one JDBC source of this dialect as one query
    in that source: a remote-query alternative in the subplan's own memo group.

    Pattern: any expression of a group whose plans (the group's expressions and its input
    groups', recursively; the first that can be pushed) read only tables of one source of the
    rule's dialect, through operators and expressions the dialect evaluates, and that does more
    than read a table. Equivalence: the source computes the same rows (see the module's
    docstring for what each dialect evaluates).
    """

    operator = Plan
    dialect: ClassVar[str]   # the connector's (``connector_rule`` makes one subclass per connector)

    def matches(self, expr: Plan, group: Group, context: Any) -> bool:
        sources: Mapping[str, RemoteSource] = context.remote_sources
        return bool(sources) and any(s.dialect == self.dialect for s in sources.values())

    def implement(self, expr: Plan, group: Group, context: Any) -> Iterable[PhysicalExpr]:
        state = self._state(context)
        group = group.find()
        if group.id not in state.alternatives:
            state.alternatives[group.id] = self._alternative(group, context, state)
        found = state.alternatives[group.id]
        if found is not None:
            yield found

    def _state(self, context: SearchContext) -> PushdownState:
        return context.state(("jdbc_pushdown", self.dialect), PushdownState)

    def _alternative(self, group: Group, context: Any, state: PushdownState) -> PhysicalExpr | None:
        pushable = self.pushable(group, context, state)
        if pushable is None or isinstance(pushable.plan, Scan):
            reason = state.reasons.get(group.id)
            if reason:
                context.memo.note(group, reason)
            return None
        settings = context.settings
        strategy = settings.join_pushdown_strategy
        where = f"{pushable.source.name} ({self.dialect})"
        if strategy == "NONE" and not pushable.single_table:
            context.memo.note(group, f"not pushed to {where}: join_pushdown_strategy=NONE")
            return None
        if pushable.has_join and not settings.enable_join_query_pushdown:
            context.memo.note(group, f"not pushed to {where}: enable_join_query_pushdown=false")
            return None
        plan = pushable.plan
        rows, aggregated, shared_joins = _sharing(pushable)
        # The root is a node of its own (with_children builds it; a bare copy for a leaf would
        # not exist): the cost model reads the remote work from it, the SQL what to share.
        record_remote_work(plan, RemoteWork(pushable.source.name, self.dialect, rows, aggregated, shared_joins))
        return PhysicalExpr(plan, Algorithm.REMOTE_QUERY, (), plan, self.name)

    def pushable(self, group: Group, context: Any, state: PushdownState, under_limit: bool = False) -> Pushable | None:
        """The group as a plan this dialect's source can run, or None (the reason, if the group's
        inputs could be pushed but its own operator not, kept in ``state.reasons``)."""
        group = group.find()
        key = group.id * 2 + (1 if under_limit else 0)
        if key in state.pushable:
            return state.pushable[key]
        state.pushable[key] = None   # no cycles through a group, but be safe while computing
        found: Pushable | None = None
        best = 0.0
        sources: Mapping[str, RemoteSource] = context.remote_sources
        for expr in group.expressions:
            if isinstance(expr, Scan):
                source = sources.get(expr.table)
                if source is None or source.dialect != self.dialect:
                    break   # a table elsewhere: no expression of the group reads only this source
                if not source.caps.boolean_output and any(c.type == T.BOOLEAN for c in expr.output):
                    state.reasons[group.id] = f"not pushed to {source.name} ({self.dialect}): a boolean column"
                    break
                found = Pushable(expr, source, context.size(group)[0], 0.0, False, True)
                break
            if isinstance(expr, Sort):
                if not under_limit:
                    continue
                inputs = [self.pushable(group_of(expr.input), context, state)]
            elif isinstance(expr, Limit):
                inputs = [self.pushable(group_of(expr.input), context, state, under_limit=True)]
            else:
                inputs = [self.pushable(group_of(c), context, state) for c in expr.children]
            if not inputs or any(i is None for i in inputs):
                continue
            pushed = [i for i in inputs if i is not None]
            if len({i.source for i in pushed}) != 1:
                continue   # two sources (or two dialect sources of other names): not one query
            reason = None if isinstance(expr, Sort) else _node_cannot(expr, pushed[0].source.caps)
            if reason is not None:
                state.reasons[group.id] = f"not pushed to {pushed[0].source.name} ({self.dialect}): {reason}"
                continue
            rows, aggregated = sum(i.rows for i in pushed), sum(i.aggregated for i in pushed)
            shares = pushed[0].source.caps.shares_repeated
            shared: dict[Hashable, SharedWork] = {}
            repeated_joins: dict[Hashable, tuple[float, float]] = {}
            if shares:
                for i in pushed:
                    for join_shape, saved_rows, saved_aggregated in i.repeated_joins:
                        known = repeated_joins.get(join_shape, (0.0, 0.0))
                        repeated_joins[join_shape] = (known[0] + saved_rows, known[1] + saved_aggregated)
                shared, repeated_rows, repeated_aggregated = merge_shared(pushed, repeated_joins)
                rows -= repeated_rows
                aggregated -= repeated_aggregated
            read = sum(context.size(group_of(c))[0] for c in expr.children)
            if isinstance(expr, Aggregate):
                aggregated += read
            elif isinstance(expr, GroupingSets):
                aggregated += read * len(expr.sets)   # each set's groups made from the input's rows
            elif not isinstance(expr, Project):   # a projection is computed as its input's rows pass
                rows += read
            if isinstance(expr, Join):
                rows += context.size(group)[0]
            # Of the group's equivalent expressions, the one the source would do least work for
            # (a join order, the table pushed into an aggregation, ...): the source plans the
            # query it receives again, but no database rewrites what cbo's rules rewrite.
            price = remote_price(context, self.dialect, rows, aggregated)
            if found is not None and price >= best:
                continue
            single = isinstance(expr, (Filter, Project)) and pushed[0].single_table
            plan = expr.with_children(tuple(i.plan for i in pushed))
            is_join = isinstance(plan, Join) and plan.kind == "inner"
            if shares and (isinstance(plan, Aggregate) or is_join):
                shared[shape(plan)] = SharedWork(rows, aggregated, frozenset(shared), context.size(group)[0], is_join)
            found = Pushable(plan, pushed[0].source, rows, aggregated,
                             isinstance(expr, Join) or any(i.has_join for i in pushed), single,
                             tuple(shared.items()), tuple((k, r, a) for k, (r, a) in repeated_joins.items()))
            best = price
        state.pushable[key] = found
        return found


def _sharing(pushable: Pushable) -> tuple[float, float, frozenset[Hashable]]:
    """The pushed query's work (rows, aggregated) and the repeated joins it computes once.

    A query with a CTE runs in PostgreSQL without parallel workers outside the CTE (a CTE scan
    is parallel-restricted): sharing a small repeated join (TPC-H's important-stock query, whose
    supplier-nation join appears twice) made the query slower, the scans around it serial. A repeated join is shared
    only where the work it saves is at least the rest of the query's (Q17: the lineitem-part
    join is nearly all of it); otherwise it is computed at each occurrence and charged so."""
    rows, aggregated = pushable.rows, pushable.aggregated
    shared: set[Hashable] = set()
    for key, saved_rows, saved_aggregated in sorted(pushable.repeated_joins, key=lambda item: -(item[1] + item[2])):
        rest = rows + aggregated - (saved_rows + saved_aggregated)
        if saved_rows + saved_aggregated >= rest:
            shared.add(key)
        else:
            rows += saved_rows
            aggregated += saved_aggregated
    return rows, aggregated, frozenset(shared)


def remote_price(context: Any, dialect: str, rows: float, aggregated: float) -> float:
    """Predicted seconds of remote work (the search's cost model prices it: ``context.
    remote_price``); without one, rows read, an aggregated row counting as two."""
    price = getattr(context, "remote_price", None)
    return price(dialect, rows, aggregated) if price is not None else rows + 2.0 * aggregated


def connector_rule(connector: Connector) -> PushSubplanToSource:
    """The connector's rule: ``PushSubplanToSource`` for its dialect, named as it says
    (``Connector.rule_name``; a class of its own, as every rule's name is its class's)."""
    assert connector.rule_name is not None and connector.capabilities is not None
    rule = type(connector.rule_name, (PushSubplanToSource,),
                {"__doc__": PushSubplanToSource.__doc__, "__module__": __name__, "name": connector.rule_name,
                 "dialect": connector.dialect})
    return rule()


register_connector_rules("jdbc", *(connector_rule(c) for c in CONNECTORS if c.rule_name is not None))


def note_pushdown_costs(context: SearchContext, chosen: Any) -> None:
    """For each operator of the chosen plan (``cbo.physical.plan.PhysicalPlan``) whose group had a
    remote-query alternative that lost, note both costs at the group (EXPLAIN shows them)."""
    states = [s for k, s in context.rule_state.items()
              if isinstance(k, tuple) and k[0] == "jdbc_pushdown" and isinstance(s, PushdownState)]
    if not states:
        return
    for node in chosen.operators():
        if node.algorithm is Algorithm.REMOTE_QUERY or node.group is None:
            continue
        for state in states:
            remote = state.alternatives.get(node.group.find().id)
            if remote is None:
                continue
            work = remote_work(remote.node)
            where = f"{work.source} ({work.dialect})" if work else "the source"
            if remote.best_cost is not None:
                text = f"not pushed to {where}: cost, remote query {remote.best_cost:.4g} s vs local {node.total:.4g} s"
            elif remote.floor is not None:
                text = f"not pushed to {where}: cost, remote query at least {remote.floor:.4g} s vs local " \
                       f"{node.total:.4g} s"
            else:
                text = f"not pushed to {where}: cost, remote query never cheaper than local {node.total:.4g} s"
            context.memo.note(node.group, text)


@dataclass(frozen=True)
class PushdownChoice:
    """A group of the chosen plan that had a remote-query alternative: the subplan its source
    would run, the cost of running it there and of the cheapest local plan, and which won.

    A cost the search never completed (it pruned the alternative: it could not win) is None,
    with the lower bound it was pruned at in ``*_bound`` where the search had one."""

    group: int
    source: str
    dialect: str
    pushed: bool
    remote_plan: Plan
    remote_cost: float | None
    local_cost: float | None
    rows: float                      # the group's estimated rows
    remote_bound: float | None = None
    local_bound: float | None = None


def pushdown_choices(context: SearchContext, chosen: Any,
                     physicals: Callable[[Group], list[PhysicalExpr]]) -> tuple[PushdownChoice, ...]:
    """For each operator of the chosen plan whose group had a remote-query alternative, both
    costs: the remote query's and the cheapest local plan's (``physicals``: the search's
    physical alternatives of a group). Operators inside a pushed subplan are not the chosen
    plan's, so each pushed subplan appears once, at its root."""
    states = [s for k, s in context.rule_state.items()
              if isinstance(k, tuple) and k[0] == "jdbc_pushdown" and isinstance(s, PushdownState)]
    found: list[PushdownChoice] = []
    seen: set[int] = set()
    for node in chosen.operators():
        if node.group is None or node.is_enforcer:
            continue
        group = node.group.find()
        if group.id in seen:
            continue
        for state in states:
            remote = state.alternatives.get(group.id)
            if remote is None:
                continue
            seen.add(group.id)
            work = remote_work(remote.node)
            pushed = node.algorithm is Algorithm.REMOTE_QUERY
            local = [p for p in physicals(group) if p.algorithm is not Algorithm.REMOTE_QUERY]
            costs = [p.best_cost for p in local if p.best_cost is not None]
            bounds = [p.floor for p in local if p.floor is not None]
            found.append(PushdownChoice(
                group.id, work.source if work else "?", work.dialect if work else "?", pushed, remote.node,
                remote_cost=node.total if pushed else remote.best_cost,
                local_cost=(min(costs) if costs else None) if pushed else node.total,
                rows=context.size(group)[0],
                remote_bound=None if pushed else remote.floor,
                local_bound=(min(bounds) if bounds and not costs else None) if pushed else None))
    return tuple(found)
