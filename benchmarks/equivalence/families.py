"""The local equivalence families: what a case is, which alternatives of the memo each family
forces, and the check of one case against the reference engines and the TLP oracle.

A case is a dict ``{"sql", "tables", "seed"}`` (plus ``greedy`` for ``reorder``): the query, the
rows of every table, and the seed of the random choices made outside hypothesis (which memo
expression a draw takes, the TLP predicate). It is JSON, so a failure is one line of the
regression corpus (``tests/data/equivalence_regressions.txt``).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from benchmarks.equivalence import generators as g
from benchmarks.equivalence.tables import MULTI_ROW, RandomTables, References, ReferenceUnavailable
from cbo.answers import compare
from cbo.connectors import POSTGRES
from cbo.ir.operators import Plan
from cbo.memo.search import draw_plan, restore_output_order
from cbo.planner import PlannedQuery, Planner
from cbo.settings import OptimizerSettings
from cbo.sqlgen import to_sql

Alternatives = Callable[[PlannedQuery, random.Random, dict], list[tuple[str, Plan]]]
INFINITE_THRESHOLD = OptimizerSettings(push_aggregation_below_join_byte_reduction_threshold=float("inf"))


class Mismatch(AssertionError):
    """A plan of cbo's answered otherwise than the reference (or than TLP's partitions)."""


@dataclass(frozen=True)
class Family:
    name: str
    summary: str
    tables: dict[str, tuple[str, str]]
    queries: st.SearchStrategy[str]
    rows: st.SearchStrategy[list[tuple]]
    alternatives: Alternatives
    settings: Callable[[dict], OptimizerSettings] = lambda case: OptimizerSettings()
    extra: dict[str, st.SearchStrategy[Any]] = field(default_factory=dict)
    # each plan also rendered with its grouping sets as a union of one aggregation per set
    # (``cbo.sqlgen``'s ``grouping_sets_union``, the physical UnionGroupingSets' SQL)
    union_rendering: bool = False

    def cases(self) -> st.SearchStrategy[dict]:
        return st.fixed_dictionaries({
            "sql": self.queries, "tables": st.fixed_dictionaries({t: self.rows for t in self.tables}),
            "seed": st.integers(0, 2 ** 16), **self.extra})


def _draws(count: int) -> Alternatives:
    def alternatives(planned: PlannedQuery, rng: random.Random, case: dict) -> list[tuple[str, Plan]]:
        assert planned.optimized is not None
        return [("draw", draw_plan(planned.optimized.root, rng)) for _ in range(count)]
    return alternatives


def _semijoin(planned: PlannedQuery, rng: random.Random, case: dict) -> list[tuple[str, Plan]]:
    assert planned.optimized is not None
    return [(form, g.semijoin_forced_plan(planned.optimized.root, rule, rng)[0])
            for form, rule in g.SEMIJOIN_FORMS.items()]


def _eager(planned: PlannedQuery, rng: random.Random, case: dict) -> list[tuple[str, Plan]]:
    assert planned.optimized is not None
    root = planned.optimized.root
    return [("eager", g.eager_forced_plan(root, rng)[0]) for _ in range(2)] + [("draw", draw_plan(root, rng))]


def _grouping_sets(planned: PlannedQuery, rng: random.Random, case: dict) -> list[tuple[str, Plan]]:
    assert planned.optimized is not None
    root = planned.optimized.root
    return [("partial", g.grouping_sets_forced_plan(root, rng, True)[0]),
            ("whole", g.grouping_sets_forced_plan(root, rng, False)[0]), ("draw", draw_plan(root, rng))]


def _table_pushdown(planned: PlannedQuery, rng: random.Random, case: dict) -> list[tuple[str, Plan]]:
    assert planned.optimized is not None
    root = planned.optimized.root
    return [("pushed", g.pushed_first(root, rng))] + [("draw", draw_plan(root, rng)) for _ in range(2)]


TWO_COLUMNS = {name: ("a", "b") for name in ("t0", "t1", "t2", "t3")}
FAMILIES = {f.name: f for f in [
    Family("decorrelation", "IN/EXISTS/ANY/ALL/scalar subqueries under AND/OR/NOT: the decorrelated plan "
           "and memo draws", g.SUBQUERY_TABLES, g.subquery_queries(), g.subquery_rows, _draws(3)),
    Family("reorder", "join graphs of 2-6 tables (inner, left, semi, anti; cycles): memo draws, DPhyp and greedy",
           {t: ("a", "b") for t in g.JOIN_TABLES}, g.join_queries(), g.table_rows, _draws(4),
           lambda case: OptimizerSettings(max_reordered_joins=2) if case.get("greedy") else OptimizerSettings(),
           {"greedy": st.booleans()}),
    Family("semijoin", "IN/EXISTS in four contexts: 3.1, 3.2 and 3.3 each forced wherever it holds",
           TWO_COLUMNS, g.existential_queries(), g.table_rows, _semijoin, lambda case: INFINITE_THRESHOLD),
    Family("table-pushdown", "GROUP BY joined with a table unique (or not) on its key: the pushed form forced",
           {t: ("a", "b") for t in ("t0", "t1", "t2")}, g.table_pushdown_queries(),
           st.lists(st.tuples(g.small_values, g.small_values), max_size=7), _table_pushdown),
    Family("eager-aggregation", "aggregations over 2-3 joined tables: the partial aggregation below the join "
           "forced wherever it holds", TWO_COLUMNS, g.aggregate_queries(), g.table_rows, _eager,
           lambda case: INFINITE_THRESHOLD),
    Family("windows", "window functions over a table, a join or a grouping, under filters and top-k: "
           "memo draws", TWO_COLUMNS, g.window_queries(), g.table_rows, _draws(3)),
    Family("grouping-sets", "ROLLUP, CUBE and GROUPING SETS with GROUPING(): the sets over the partial "
           "aggregation forced, and not, each rendered as GROUPING SETS and as a union of aggregations",
           {t: ("a", "b") for t in ("t0", "t1")}, g.grouping_set_queries(), g.grouping_set_rows, _grouping_sets,
           union_rendering=True),
]}


@dataclass
class CaseReport:
    plans: int = 0                 # plans of cbo's checked against the reference
    tlp: bool = False              # whether the TLP oracle checked the case
    reference: str = "duckdb"      # duckdb, postgres (DuckDB failed internally) or none
    # A case of several queries over one set of rows (the pushdown family): each query with the
    # rows is a case of its own, and each query's reference is counted.
    subcases: list[dict] = field(default_factory=list)
    references: dict[str, int] | None = None


def _same(expected: list[tuple] | str, actual: list[tuple] | str) -> tuple[bool, str]:
    if isinstance(expected, str) or isinstance(actual, str):
        # Whether a multi-row scalar subquery is evaluated where its value cannot change the
        # answer is the engine's choice (see tests/quick/test_random_subqueries.py).
        lazy = (expected == MULTI_ROW and not isinstance(actual, str)) or \
               (actual == MULTI_ROW and not isinstance(expected, str))
        return expected == actual or lazy, f"outcomes differ ({expected!r} vs {actual!r})"
    verdict = compare(expected, actual, ordered=False)
    return verdict.matches, verdict.detail


class Cache(OrderedDict):
    """A bounded map that forgets the least recently used entry."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def get_or_make(self, key: Any, make: Callable[[], Any]) -> tuple[Any, bool]:
        """The value for ``key`` (made and kept if absent), and whether it was there."""
        if key in self:
            self.move_to_end(key)
            return self[key], True
        value = self[key] = make()
        if len(self) > self.size:
            self.popitem(last=False)
        return value, False


class Checker:
    """Checks cases of one family: every alternative against DuckDB (PostgreSQL where DuckDB
    fails internally), then TLP through cbo alone.

    Planning reads no rows (the catalog's tables carry no statistics) and is deterministic, so
    a query planned once gives the plan (and the memo) planning it again would: queries, TLP
    partitions and rendered SQL are cached across cases, and a case whose query was seen
    before costs only its draws and its runs on the new rows."""

    def __init__(self, family: Family, tables: RandomTables, references: References):
        self.family, self.tables, self.references = family, tables, references
        self._planners: dict[OptimizerSettings, Planner] = {}
        self._planned = Cache(256)          # (settings, sql) -> PlannedQuery (with its memo)
        self._partitions = Cache(20_000)    # (settings, TLP partition sql) -> (plan, names)
        self._rendered = Cache(50_000)      # (plan, names) -> its DuckDB SQL
        self.queries: set[str] = set()      # the distinct queries checked
        self.planned = self.reused = 0      # plannings done, and plannings a cache saved

    def reference_counts(self) -> dict[str, int]:
        refs = self.references
        return {"duckdb_internal_errors": refs.duckdb_faults, "answered_by_postgres": refs.postgres_answers,
                "unanswered": refs.unanswered}

    def _planner(self, settings: OptimizerSettings) -> Planner:
        planner = self._planners.get(settings)
        if planner is None:
            planner = self._planners[settings] = Planner(self.tables.catalog, settings=settings)
        return planner

    def _plan(self, cache: Cache, planner: Planner, sql: str,
              keep: Callable[[PlannedQuery], Any] = lambda planned: planned) -> Any:
        """``keep`` of the planned ``sql``, from ``cache`` when planned before."""
        value, hit = cache.get_or_make((planner.settings, sql), lambda: keep(planner.plan(sql)))
        self.reused += hit
        self.planned += not hit
        return value

    def _run(self, plan: Plan, names: tuple[str, ...], ran: dict[str, Any] | None = None,
             union: bool = False) -> list[tuple] | str:
        """The plan's answer on the case's rows (its grouping sets rendered as a union of
        aggregations where ``union``). ``ran`` holds the answers of the SQL run so far on these
        rows: a plan rendered to the same SQL as another (a draw often repeats the chosen plan)
        has its answer."""
        sql, _ = self._rendered.get_or_make((plan, names, union), lambda: to_sql(plan, names, "duckdb",
                                                                              grouping_sets_as_union=union))
        postgres = lambda: to_sql(plan, names, POSTGRES.sql, grouping_sets_as_union=union)  # noqa: E731
        if ran is None:
            return self.references.run(sql, postgres)
        if sql not in ran:
            try:
                ran[sql] = self.references.run(sql, postgres)
            except ReferenceUnavailable as exc:
                ran[sql] = exc
        if isinstance(ran[sql], ReferenceUnavailable):
            raise ran[sql]
        return ran[sql]

    def check(self, case: dict) -> CaseReport:
        family, report = self.family, CaseReport()
        sql, rng = case["sql"], random.Random(case["seed"])
        self.queries.add(sql)
        data = {name: [tuple(row) for row in rows] for name, rows in case["tables"].items()}
        self.references.load(data)
        planner = self._planner(family.settings(case))
        planned = self._plan(self._planned, planner, sql)
        plans = [("chosen", planned.plan)] + [(label, restore_output_order(plan, planned.plan))
                                              for label, plan in family.alternatives(planned, rng, case)]
        renderings = [(label, plan, False) for label, plan in plans]
        if family.union_rendering:
            renderings += [(f"{label} as a union", plan, True) for label, plan in plans]
        faults = self.references.duckdb_faults
        try:
            expected = self.references.run(sql)
        except ReferenceUnavailable:
            report.reference = "none"
            expected = None
        if self.references.duckdb_faults > faults and expected is not None:
            report.reference = "postgres"
        outcomes: list[list[tuple] | str] = []
        ran: dict[str, Any] = {}
        for label, plan, union in renderings:
            try:
                actual = self._run(plan, planned.names, ran, union)
            except ReferenceUnavailable:
                continue
            outcomes.append(actual)
            if expected is not None:
                same, detail = _same(expected, actual)
                if not same:
                    raise Mismatch(f"{family.name}: plan {label!r}: {detail}\nplan:\n{plan}")
                report.plans += 1
        if outcomes and not isinstance(outcomes[0], str):
            report.tlp = self._tlp(planner, planned, outcomes[0], rng)
        return report

    def _tlp(self, planner: Planner, planned: PlannedQuery, whole: list[tuple], rng: random.Random) -> bool:
        """Ternary logic partitioning: Q's rows (its chosen plan's) are the multiset union of
        Q WHERE p, Q WHERE NOT p and Q WHERE p IS NULL, each planned by cbo (its chosen plan).
        False when a partition errs or no engine runs it (not checked)."""
        names = [f"c{i}" for i in range(len(planned.names))]
        p = tlp_predicate([c.type.name for c in planned.plan.output], names, rng)
        base = f"select * from ({planned.sql}) as tlp({', '.join(names)})"
        union: list[tuple] = []
        for where in (p, f"not ({p})", f"({p}) is null"):
            part_plan, part_names = self._plan(self._partitions, planner, f"{base} where {where}",
                                               lambda part: (part.plan, part.names))   # not the memo
            try:
                rows = self._run(part_plan, part_names)
            except ReferenceUnavailable:
                return False
            if isinstance(rows, str):
                return False
            union += rows
        verdict = compare(whole, union, ordered=False)
        if not verdict.matches:
            raise Mismatch(f"TLP on p = {p}: {verdict.detail}")
        return True


def tlp_predicate(types: list[str], names: list[str], rng: random.Random) -> str:
    """A random predicate over the query's output columns that can be TRUE, FALSE or NULL."""
    numeric = [n for n, t in zip(names, types) if t != "boolean"]
    boolean = [n for n, t in zip(names, types) if t == "boolean"]
    choices = []
    if numeric:
        x, y = rng.choice(numeric), rng.choice(numeric)
        k = rng.randint(0, 4)
        choices += [f"{x} > {k}", f"{x} = {y}", f"{x} + {y} < {k}", f"{x} <> {k} or {y} = {k}", f"{x} <= {k}"]
    if boolean:
        z = rng.choice(boolean)
        choices += [z, f"{z} and {rng.choice(numeric)} > 1" if numeric else f"not {z}"]
    return rng.choice(choices) if choices else "true"
