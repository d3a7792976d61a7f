"""How each configuration runs a query, within its time limit, and the reference engine's answer.

One :class:`Engines` serves an experiment: it starts what the configurations need when the
first of them needs it (Spark, the analyzed tables of ``spark-cbo``, the DSv2 catalogs, a
PostgreSQL connection) and, per query and configuration, returns a :class:`Prepared`: the run
to time and what is known before it runs (cbo's plan, its cost, its estimates).

**Dialects.** A configuration's engine reads the text in its own dialect: a workload's text is
given unchanged to the engines it is written for (``Workload.as_written``, or its own dialect),
and transpiled by sqlglot for the others. Text sqlglot cannot transpile, or an engine cannot
parse, is a parse failure of that configuration (``timing.Failure.PARSE``), never a crash.

**Time limits.** A run past its configuration's limit is cancelled: Spark's jobs by their job
group (repeated until the run ends, since a query may start several jobs), DuckDB's by
``interrupt``, PostgreSQL's by ``statement_timeout``. A run that finishes past its limit anyway
(work outside any job: planning, a JDBC bounds query) is a timeout too, so a limit means the
same for every engine.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from cbo.app.workload.configs import Config, Kind
from cbo.app.workload.spark_tables import DSV2_JOIN_PUSHDOWN, SPARK_CBO_CONF, SparkTables
from cbo.app.workload.timing import ParseFailure, Run, RunTimedOut, Timed
from cbo.app.workload.workloads import Progress, Workload, WorkloadQuery
from cbo.connectors import connector_of
from cbo.errors import CboError, SqlError
from cbo.sources.catalog import Catalog

if TYPE_CHECKING:
    from cbo.app.session import PlanView, Session

T = TypeVar("T")


@dataclass
class Prepared:
    run: Run
    facts: dict[str, Any] = field(default_factory=dict)   # cbo's plan: see ``plan_facts``


class Runner:
    """Runs each query in a worker thread of its own (one, kept for the experiment), while the
    calling thread waits: so a time limit is kept by the caller, which cancels the engine when it
    passes, and Ctrl-C reaches the caller at once, which cancels the engine and stops. (DuckDB,
    running a query in the main thread, takes the signal itself and may not act on it for a
    minute.) The seconds are measured in the worker, around the query alone."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cbo-workload-run")

    def run(self, work: Callable[[], T], limit_s: float | None, interrupt: Callable[[], object] | None = None
            ) -> tuple[T, float]:
        """``work()`` and its seconds; cancelled by ``interrupt`` once ``limit_s`` seconds have
        passed (and every 0.2 s after, until it stops): RunTimedOut when it was cancelled or
        finished late."""
        def timed() -> tuple[T, float]:
            started = time.perf_counter()
            value = work()
            return value, time.perf_counter() - started

        future = self.pool.submit(timed)
        fired = False
        try:
            try:
                value, seconds = future.result(timeout=limit_s)
            except FutureTimeout:
                fired = True
                while True:
                    _call(interrupt)
                    try:
                        value, seconds = future.result(timeout=0.2)
                        break
                    except FutureTimeout:
                        continue
        except KeyboardInterrupt:
            _call(interrupt)
            wait([future], timeout=30)   # the engine stops its query before we go
            raise
        except Exception as exc:
            if fired:
                raise RunTimedOut(limit_s or 0.0) from None
            if user_interrupt(exc):
                raise KeyboardInterrupt from None
            raise
        if fired or (limit_s is not None and seconds > limit_s):
            raise RunTimedOut(limit_s or 0.0)
        return value, seconds

    def close(self) -> None:
        self.pool.shutdown(wait=False)


def _call(interrupt: Callable[[], object] | None) -> None:
    if interrupt is not None:
        try:
            interrupt()
        except Exception:  # the engine may be between two of its jobs: the next call catches it
            pass


def user_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckDB's answer to Ctrl-C ("Query interrupted"), which would otherwise
    be recorded as the query's failure while the run went on."""
    import duckdb

    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and str(exc).strip().startswith("Query interrupted"))


def transpile(sql: str, read: str, write: str) -> str:
    """``sql`` written in ``read`` as ``write`` writes it; ParseFailure when sqlglot cannot."""
    import sqlglot
    from sqlglot.errors import ErrorLevel, SqlglotError

    try:
        statements = sqlglot.transpile(sql, read=read, write=write, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParseFailure(f"sqlglot cannot transpile it from {read} to {write}: {detail[:200]}") from None
    if len(statements) != 1:
        raise ParseFailure(f"expected one statement, sqlglot read {len(statements)} (from {read} to {write})")
    return statements[0]


def plan_facts(view: PlanView, planning_timed: bool) -> dict[str, Any]:
    """What a cbo configuration's result records of its plan: the EXPLAIN tree (text), its shape
    (the text without estimates: two plans are the same plan when their shapes are equal), the
    estimated rows of each node keyed by what it computes (``node_key``), the cost (predicted
    seconds), the planning time and the shuffle partition count."""
    planned = view.planned
    optimized = planned.optimized
    text = view.text()
    return {"plan": text, "shape": plan_shape(text), "estimates": node_estimates(view.info.to_json()),
            "cost": optimized.cost if optimized else None,
            "plan_ms": round(optimized.counters.elapsed_ms, 2) if optimized else None,
            "partitions": planned.partitions, "planning_timed": planning_timed}


_ESTIMATE = re.compile(r";?\s*est\. rows [\d,.]+")
_COLUMN_ID = re.compile(r"(?<=\w)#\d+")
# Lines of figures and reasons that move with the statistics, not with the plan.
_NOT_SHAPE = ("remote query: est. rows", "Cost profile:", "Warning:", "optimizer:", "estimate assumes:")


def plan_shape(text: str) -> str:
    """EXPLAIN text without what moves when the plan does not: estimated rows and bytes, the
    search's notes and the estimator's assumptions (their figures), the cost profile line, and
    the binder's column numbers (``c_name#2``: another binder numbers them otherwise); what is
    left is the plan's operators, conditions, strategies, exchanges and pushed SQL."""
    lines = []
    for line in text.splitlines():
        if line.strip().startswith(_NOT_SHAPE):
            continue
        line = _COLUMN_ID.sub("", _ESTIMATE.sub("", line)).replace("  ()", "").replace("(; ", "(")
        lines.append(line.rstrip())
    return "\n".join(lines)


# Operators that do not change which rows a sub-plan computes, only their columns or order.
_NEUTRAL = frozenset({"Project", "Sort", "Scan"})


def node_key(node: dict[str, Any]) -> str:
    """What a plan node computes, as comparable across plans: its operator, the tables below it,
    and how many of each row-changing operator lie below it (filters, aggregations, joins by
    kind). A join of orders and lineitem is the same sub-plan whichever order or strategy; one
    over an aggregation pushed below it (eager aggregation) is another, and so is one below a
    filter that another plan applies above it."""
    tables: list[str] = []
    below: dict[str, int] = {}
    stack = list(node.get("children", []))
    while stack:
        current = stack.pop()
        operator = str(current.get("operator"))
        if operator == "Scan" and current.get("table"):
            tables.append(str(current["table"]))
        if operator not in _NEUTRAL:
            below[operator] = below.get(operator, 0) + 1
        stack.extend(current.get("children", []))
    if node.get("operator") == "Scan" and node.get("table"):
        tables.append(str(node["table"]))
    inside = ",".join(f"{operator}x{count}" for operator, count in sorted(below.items()))
    return f"{node.get('operator')}[{','.join(sorted(tables))}]" + (f"{{{inside}}}" if inside else "")


def node_estimates(tree: dict[str, Any]) -> dict[str, float]:
    """Each node's estimated rows by ``node_key`` (a repeated key gets ``#2``, ``#3`` in
    pre-order)."""
    found: dict[str, float] = {}
    stack = [tree]
    while stack:
        node = stack.pop(0)
        key = node_key(node)
        if key in found:
            count = 2
            while f"{key}#{count}" in found:
                count += 1
            key = f"{key}#{count}"
        if node.get("estimated_rows") is not None:
            found[key] = float(node["estimated_rows"])
        stack[0:0] = list(node.get("children", []))
    return found


def is_parse_error(exc: BaseException) -> bool:
    """Whether an engine refused the text as unreadable (not a failure while running it)."""
    if isinstance(exc, SqlError) and str(exc).startswith("syntax error"):
        return True
    name = type(exc).__name__
    if name in ("ParseException", "ParserException", "SyntaxError"):
        return True
    from cbo.engines.spark import spark_failure

    reason = spark_failure(exc) or ""
    return "PARSE_SYNTAX_ERROR" in reason or "PARSE_EMPTY_STATEMENT" in reason


def classified(run: Callable[[], T]) -> T:
    """``run()``, with an engine's refusal to parse the text raised as ParseFailure."""
    try:
        return run()
    except (ParseFailure, RunTimedOut):
        raise
    except Exception as exc:
        if is_parse_error(exc):
            from cbo.engines.spark import spark_failure

            raise ParseFailure(spark_failure(exc) or str(exc).strip().splitlines()[0][:300]) from None
        raise


def settle(context: Any, wait_s: float = 600.0) -> bool:
    """Wait until no task of this application runs any more; False if some still did after
    ``wait_s``. A cancelled job is over at once, but each of its tasks stops only when it next
    checks whether it was killed, which a task deep in a loop (a nested-loop join over a batch of
    4,096 rows) does not do for a long while; until then it holds a core that the next run would
    be timed without."""
    tracker = context._jsc.sc().statusTracker()
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if sum(executor.numRunningTasks() for executor in tracker.getExecutorInfos()) == 0:
            return True
        time.sleep(0.25)
    return False


class Engines:
    """The configurations' engines over one catalog (see the module's docstring)."""

    def __init__(self, catalog: Catalog, workload: Workload, progress: Progress = lambda _: None):
        self.catalog = catalog
        self.workload = workload
        self.progress = progress
        self.sessions: dict[str, Session] = {}
        self._spark: Any = None
        self._tables: SparkTables | None = None
        self._ready: set[Kind] = set()
        self._duckdb: Any = None
        self._postgres: dict[str, Any] = {}
        self.setup: dict[str, Any] = {}   # what setting up took or found (ANALYZE seconds, settings)
        self.runner = Runner()

    # -- text per engine ---------------------------------------------------------------------------

    def text(self, query: WorkloadQuery, engine: str) -> str:
        """The query's text for ``engine``: as written, or transpiled (ParseFailure if it cannot be)."""
        workload = self.workload
        target = engine   # each engine's name is sqlglot's for its SQL
        if engine in workload.as_written or workload.dialect == target:
            return query.sql
        return transpile(query.sql, workload.dialect, target)

    # -- the engines, started when first needed ------------------------------------------------------

    @property
    def jdbc(self) -> bool:
        return bool(self.catalog.jdbc_sources())

    def spark(self) -> Any:
        if self._spark is None:
            from cbo.engines.spark import optimizer_settings, spark_session

            self._spark = spark_session(self.catalog.spark, need_jdbc=self.jdbc)
            self.setup["spark_settings"] = optimizer_settings(self._spark)
        return self._spark

    def session(self, config: Config) -> Session:
        if config.label not in self.sessions:
            from cbo.app.session import Session

            self.sessions[config.label] = Session(self.catalog, dialect=self.workload.dialect,
                                                  settings=config.settings_dict)
        return self.sessions[config.label]

    def check(self, configs: list[Config]) -> None:
        """Configurations that cannot run over this catalog: one line, before anything runs."""
        sources = {s.type for s in self.catalog.sources.values()}
        for config in configs:
            if config.kind is Kind.SPARK_CBO and self.jdbc:
                raise CboError("configuration spark-cbo runs over a catalog of Spark tables only (it needs Spark's "
                               "ANALYZE); this catalog has JDBC sources")
            if config.kind is Kind.SPARK_DSV2 and not self.jdbc:
                raise CboError("configuration spark-dsv2 needs a catalog with JDBC sources (it measures Spark's "
                               "JDBC pushdown); this catalog has none")
            if config.kind is Kind.POSTGRES:
                only = self.catalog.jdbc_sources()
                if sources != {"jdbc"} or len(only) != 1 or not connector_of(only[0]).native_baseline:
                    raise CboError("configuration postgres runs a catalog whose only source is one PostgreSQL "
                                   "database (e.g. TPC-H's all-postgres placement)")

    def warm_up(self, configs: list[Config]) -> None:
        """Start Spark, when a configuration runs on it, and run one small query through it
        (through cbo when a cbo configuration is there), untimed and without a limit: a fresh
        JVM's first query (class loading, code generation, the JIT cold) takes many times a
        warm one's, and would otherwise be the first query's cold run, cut by a time limit."""
        if not any(c.kind.engine == "spark" for c in configs):
            return
        if not list(self.catalog.tables()):
            return
        smallest = smallest_table(self.catalog)
        started = time.perf_counter()
        cbo = next((c for c in configs if c.kind is Kind.CBO), None)
        if cbo is not None:
            self.session(cbo).query(count_query(smallest, self.workload.dialect))
        else:
            from cbo.engines.spark import read_table

            read_table(self.spark(), self.catalog, self.catalog.table(smallest)).count()
        self.setup["spark_warm_up_s"] = round(time.perf_counter() - started, 3)

    def spark_tables(self, kind: Kind) -> SparkTables:
        if self._tables is None:
            self._tables = SparkTables(self.spark(), self.catalog)
        tables = self._tables
        if kind not in self._ready:
            if kind is Kind.SPARK_DEFAULT:
                if self.jdbc:
                    tables.prepare_views("jdbc")
                else:
                    tables.create("workload_plain")
            elif kind is Kind.SPARK_DSV2:
                tables.prepare_views("dsv2")
            elif kind is Kind.SPARK_CBO:
                tables.create("workload_analyzed")
                seconds = tables.analyze("workload_analyzed")
                self.setup["spark_cbo_analyze_s"] = round(seconds, 3)
                self.progress(f"Spark's ANALYZE took {seconds:.1f} s")
            self._ready.add(kind)
        return tables

    def _spark_run(self, text: str, kind: Kind, limit: float | None) -> Timed:
        tables = self.spark_tables(kind)
        spark = self.spark()
        if kind is Kind.SPARK_DEFAULT:
            work = (lambda: tables.run_views("jdbc", text, {})) if self.jdbc \
                else (lambda: tables.run("workload_plain", text, {}))
        elif kind is Kind.SPARK_CBO:
            work = lambda: tables.run("workload_analyzed", text, SPARK_CBO_CONF)
        else:
            work = lambda: tables.run_views("dsv2", text, {DSV2_JOIN_PUSHDOWN: "true"})
        return Timed(*self.on_spark(spark, lambda: classified(work), limit))

    def on_spark(self, spark: Any, work: Callable[[], T], limit: float | None) -> tuple[T, float]:
        """``work`` (which runs Spark jobs) within ``limit``, and its seconds: its jobs carry a
        name they are cancelled by. In a driver of our own that is a job group, set in the thread
        that runs them (a tag, ``addTag``, is looked up in the cancelling thread's own tags);
        Spark Connect keeps tags on the client and cancels by them from any thread."""
        from cbo.engines.spark import is_connect

        name = f"cbo-workload-{uuid.uuid4().hex[:12]}"
        if is_connect(spark):
            def tagged() -> T:
                spark.addTag(name)
                try:
                    return work()
                finally:
                    spark.removeTag(name)
            return self.runner.run(tagged, limit, lambda: spark.interruptTag(name))
        context = spark.sparkContext

        def grouped() -> T:
            context.setJobGroup(name, "cbo workload run", interruptOnCancel=True)
            try:
                return work()
            finally:
                for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
                    context.setLocalProperty(key, None)

        try:
            return self.runner.run(grouped, limit, lambda: context.cancelJobGroup(name))
        except RunTimedOut:
            if not settle(context):
                from cbo.app.progress import say

                say("warning: tasks of a cancelled Spark job still run: the next runs share the cores with them")
            raise

    def duckdb(self) -> Any:
        if self._duckdb is None:
            from cbo.engines.duckdb_engine import DuckDBEngine

            self._duckdb = DuckDBEngine(self.catalog)
            import duckdb

            self.setup["duckdb"] = duckdb.__version__
        return self._duckdb

    def postgres(self, config: Config) -> Any:
        if config.label not in self._postgres:
            from cbo.engines.native import PostgresNative

            self._postgres[config.label] = PostgresNative(self.catalog, timeout_s=config.timeout_s)
            self.setup["postgres_settings"] = self._postgres[config.label].settings()
        return self._postgres[config.label]

    # -- one query in one configuration ----------------------------------------------------------------

    def prepare(self, config: Config, query: WorkloadQuery) -> Prepared:
        """The run of ``query`` in ``config``; raises (ParseFailure, CboError) when it cannot be
        prepared, e.g. cbo cannot plan it: the configuration then does not run the query."""
        limit = config.timeout_s
        if config.kind is Kind.CBO:
            return self._prepare_cbo(config, query)
        text = self.text(query, config.kind.engine)
        if config.kind is Kind.DUCKDB:
            engine = self.duckdb()
            return Prepared(lambda: Timed(*self.runner.run(lambda: classified(lambda: engine.run(text)[1]), limit,
                                                           engine.connection.interrupt)))
        if config.kind is Kind.POSTGRES:
            native = self.postgres(config)   # statement_timeout cancels it server side; Ctrl-C by cancel()
            return Prepared(lambda: Timed(*self.runner.run(lambda: classified(lambda: native.run(text)[1]), limit,
                                                           native.connection.cancel)))
        return Prepared(lambda: self._spark_run(text, config.kind, limit))

    def _prepare_cbo(self, config: Config, query: WorkloadQuery) -> Prepared:
        session = self.session(config)
        try:
            view = session.plan(query.sql)
        except SqlError as exc:
            if is_parse_error(exc):
                raise ParseFailure(str(exc)) from None
            raise
        facts = plan_facts(view, planning_timed=not config.plans_untimed)
        planned = view.planned
        if config.plans_untimed:   # true cardinalities: counted once, here, untimed
            work = lambda: session.run(planned)[1]
        else:                       # planning is part of the time, as Spark's own is
            work = lambda: session.run(session.planner.plan(query.sql))[1]
        # Spark starts at the first run (the query's cold run, untimed), not while planning.
        return Prepared(lambda: Timed(*self.on_spark(self.spark(), work, config.timeout_s)), facts)

    def close(self) -> None:
        self.runner.close()
        for native in self._postgres.values():
            native.close()
        if self._duckdb is not None:
            self._duckdb.close()


def smallest_table(catalog: Catalog) -> str:
    """The name of the catalog's table with the fewest bytes of files (a JDBC table: any)."""
    def size(table: Any) -> float:
        path = table.path
        try:
            return float(path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*")))
        except (OSError, AttributeError):
            return float("inf")

    return min(catalog.tables(), key=size).name


def count_query(table: str, dialect: str) -> str:
    from sqlglot import exp

    return exp.select("count(*)").from_(exp.to_identifier(table, quoted=True)).sql(dialect=dialect)


class Reference:
    """The reference engine: DuckDB over the catalog's Parquet files and copies."""

    def __init__(self, catalog: Catalog, engines: Engines):
        from cbo.engines.duckdb_engine import DuckDBEngine

        self.engine = DuckDBEngine(catalog)
        self.engines = engines
        if self.engine.missing:
            raise CboError(f"the reference engine (DuckDB) cannot answer: table(s) {', '.join(self.engine.missing)} "
                           "have no Parquet copy (add parquet_copy in the catalog, or run with --reference none)")

    def answer(self, query: WorkloadQuery, limit: float | None) -> tuple[list[tuple[Any, ...]], float]:
        text = self.engines.text(query, "duckdb")
        return self.engines.runner.run(lambda: classified(lambda: self.engine.run(text)[1]), limit,
                                       self.engine.connection.interrupt)

    def close(self) -> None:
        self.engine.close()
