"""The ``pushdown`` family: random same-source and cross-source join trees over a real
PostgreSQL and MariaDB (cbo's throwaway servers under ``.cache/equivalence``, never the user's)
and a Parquet table, run on Spark through cbo under ``join_pushdown_strategy`` EAGER (every
subtree the source can evaluate pushed), NONE (joins in Spark over per-table reads) and AUTOMATIC
(cost); each answer must be DuckDB's on the same rows. Shared with
``tests/integration/test_join_pushdown_property.py``.

Three small tables of two nullable integer columns live in the database (``p1``, ``p2``, ``p3``),
one more in Parquet (``q1``). Each query joins two or three of them (self-joins too) with inner,
left, right, full, cross, semi (EXISTS) and anti (NOT EXISTS) joins, sometimes under a DISTINCT
or an aggregation. TLP is not applied here (each partition is three more Spark queries).

A case of the benchmark is one set of rows and 1-16 queries over it, each query with the rows
counted as a case: the rows are loaded once (database, Parquet, DuckDB), and every plan of
every query (three strategies each) runs in one Spark job (``cbo.Session.run_together``), each
plan's Spark statement unchanged as a branch of a UNION ALL, so every pushed query still runs
in the real database through Spark's JDBC reader. Spark's fixed cost per query (analysis,
planning, a job's scheduling), not the few rows, was what a case cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st
from psycopg import sql as pgsql
from sqlglot import exp

from benchmarks.equivalence.families import CaseReport, Mismatch
from benchmarks.equivalence.tables import is_engine_fault
from cbo.answers import compare
from cbo.connectors.mariadb import client as mariadb
from cbo.connectors.postgres import client as postgres

SCHEMA = "cbo_pushdown_property"
REMOTE = ("p1", "p2", "p3")
LOCAL = ("q1",)
VALUES = st.one_of(st.none(), st.integers(0, 3))
ROWS = st.lists(st.tuples(VALUES, VALUES), max_size=6)
KINDS = ("inner", "left", "right", "full", "cross", "semi", "anti")
STRATEGIES = ("EAGER", "NONE", "AUTOMATIC")
QUERIES_PER_CASE = 16   # queries over one set of rows, run together (see PushdownChecker)


def catalog_text(directory: Path, dialect: str, server: Path) -> str:
    lines = ['[sources.db]', 'type = "jdbc"', f'local_server = "{server}"', f'dialect = "{dialect}"',
             f'schema = "{SCHEMA}"']
    lines += [f"[sources.db.tables.{name}]" for name in REMOTE]
    lines += ['[sources.lake]', 'type = "spark"']
    for name in LOCAL:
        lines += [f"[sources.lake.tables.{name}]", f'path = "{directory / (name + ".parquet")}"']
    return "\n".join(lines) + "\n"


class Postgres:
    dialect = "postgres"

    def __init__(self, address, keep: bool = False) -> None:  # type: ignore[no-untyped-def]
        self.address = address
        self.keep = keep          # one connection for every reset (a long run), else one per reset
        self._kept: Any = None

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if not self.keep:
            with postgres.connect(self.address) as conn:
                yield conn
            return
        if self._kept is None or self._kept.closed:
            self._kept = postgres.connect(self.address)
        yield self._kept

    def reset(self, data: dict[str, list[tuple]] | None) -> None:
        """Create the tables (data None) or replace their rows."""
        with self._connection() as conn:
            if data is None:
                conn.execute(pgsql.SQL("drop schema if exists {} cascade").format(pgsql.Identifier(SCHEMA)))
                conn.execute(pgsql.SQL("create schema {}").format(pgsql.Identifier(SCHEMA)))
            for name in REMOTE:
                table = pgsql.Identifier(SCHEMA, name)
                if data is None:
                    conn.execute(pgsql.SQL("create table {} (a integer, b integer)").format(table))
                    continue
                conn.execute(pgsql.SQL("truncate {}").format(table))
                if data[name]:
                    with conn.cursor() as cur:
                        cur.executemany(pgsql.SQL("insert into {} values (%s, %s)").format(table), data[name])

    def query(self, text: str) -> list[tuple[Any, ...]]:
        """Rows of a query over the schema's tables, named unqualified."""
        with postgres.connect(self.address) as conn:
            conn.execute(pgsql.SQL("set search_path to {}").format(pgsql.Identifier(SCHEMA)))
            return [tuple(r) for r in conn.execute(text).fetchall()]

    def drop(self) -> None:
        with self._connection() as conn:
            conn.execute(pgsql.SQL("drop schema if exists {} cascade").format(pgsql.Identifier(SCHEMA)))
        if self._kept is not None:
            self._kept.close()


class MariaDB:
    dialect = "mysql"

    def __init__(self, address, keep: bool = False) -> None:  # type: ignore[no-untyped-def]
        self.address = address
        self.keep = keep          # one connection for every reset (a long run), else one per reset
        self._kept: Any = None

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if not self.keep:
            with mariadb.connect(self.address) as conn:
                yield conn
            return
        if self._kept is None or not self._kept.open:
            self._kept = mariadb.connect(self.address)
        yield self._kept

    def _table(self, name: str) -> str:
        return exp.table_(name, db=SCHEMA, quoted=True).sql(dialect="mysql")

    def reset(self, data: dict[str, list[tuple]] | None) -> None:
        with self._connection() as conn, conn.cursor() as cur:
            database = exp.to_identifier(SCHEMA, quoted=True).sql(dialect="mysql")
            if data is None:
                cur.execute(f"drop database if exists {database}")
                cur.execute(f"create database {database}")
            for name in REMOTE:
                if data is None:
                    cur.execute(f"create table {self._table(name)} (a integer, b integer)")
                    continue
                cur.execute(f"truncate table {self._table(name)}")
                if data[name]:
                    cur.executemany(f"insert into {self._table(name)} values (%s, %s)", data[name])

    def drop(self) -> None:
        with self._connection() as conn, conn.cursor() as cur:
            cur.execute(f"drop database if exists {exp.to_identifier(SCHEMA, quoted=True).sql(dialect='mysql')}")
        if self._kept is not None:
            self._kept.close()


def arrow(rows: list[tuple]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [(), ()]
    return pa.table({"a": pa.array(columns[0], pa.int32()), "b": pa.array(columns[1], pa.int32())})


def write_local(directory: Path, data: dict[str, list[tuple]]) -> None:
    for name, rows in data.items():
        pq.write_table(arrow(rows), directory / f"{name}.parquet")


def load(directory: Path, database, data: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:  # type: ignore[no-untyped-def]
    """The rows into the database and the Parquet file; a DuckDB connection holding all of them."""
    database.reset(data)
    write_local(directory, {name: data[name] for name in LOCAL})
    reference = duckdb.connect()
    for name in REMOTE + LOCAL:
        reference.execute(f"create table {name} (a integer, b integer)")
        if data[name]:
            reference.executemany(f"insert into {name} values (?, ?)", data[name])
    return reference


@st.composite
def join_queries(draw) -> str:  # type: ignore[no-untyped-def]
    tables = draw(st.lists(st.sampled_from(REMOTE + LOCAL), min_size=2, max_size=3))
    selected = ["x0"]
    joins, where = [], []
    for i, table in enumerate(tables[1:], start=1):
        kind = draw(st.sampled_from(KINDS))
        other = draw(st.sampled_from(selected))   # a relation the FROM clause has (not an EXISTS's)
        condition = f"x{i}.a = {other}.a"
        if draw(st.booleans()):
            condition += f" and x{i}.b <> {other}.b"
        if kind in ("semi", "anti"):
            exists = f"exists (select 1 from {table} x{i} where {condition})"
            where.append(exists if kind == "semi" else "not " + exists)
            continue
        if kind == "cross":
            joins.append(f"cross join {table} x{i}")
        else:
            joins.append(f"{kind} join {table} x{i} on {condition}")
        selected.append(f"x{i}")
    columns = [f"{x}.{c} as {x}_{c}" for x in selected for c in ("a", "b")]
    body = f"from {tables[0]} x0 " + " ".join(joins) + (" where " + " and ".join(where) if where else "")
    shape = draw(st.sampled_from(["rows", "distinct", "aggregate"]))
    if shape == "distinct":
        return f"select distinct {', '.join(columns)} {body}"
    if shape == "aggregate":
        return f"select x0.a, count(*) as n, sum({selected[-1]}.b) as s {body} group by x0.a"
    return f"select {', '.join(columns)} {body}"


class PushdownChecker:
    """Both databases' tables created once; per case, one set of rows loaded where the case's
    dialect says, and each of the case's queries (1 to ``QUERIES_PER_CASE``) planned under the
    three strategies and run on Spark together (``cbo.Session.run_together``, one Spark job for
    all of them: Spark's cost per query, not the few rows, is what a case cost). Each query
    with the case's rows counts as a case of its own."""

    def __init__(self, workdir: Path, servers: Path):
        import cbo
        from cbo.sources.catalog import load_catalog
        from cbo.connectors.mariadb.server import LocalMariaDB
        from cbo.connectors.postgres.server import LocalPostgres

        self.servers = [LocalPostgres(servers / "pushdown" / "postgres"),
                        LocalMariaDB(servers / "pushdown" / "mariadb")]
        self.setups: dict[str, tuple[Path, Any, Any]] = {}
        self.duckdb_faults = self.postgres_answers = 0
        # Planning reads no rows (no statistics are collected) and is deterministic: each
        # (dialect, strategy, query) is planned once. One DuckDB connection holds the rows.
        self._planned: dict[tuple[str, str, str], Any] = {}
        self._reference: duckdb.DuckDBPyConnection | None = None
        self.queries: set[str] = set()
        self.planned = self.reused = self.alone = 0
        self.queries_per_example = (1 + QUERIES_PER_CASE) // 2   # about, for the run's batch sizes
        for server, dialect in zip(self.servers, ("postgres", "mysql")):
            server.start()
            directory = workdir / dialect
            directory.mkdir()
            path = directory / "catalog.toml"
            path.write_text(catalog_text(directory, dialect, server.root))
            source = load_catalog(path).sources["db"]
            database = Postgres(postgres.address_of(source), keep=True) if dialect == "postgres" \
                else MariaDB(mariadb.address_of(source), keep=True)
            database.reset(None)
            write_local(directory, {name: [] for name in LOCAL})
            # One session per dialect: the strategy is a planning setting, set before each planning.
            self.setups[dialect] = (directory, database, cbo.Session(path))

    def cases(self) -> st.SearchStrategy[dict]:
        queries = st.integers(1, QUERIES_PER_CASE).flatmap(
            lambda n: st.lists(join_queries(), min_size=n, max_size=n))
        return st.fixed_dictionaries({"queries": queries, "tables": st.fixed_dictionaries(
            {name: ROWS for name in REMOTE + LOCAL}), "seed": st.just(0),
            "dialect": st.sampled_from(["postgres", "mysql"])})

    def _load(self, directory: Path, database, data: dict[str, list[tuple]]) -> None:  # type: ignore[no-untyped-def]
        """``load`` for a long run: the rows into the database and the Parquet file, and as
        Arrow tables into one DuckDB connection kept for the run."""
        database.reset(data)
        write_local(directory, {name: data[name] for name in LOCAL})
        self._fill_reference(data)

    def _fill_reference(self, data: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:
        if self._reference is None:
            self._reference = duckdb.connect(config={"threads": 1})
        for name in REMOTE + LOCAL:
            self._reference.register(name, arrow(data[name]))
        return self._reference

    def _plan(self, dialect: str, strategy: str, session, sql: str):  # type: ignore[no-untyped-def]
        key = (dialect, strategy, sql)
        if key in self._planned:
            self.reused += 1
        else:
            if len(self._planned) >= 2000:
                self._planned.clear()
            session.set(join_pushdown_strategy=strategy)
            self._planned[key] = session.planner.plan(sql)
            self.planned += 1
        return self._planned[key]

    def _expected(self, sql: str, dialect: str, database, data: dict[str, list[tuple]]):  # type: ignore[no-untyped-def]
        """DuckDB's answer (PostgreSQL's where DuckDB fails internally and every table is
        PostgreSQL's), and which engine gave it; None where neither can."""
        try:
            reference = self._reference if self._reference is not None else self._fill_reference(data)
            return reference.execute(sql).fetchall(), "duckdb"
        except duckdb.Error as exc:
            if not is_engine_fault(exc):
                raise
        self.duckdb_faults += 1
        assert self._reference is not None
        self._reference.close()   # an internal error invalidates the database it happened in
        self._reference = None
        if dialect != "postgres" or any(f" {t} " in f" {sql} " for t in LOCAL):
            return None, "none"
        self.postgres_answers += 1
        return database.query(sql), "postgres"   # every table is PostgreSQL's: it answers

    def check(self, case: dict) -> CaseReport:
        dialect = case["dialect"]
        directory, database, session = self.setups[dialect]
        data = {name: [tuple(r) for r in rows] for name, rows in case["tables"].items()}
        self._load(directory, database, data)
        references: dict[str, int] = {}
        report = CaseReport(references=references)
        runs: list[tuple[str, str, Any, list[tuple]]] = []   # (query, strategy, plan, expected)
        for sql in case["queries"]:
            self.queries.add(sql)
            report.subcases.append({"sql": sql, "tables": case["tables"], "dialect": dialect})
            expected, reference = self._expected(sql, dialect, database, data)
            references[reference] = references.get(reference, 0) + 1
            if expected is not None:
                runs += [(sql, strategy, self._plan(dialect, strategy, session, sql), expected)
                         for strategy in STRATEGIES]
        for (sql, strategy, planned, expected), actual in zip(runs, self._run(session, [r[2] for r in runs])):
            verdict = compare(expected, actual, ordered=False)
            if not verdict.matches:
                raise Mismatch(f"pushdown ({dialect}, {strategy}): {verdict.detail}\n{sql}\n"
                               f"{planned.physical.text() if planned.physical else planned.plan}")
            report.plans += 1
        return report

    def _run(self, session, planned: list[Any]) -> list[list[tuple]]:  # type: ignore[no-untyped-def]
        """The plans' answers: together in one Spark job where their types allow; alone where
        not, or where the job failed (the plan that fails then raises on its own)."""
        from cbo.errors import CboError
        from cbo.exec.spark_exec import can_collect_together

        together = [i for i, p in enumerate(planned) if can_collect_together(p.plan)]
        answers: dict[int, list[tuple]] = {}
        try:
            # one shuffle partition: the count changes no answer, and a batch of tiny queries
            # spends most of its time scheduling tasks
            answers.update(zip(together, session.run_together([planned[i] for i in together], shuffle_partitions=1)))
        except CboError:
            pass
        for i, p in enumerate(planned):
            if i not in answers:
                self.alone += 1
                answers[i] = session.run(p)[1]
        return [answers[i] for i in range(len(planned))]

    def reference_counts(self) -> dict[str, int]:
        return {"duckdb_internal_errors": self.duckdb_faults, "answered_by_postgres": self.postgres_answers,
                "unanswered": self.duckdb_faults - self.postgres_answers}

    def close(self, stop_spark: bool = True) -> None:
        """Drop the tables and stop both servers (their data directories stay for the next
        run); stop Spark unless the caller shares it (a test session)."""
        if self._reference is not None:
            self._reference.close()
        for _, database, _ in self.setups.values():
            try:
                database.drop()
            except Exception:  # the server may be gone already; it is stopped next
                pass
        for server in self.servers:
            server.stop()
        if stop_spark:
            from cbo.engines.spark import stop_session

            stop_session()
