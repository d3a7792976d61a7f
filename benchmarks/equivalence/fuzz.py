"""The fuzzing families of the equivalence benchmark, in the spirit of SQLsmith and SQLancer:

* ``fuzz``: random valid queries over a schema (``querygen``) on tiny random tables that keep
  the schema's keys (``schemas``). cbo's answer (planned, written as DuckDB SQL, run on DuckDB)
  must be DuckDB's answer to the query as written.
* ``mutants``: a valid query (one of the 22 TPC-H queries, or a ``fuzz`` query) with one to
  three token mutations (a token deleted, doubled, swapped with its neighbour, replaced or
  inserted). cbo must answer it correctly or refuse it with a one-line error: never an
  internal error, never a wrong answer, never run past the time limit.

Every case runs in a worker process under a deadline (``benchmarks.deadline``): a query that
hangs the planner costs the time limit, not the run. What does not fail a case is counted by
outcome: a refusal (by its message), an error DuckDB gives too, an answer where DuckDB rejects
the query (cbo reads a wider language than DuckDB here), a DuckDB internal error.

A case is ``{"sql", "tables", "seed"}``, JSON like every family's, so a failure is one line of
``tests/data/equivalence_regressions.txt``.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from benchmarks.deadline import CallFailed, DeadlineExceeded, Worker
from benchmarks.equivalence.querygen import fuzz_queries
from benchmarks.equivalence.schemas import SCHEMAS, Schema, table_data, to_arrow
from benchmarks.through_cbo import CboOutcome, first_line, through_cbo
from cbo.answers import compare, is_ordered

DIALECT = "duckdb"   # the reference runs the query as written: cbo reads it as DuckDB would


class Mismatch(AssertionError):
    """cbo answered otherwise than DuckDB."""


class InternalError(Exception):
    """cbo failed otherwise than with a one-line error for the user."""


class Hang(Exception):
    """cbo (or the reference) ran past the time limit."""


# -- the child process's side -----------------------------------------------------------------------

class FuzzRunner:
    """In the worker's child: the schema's catalog (empty Parquet files: planning reads no rows),
    a planner over it, and one DuckDB connection whose tables are the case's rows."""

    def __init__(self, schema_name: str, directory: str):
        import duckdb

        from cbo.planner import Planner
        from cbo.sources.catalog import load_catalog

        self.schema = SCHEMAS[schema_name]()
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self.planner = Planner(load_catalog(self.schema.write(path)), DIALECT)
        self.duckdb = duckdb
        self.connection = self._connect()

    def _connect(self):
        return self.duckdb.connect(config={"threads": 1})

    def run(self, sql: str, tables: dict[str, list[list[Any]]]) -> tuple[Any, CboOutcome]:
        """DuckDB's answer to ``sql`` as written (rows, or ``("error", message)``, or
        ``("fault", message)`` for DuckDB's own internal error) and cbo's outcome."""
        from benchmarks.equivalence.tables import is_engine_fault

        for table in self.schema.tables:
            self.connection.register(table.name, to_arrow(table, tables.get(table.name, [])))
        try:
            reference: Any = self.connection.execute(sql).fetchall()
        except self.duckdb.Error as exc:
            reference = ("fault" if is_engine_fault(exc) else "error", first_line(exc))
            if reference[0] == "fault":   # an internal error invalidates the database
                self.connection = self._connect()
                for table in self.schema.tables:
                    self.connection.register(table.name, to_arrow(table, tables.get(table.name, [])))
        outcome = through_cbo(self.planner, lambda text: self.connection.execute(text).fetchall(), sql)
        if outcome.kind == "engine_error" and is_engine_fault_text(outcome.message):
            self.connection = self._connect()
        return reference, outcome


def is_engine_fault_text(message: str) -> bool:
    return "INTERNAL Error" in message or "unordered_map::at" in message


def make_fuzz_runner(schema_name: str, directory: str) -> FuzzRunner:
    from benchmarks.through_cbo import warm_up

    warm_up(DIALECT)
    return FuzzRunner(schema_name, directory)


# -- mutations ------------------------------------------------------------------------------------------

VOCABULARY = ["SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "HAVING", "JOIN", "LEFT", "RIGHT", "FULL",
              "OUTER", "CROSS", "ON", "USING", "AND", "OR", "NOT", "NULL", "IN", "EXISTS", "BETWEEN", "LIKE", "IS",
              "CASE", "WHEN", "THEN", "ELSE", "END", "DISTINCT", "ALL", "ANY", "UNION", "INTERSECT", "EXCEPT",
              "LIMIT", "OFFSET", "FETCH FIRST 2 ROWS ONLY", "AS", "WITH", "(", ")", ",", "*", "+", "-", "/", "%",
              "||", "=", "<", ">", "<>", "<=", ">=", ".", "0", "1", "-1", "''", "'x'", "1e308", "9223372036854775808",
              "DATE '1995-01-01'", "INTERVAL '1' DAY", "count(*)", "sum", "avg", "min", "max", "nullif", "coalesce",
              "cast", "extract", "substring", "TRUE", "FALSE", "ASC", "DESC", "NULLS FIRST", "TABLESAMPLE", "LATERAL",
              "OVER", "PARTITION BY", "SELECT 1", "(SELECT 1)", "lineitem", "orders", "l_orderkey", "o_orderkey",
              "n_name", "x", "a1", ";"]
# Tokens that can stand for each other: replacing one by its kin mostly keeps the query valid
# (a join of another kind, another comparison, aggregate or constant), where a random token
# mostly makes a syntax error.
KIN = [["=", "<>", "<", "<=", ">", ">=", "!="], ["+", "-", "*"], ["AND", "OR"],
       ["JOIN", "LEFT", "RIGHT", "FULL", "INNER", "CROSS"], ["UNION", "INTERSECT", "EXCEPT"],
       ["sum", "avg", "min", "max", "count"], ["ASC", "DESC"], ["ALL", "DISTINCT", "ANY"], ["EXISTS", "NOT EXISTS"],
       ["IN", "NOT IN"], ["IS", "IS NOT"], ["0", "1", "-1", "2", "0.5", "100000", "NULL"], ["FIRST", "LAST"],
       ["WHERE", "HAVING"], ["LIKE", "NOT LIKE"], ["BETWEEN", "NOT BETWEEN"]]
_KIN_OF = {word.lower(): group for group in KIN for word in group}
OPERATIONS = ("delete", "duplicate", "swap", "replace", "insert", "kin", "kin", "kin")


def tokens(sql: str) -> list[str]:
    """The query's tokens as they are written (a string literal keeps its quotes)."""
    import sqlglot

    found = sqlglot.tokenize(sql, read=DIALECT)
    return [sql[t.start:t.end + 1] for t in found]


def mutate(sql: str, mutations: list[tuple[str, int, int]]) -> str:
    """``sql`` with each mutation (operation, position, word index) applied in turn;
    positions wrap around the token list, word indexes around the vocabulary (or the kin)."""
    words = tokens(sql)
    for operation, position, word in mutations:
        if not words:
            words = [VOCABULARY[word % len(VOCABULARY)]]
            continue
        at = position % len(words)
        if operation == "delete" and len(words) > 1:
            del words[at]
        elif operation == "duplicate":
            words.insert(at, words[at])
        elif operation == "swap" and at + 1 < len(words):
            words[at], words[at + 1] = words[at + 1], words[at]
        elif operation == "replace":
            words[at] = VOCABULARY[word % len(VOCABULARY)]
        elif operation == "kin":
            # the first token at or after ``at`` that has kin becomes one of them
            for index in list(range(at, len(words))) + list(range(at)):
                group = _KIN_OF.get(words[index].lower())
                if group is not None:
                    others = [w for w in group if w.lower() != words[index].lower()]
                    words[index] = others[word % len(others)]
                    break
        else:
            words.insert(at, VOCABULARY[word % len(VOCABULARY)])
    return " ".join(words)


def tpch_queries() -> list[str]:
    from cbo.workloads.tpch_queries import all_queries

    return [q.sql.strip().rstrip(";") for q in all_queries()]


@st.composite
def mutant_queries(draw, schema: Schema):
    """A valid query (TPC-H's 22, or a generated one) with one to three token mutations."""
    base = draw(st.one_of(st.sampled_from(tpch_queries()), fuzz_queries(schema))) if schema.name == "tpch" \
        else draw(fuzz_queries(schema))
    mutations = draw(st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 10 ** 4),
                                        st.integers(0, len(VOCABULARY) - 1)), min_size=1, max_size=3))
    return mutate(base, mutations)


# -- the harness's side ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class FuzzFamily:
    name: str
    summary: str
    schema: str = "tpch"
    mutants: bool = False
    timeout: float = 30.0

    def cases(self) -> st.SearchStrategy[dict]:
        schema = SCHEMAS[self.schema]()
        queries = mutant_queries(schema) if self.mutants else fuzz_queries(schema)
        return st.fixed_dictionaries({"sql": queries, "tables": table_data(schema), "seed": st.just(0)})


FUZZ_FAMILIES = {f.name: f for f in [
    FuzzFamily("fuzz", "random valid queries over TPC-H's schema (joins, subqueries, set operations, grouping, "
               "ORDER BY/LIMIT, NULLs and edge values) on tiny tables that keep its keys: cbo's answer is DuckDB's"),
    FuzzFamily("fuzz-tpcds", "the fuzz family's queries over TPC-DS's store star (store_sales, store_returns and "
               "their date, item, customer and store dimensions; decimal(7, 2) prices)", schema="tpcds"),
    FuzzFamily("mutants", "TPC-H's 22 and generated queries with 1-3 token mutations: a correct answer or a "
               "one-line error, never an internal error, a wrong answer or a hang", mutants=True),
]}


@dataclass
class FuzzReport:
    """What one case came to (the equivalence runner counts ``outcome`` and ``message``)."""
    plans: int = 0
    tlp: bool = False
    reference: str = "duckdb"
    subcases: list[dict] = field(default_factory=list)
    references: dict[str, int] | None = None
    outcome: str = "answered"
    message: str = ""


_POSITION = re.compile(r"line \d+, column \d+: ")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(?![\w.])")


def message_class(message: str) -> str:
    """A message without what varies between queries: its place, quoted names, numbers."""
    return _NUMBER.sub("N", _QUOTED.sub("'…'", _POSITION.sub("", first_line(message))))[:100]


class FuzzChecker:
    """Checks cases of a fuzzing family: each runs in the worker under the family's deadline."""

    def __init__(self, family: FuzzFamily, workdir: Path, timeout: float | None = None, spark_every: int = 0):
        self.family = family
        self.timeout = timeout or family.timeout
        self.workdir, self.spark_every = workdir, spark_every
        self.spark: Counter = Counter()      # the Spark sample's outcomes
        self.spark_problems: list[dict] = []
        self.worker = Worker(make_fuzz_runner, (family.schema, str(workdir / "schema")))
        self.queries: set[str] = set()
        self.outcomes: Counter = Counter()

    def reference_counts(self) -> dict[str, int]:
        return {"duckdb_internal_errors": self.outcomes["reference_fault"]}

    def close(self) -> None:
        self.worker.close()
        if self.spark:
            from cbo.engines.spark import stop_session

            stop_session()

    def check(self, case: dict) -> FuzzReport:
        sql = case["sql"]
        self.queries.add(sql)
        try:
            reference, outcome = self.worker.call("run", sql, case["tables"], timeout=self.timeout)
        except DeadlineExceeded as exc:
            raise Hang(f"{self.family.name}: {exc}") from None
        except CallFailed as exc:
            raise InternalError(f"the harness's worker failed: {exc}\n{exc.trace}") from None
        report = self._judge(sql, reference, outcome)
        self.outcomes[report.outcome] += 1
        if self.spark_every and report.outcome == "answered" and self.outcomes["answered"] % self.spark_every == 0:
            self._on_spark(case, reference)
        return report

    def _on_spark(self, case: dict, expected: list[tuple[Any, ...]]) -> None:
        """The case through cbo on Spark (local mode), over Parquet files of its rows: counted
        and listed, not failed (the sample says where Spark's semantics and DuckDB's part)."""
        from cbo.app.session import Session
        from cbo.errors import CboError

        directory = self.workdir / "spark" / str(sum(self.spark.values()))
        directory.mkdir(parents=True)
        catalog = SCHEMAS[self.family.schema]().write(directory, case["tables"])
        try:
            _, rows = Session(catalog, engine="spark", dialect=DIALECT).query(case["sql"])
        except CboError as exc:
            self.spark["error"] += 1
            self.spark_problems.append({"sql": case["sql"], "tables": case["tables"], "problem": first_line(exc)})
            return
        verdict = compare(expected, rows, ordered=_ordered(case["sql"]))
        self.spark["answered" if verdict.matches else "differs"] += 1
        if not verdict.matches:
            self.spark_problems.append({"sql": case["sql"], "tables": case["tables"], "problem": verdict.detail})

    def _judge(self, sql: str, reference: Any, outcome: CboOutcome) -> FuzzReport:
        answered = not isinstance(reference, tuple)
        if isinstance(reference, tuple) and reference[0] == "fault":
            return FuzzReport(reference="none", outcome="reference_fault", message=reference[1])
        if outcome.kind == "internal":
            raise InternalError(f"internal error: {outcome.summary}\n{outcome.trace}")
        if outcome.kind == "refused":
            if "\n" in outcome.message.strip() or not outcome.message.strip():
                raise InternalError(f"a refusal that is not one line: {outcome.message[:500]!r}")
            return FuzzReport(outcome="refused_duckdb_answers" if answered else "refused", message=outcome.message)
        if outcome.kind == "engine_error":
            if is_engine_fault_text(outcome.message):
                return FuzzReport(reference="none", outcome="reference_fault", message=outcome.message)
            if answered:
                raise InternalError(f"DuckDB rejects the SQL cbo wrote ({outcome.message}) but answers the query "
                                    f"as written\ncbo's SQL: {outcome.sql}")
            return FuzzReport(outcome="error_as_reference", message=outcome.message)
        assert outcome.rows is not None
        if not answered:
            return FuzzReport(outcome="accepted_duckdb_rejects", message=reference[1])
        ordered = _ordered(sql)
        verdict = compare(reference, outcome.rows, ordered=ordered)
        if not verdict.matches:
            raise Mismatch(f"{self.family.name}: cbo's answer differs from DuckDB's: {verdict.detail}\n"
                           f"cbo's SQL: {outcome.sql}")
        return FuzzReport(plans=1)


def _ordered(sql: str) -> bool:
    try:
        return is_ordered(sql, DIALECT)
    except Exception:   # noqa: BLE001 - a mutant sqlglot cannot read again: compare as a multiset
        return False


def make_checker(family: str, workdir: Path | None = None):
    """The checker of a fuzzing family, its cases and what to close when the run ends."""
    spec = FUZZ_FAMILIES[family]
    owned = None
    if workdir is None:
        owned = tempfile.TemporaryDirectory(prefix=f"cbo-{family}-")
        workdir = Path(owned.name)
    checker = FuzzChecker(spec, workdir)

    def close() -> None:
        checker.close()
        if owned is not None:
            owned.cleanup()

    return checker, spec.cases(), close
