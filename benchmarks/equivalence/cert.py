"""The ``cert`` family: estimator consistency, after CERT (Ba and Rigger, "CERT: Finding
Performance Issues in Database Systems Through the Lens of Cardinality Estimation", ICSE
2024). No reference engine: a query and a
strictly more restrictive variant of it are planned over TPC-H's schema with SF 1's stored
statistics, and the variant's estimate must never be larger, at every memo group both hold.

Variants (each keeps every row-producing part of the query and restricts one):

* ``conjunct``: one more conjunct in WHERE;
* ``range``: a range predicate (``BETWEEN``, or one bound) narrowed;
* ``inner``: a LEFT JOIN made an inner join (its rows are a subset of the left join's);
* ``semi``: an EXISTS semi join to a table related by a foreign key added to WHERE.

Groups are compared by what they compute, as far as it is ordered by restriction: a group of
joins, filters and projections by the set of table occurrences it reads (a semi join's by its
left input's: it keeps only left rows); an aggregation by its input's and its grouping columns.
Within a memo several groups read the same set (a scan and the filter above it); the least
estimate of each set is compared, the most restricted form of that set in each query. A table
occurrence is named by its table and its first column's id, which the binder gives in FROM
order: the same in both queries (the variant adds nothing before the outer FROM).

A case is ``{"sql", "restricted", "variant"}``; a violation names the set, both estimates and
both queries, and is one line of ``tests/data/equivalence_regressions.txt``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from benchmarks.equivalence.schemas import Schema, tpch

ROOT = Path(__file__).resolve().parents[2]
STATISTICS = ROOT / "tests" / "testdata" / "stats" / "tpch-sf1"
VARIANTS = ("conjunct", "range", "inner", "semi")
TOLERANCE = 1e-9   # relative: estimates are floats computed in different orders


class Inconsistent(AssertionError):
    """A more restrictive query got a larger estimate."""


# -- queries --------------------------------------------------------------------------------------

def _statistics() -> dict:  # type: ignore[type-arg]
    from stats.store import StatsStore

    store = StatsStore(STATISTICS)
    found = {}
    for table in store.tables():
        loaded = store.load(table)
        assert loaded.stats is not None, loaded.problem
        found[table] = loaded.stats
    return found


def _literal(value: Any) -> str:
    if isinstance(value, str):
        try:
            dt.date.fromisoformat(value)
            return f"DATE '{value}'"
        except ValueError:
            return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return repr(value) if isinstance(value, float) else str(value)


@dataclass
class Values:
    """Per table column: values worth comparing with (histogram bounds and MCVs, in order)."""

    by_column: dict[tuple[str, str], list[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, statistics: dict) -> Values:  # type: ignore[type-arg]
        found = cls()
        for table, stats in statistics.items():
            name = table.split(".")[-1]
            for column, column_stats in stats.columns.items():
                values = {v for v, _ in column_stats.mcv}
                for bucket in column_stats.histogram:
                    values.update((bucket.lower, bucket.upper))
                values.discard(None)
                try:
                    ordered = sorted(values)
                except TypeError:
                    continue
                if ordered:
                    found.by_column[(name, column)] = ordered
        return found


@dataclass
class Query:
    """A query being drawn: its FROM items, join kinds and conditions, and WHERE conjuncts."""

    tables: list[tuple[str, str]]                 # (table, alias)
    joins: list[tuple[str, str]]                  # per table after the first: (kind, ON condition)
    where: list[str]
    ranges: list[tuple[int, str, list[Any], int, int]] = field(default_factory=list)   # see _range
    grouping: str | None = None

    def sql(self) -> str:
        text = f"{self.tables[0][0]} AS {self.tables[0][1]}"
        for (table, alias), (kind, condition) in zip(self.tables[1:], self.joins):
            text += f" {kind} {table} AS {alias} ON {condition}"
        select = f"{self.grouping}, count(*) AS n" if self.grouping else "count(*) AS n"
        where = f" WHERE {' AND '.join(self.where)}" if self.where else ""
        group = f" GROUP BY {self.grouping}" if self.grouping else ""
        return f"SELECT {select} FROM {text}{where}{group}"


class CertGenerator:
    def __init__(self, draw, schema: Schema, values: Values, variants: tuple[str, ...] = VARIANTS):  # type: ignore[no-untyped-def]
        self.draw, self.schema, self.values, self.variants = draw, schema, values, variants

    def pick(self, options):  # type: ignore[no-untyped-def]
        return self.draw(st.sampled_from(options))

    def related(self, table: str) -> list[tuple[str, str, str]]:
        """(other table, this table's column, the other's column) for each foreign key either way."""
        found = []
        for fk in self.schema.table(table).keys.foreign_keys:
            found.append((fk.references, fk.columns[0], fk.referenced_columns[0]))
        for other in self.schema.tables:
            for fk in other.keys.foreign_keys:
                if fk.references == table:
                    found.append((other.name, fk.referenced_columns[0], fk.columns[0]))
        return [f for f in found if len(f[1]) and len(f[2])]

    def columns(self, table: str) -> list[str]:
        return [c for c, _ in self.schema.table(table).columns if (table, c) in self.values.by_column]

    def predicate(self, query: Query) -> str:
        table, alias = self.pick(query.tables)
        column = self.pick(self.columns(table))
        values = self.values.by_column[(table, column)]
        form = self.pick(["cmp", "cmp", "range", "in", "null"])
        if form == "range":
            return self._range(query, table, alias, column, values)
        if form == "in":
            items = sorted({self.draw(st.integers(0, len(values) - 1)) for _ in range(self.draw(st.integers(1, 3)))})
            return f"{alias}.{column} IN ({', '.join(_literal(values[i]) for i in items)})"
        if form == "null":
            return f"{alias}.{column} IS NOT NULL"
        value = values[self.draw(st.integers(0, len(values) - 1))]
        return f"{alias}.{column} {self.pick(['=', '<>', '<', '<=', '>', '>='])} {_literal(value)}"

    def _range(self, query: Query, table: str, alias: str, column: str, values: list[Any]) -> str:
        low = self.draw(st.integers(0, len(values) - 1))
        high = self.draw(st.integers(low, len(values) - 1))
        query.ranges.append((len(query.where), f"{alias}.{column}", values, low, high))
        return f"{alias}.{column} BETWEEN {_literal(values[low])} AND {_literal(values[high])}"

    def base(self) -> Query:
        first = self.pick([t.name for t in self.schema.tables])
        query = Query([(first, "t1")], [], [])
        for _ in range(self.draw(st.integers(0, 3))):
            options = [(alias, rel) for table, alias in query.tables for rel in self.related(table)
                       if rel[0] not in {t for t, _ in query.tables}]
            if not options:
                break
            alias, (other, mine, theirs) = self.pick(options)
            new = f"t{len(query.tables) + 1}"
            kind = self.pick(["JOIN", "JOIN", "LEFT JOIN"])
            query.tables.append((other, new))
            query.joins.append((kind, f"{alias}.{mine} = {new}.{theirs}"))
        for _ in range(self.draw(st.integers(0, 3))):
            query.where.append(self.predicate(query))
        if self.draw(st.integers(0, 99)) < 30:
            table, alias = self.pick(query.tables)
            query.grouping = f"{alias}.{self.pick(self.columns(table))}"
        return query

    def case(self) -> dict[str, str]:
        query = self.base()
        variant = self.pick(list(self.variants))
        if variant == "inner" and not any(kind == "LEFT JOIN" for kind, _ in query.joins):
            variant = self.pick([v for v in self.variants if v != "inner"] or ["conjunct"]) if not query.joins \
                else variant
            if query.joins:
                at = self.draw(st.integers(0, len(query.joins) - 1))
                query.joins[at] = ("LEFT JOIN", query.joins[at][1])
        if variant == "range" and not query.ranges:
            table, alias = self.pick(query.tables)
            column = self.pick(self.columns(table))
            query.where.append(self._range(query, table, alias, column, self.values.by_column[(table, column)]))
        sql = query.sql()
        restricted = Query(list(query.tables), list(query.joins), list(query.where), list(query.ranges),
                           query.grouping)
        if variant == "conjunct":
            restricted.where.append(self.predicate(restricted))
        elif variant == "range":
            position, column, values, low, high = self.pick(query.ranges)
            new_low = self.draw(st.integers(low, high))
            new_high = self.draw(st.integers(new_low, high))
            if (new_low, new_high) == (low, high):
                new_low = new_high = high if self.draw(st.booleans()) else low
            if self.draw(st.integers(0, 3)) == 0:   # one bound only: a half-open narrowing
                restricted.where[position] = f"({column} >= {_literal(values[new_low])} AND " \
                                             f"{column} <= {_literal(values[new_high])})"
            else:
                restricted.where[position] = f"{column} BETWEEN {_literal(values[new_low])} AND " \
                                             f"{_literal(values[new_high])}"
        elif variant == "inner":
            lefts = [i for i, (kind, _) in enumerate(query.joins) if kind == "LEFT JOIN"]
            at = self.pick(lefts)
            restricted.joins[at] = ("JOIN", query.joins[at][1])
        else:
            table, alias = self.pick(query.tables)
            other, mine, theirs = self.pick(self.related(table))
            inner = f"SELECT 1 FROM {other} AS s1 WHERE s1.{theirs} = {alias}.{mine}"
            if self.draw(st.booleans()):
                column = self.pick(self.columns(other))
                values = self.values.by_column[(other, column)]
                inner += f" AND s1.{column} >= {_literal(values[self.draw(st.integers(0, len(values) - 1))])}"
            restricted.where.append(f"EXISTS ({inner})")
        return {"sql": sql, "restricted": restricted.sql(), "variant": variant}


@st.composite
def cert_cases(draw, schema: Schema, values: Values, variants: tuple[str, ...] = VARIANTS):  # type: ignore[no-untyped-def]
    return CertGenerator(draw, schema, values, variants).case()


# -- the oracle -----------------------------------------------------------------------------------

def group_keys(memo, schema: Schema) -> dict[Any, float]:  # type: ignore[no-untyped-def]
    """Per restriction-ordered key (see the module docstring), the least estimate of the memo's
    groups with that key."""
    from cbo.ir.operators import Aggregate, Filter, Join, Project, Scan

    keys: dict[int, Any] = {}

    def key(group) -> Any:  # type: ignore[no-untyped-def]
        group = group.find()
        if group.id in keys:
            return keys[group.id]
        keys[group.id] = None   # (no cycles: inputs are other groups)
        expr = group.first
        found: Any = None
        if isinstance(expr, Scan):
            names = [c for c, _ in schema.table(expr.table.split(".")[-1]).columns]
            first = expr.columns[0]
            found = ("rows", frozenset({(expr.table, first.id - names.index(expr.column_names[0]))}))
        elif isinstance(expr, (Filter, Project)):
            found = key(expr.children[0].group)
        elif isinstance(expr, Join):
            left = key(expr.children[0].group)
            if expr.kind in ("semi", "mark"):
                found = left
            elif expr.kind in ("inner", "left", "right", "full"):
                right = key(expr.children[1].group)
                if left is not None and right is not None and left[0] == right[0] == "rows":
                    found = ("rows", left[1] | right[1])
        elif isinstance(expr, Aggregate):
            below = key(expr.children[0].group)
            if below is not None and below[0] == "rows":
                found = ("aggregate", below[1], tuple(sorted(c.id for c in expr.group_by)))
        keys[group.id] = found
        return found

    least: dict[Any, float] = {}
    for group in memo:
        found = key(group)
        if found is not None:
            least[found] = min(least.get(found, float("inf")), group.rows)
    return least


def describe_key(key: Any) -> str:
    tables = ", ".join(f"{t.split('.')[-1]}@{base}" for t, base in sorted(key[1]))
    return f"{key[0]} of {{{tables}}}" + (f" grouped on columns {list(key[2])}" if key[0] == "aggregate" else "")


@dataclass
class CertReport:
    plans: int = 2
    tlp: bool = False
    reference: str = "none"
    subcases: list[dict] = field(default_factory=list)
    references: dict[str, int] | None = None
    outcome: str = "consistent"
    message: str = ""
    compared: int = 0


class CertChecker:
    """Plans each case's two queries over TPC-H's schema (empty files) with SF 1's statistics."""

    def __init__(self, workdir: Path, variants: tuple[str, ...] = VARIANTS):
        from cbo.estimate import Estimator
        from cbo.planner import Planner
        from cbo.sources.catalog import load_catalog

        self.schema = tpch()
        directory = workdir / "schema"
        directory.mkdir(parents=True, exist_ok=True)
        statistics = _statistics()
        self.planner = Planner(load_catalog(self.schema.write(directory)), "duckdb", estimator=Estimator(statistics))
        self.values = Values.of(statistics)
        self.variants = variants
        self.compared = 0
        self.refused = 0

    def cases(self) -> st.SearchStrategy[dict]:
        return cert_cases(self.schema, self.values, self.variants)

    def reference_counts(self) -> dict[str, int]:
        return {}

    def close(self) -> None:
        pass

    def check(self, case: dict) -> CertReport:
        from cbo.errors import CboError

        try:
            base = self.planner.plan(case["sql"])
            restricted = self.planner.plan(case["restricted"])
        except CboError as exc:   # a query cbo refuses is no test of its estimates
            self.refused += 1
            return CertReport(outcome="refused", message=str(exc))
        assert base.optimized is not None and restricted.optimized is not None
        ours, theirs = group_keys(base.optimized.memo, self.schema), group_keys(restricted.optimized.memo, self.schema)
        shared = [k for k in theirs if k in ours]
        self.compared += len(shared)
        for key in shared:
            if theirs[key] > ours[key] * (1 + TOLERANCE) + TOLERANCE:
                raise Inconsistent(f"cert ({case['variant']}): the more restrictive query estimates "
                                   f"{theirs[key]:.6g} rows for the {describe_key(key)}, the query "
                                   f"{ours[key]:.6g}\n  query:      {case['sql']}\n  restricted: {case['restricted']}")
        return CertReport(compared=len(shared), outcome=f"consistent_{case['variant']}")
