"""The Python entry point: ``cbo.Session(catalog=...)``.

    >>> session = cbo.Session(catalog="tpch/catalogs/federated.toml")   # doctest: +SKIP
    >>> session.sql("select count(*) from lineitem").show()             # a PySpark DataFrame
    >>> session.plan("select ...")      # shows as text in a REPL, as a drawing in Jupyter
    >>> print(session.explain("select ...", format="json"))
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbo.app.explain import NodeInfo, add_estimate, add_physical_details, describe, to_svg, to_text
from cbo.app.failures import engine_failure
from cbo.app.output import json_safe
from cbo.cost.plugin import CostFunction
from cbo.errors import CboError
from cbo.estimate.plugin import CardinalityEstimator
from cbo.frontend.parse import DEFAULT_DIALECT
from cbo.ir.operators import Plan
from cbo.limits import on_deep_stack
from cbo.planner import PlannedQuery, Planner, RuleChanges
from cbo.settings import OptimizerSettings, describe_adaptive
from cbo.sources.catalog import Catalog, load_catalog
from cbo.sources.metadata import with_database_keys
from cbo.sources.schema import SchemaProvider

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from pyspark.sql import DataFrame

    from cbo.app.pushdown import PushdownRecord
    from cbo.cost.cluster import ClusterShape
    from cbo.engines.duckdb_engine import DuckDBEngine
    from cbo.estimate import Estimator
    from cbo.exec.spark_exec import SparkExecutor
    from cbo.memo.render import MemoView
    from stats.model import TableStats

ENGINES = ("spark", "duckdb")


class PlanView:
    """A planned query that renders itself: text in a REPL, SVG in Jupyter, JSON on request."""

    def __init__(self, planned: PlannedQuery, info: NodeInfo, dialect: str = DEFAULT_DIALECT):
        self.planned = planned
        self.info = info
        self.dialect = dialect   # of ``planned.sql``

    @property
    def plan(self) -> Plan:
        return self.planned.plan

    def text(self) -> str:
        coverage = self.planned.coverage
        lines = [to_text(self.info)] + ([coverage.summary()] if coverage is not None else [])
        return "\n".join(lines + [f"Warning: {w}" for w in self.planned.warnings])

    def json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"sql": self.planned.sql, "dialect": self.dialect, "plan": self.info.to_json(),
                                "columns": list(self.planned.names)}
        if self.planned.number is not None:
            body["plan_number"] = self.planned.number
        coverage = self.planned.coverage
        if coverage is not None:
            body["cardinalities"] = coverage.to_json()
        if self.planned.warnings:
            body["warnings"] = list(self.planned.warnings)
        return body

    def __repr__(self) -> str:
        return self.text()

    def _repr_svg_(self) -> str:
        return to_svg(self.info)


def _reason(exc: BaseException) -> str:
    """One line saying why running a query failed: Spark's cause, not Py4J's wrapper."""
    from cbo.engines.spark import spark_failure

    cause = spark_failure(exc)
    if cause:
        return cause
    for line in str(exc).strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace", "Traceback")):
            return line[:300]
    return type(exc).__name__


class Session:
    def __init__(self, catalog: Catalog | str | os.PathLike[str] | None = None, engine: str = "spark",
                 dialect: str = DEFAULT_DIALECT, settings: OptimizerSettings | dict[str, Any] | None = None,
                 estimator: CardinalityEstimator | None = None, cost_model: CostFunction | None = None,
                 rules: RuleChanges | dict[str, Any] | None = None):
        """``catalog``: a loaded catalog or its file; without one, the CLI's default
        (``$CBO_CATALOG``, else the demo's catalog), or a CboError saying how to get one.

        The research plug-ins ([Research](docs/guide/research.md)): ``estimator``, a cardinality
        plug-in (``cbo.estimate.plugin.CardinalityEstimator``) answering rows of the sub-plans it
        chooses, cbo's estimator the rest; ``cost_model``, a cost function
        (``cbo.cost.plugin.CostFunction``); ``rules``, transformation rules added or removed
        for this session (``cbo.planner.RuleChanges`` or ``{"add": [...], "remove": [...]}``)."""
        if catalog is None:
            from cbo.paths import default_catalog

            catalog = default_catalog()
        loaded = catalog if isinstance(catalog, Catalog) else load_catalog(Path(catalog).expanduser())
        if engine not in ENGINES:
            raise CboError(f"unknown engine {engine!r} (expected one of: {', '.join(ENGINES)})")
        self.engine = engine
        # DuckDB answers from the tables' Parquet copies and never reads a JDBC source, so a
        # DuckDB session does not connect to one (its server may be down): columns come from
        # the copies and keys from the catalog. Spark reads the sources, whose keys live in
        # their databases: read them once (they feed plan properties).
        self.catalog = loaded if engine == "duckdb" else with_database_keys(loaded)
        if not isinstance(settings, OptimizerSettings):
            settings = OptimizerSettings().with_values(settings or {})
        schemas = SchemaProvider(self.catalog, local_copies=engine == "duckdb")
        # The planner reads statistics only when it first estimates (the session's estimator).
        # On a cluster the plans are costed for its shape, read from the running session: the
        # planner asks for it when it first plans, and Spark starts then (``cluster_shape``).
        if estimator is not None and not isinstance(estimator, CardinalityEstimator):
            raise CboError(f"estimator= takes a cardinality plug-in (name, answers, rows(subplan): "
                           f"cbo.estimate.plugin.CardinalityEstimator), not {type(estimator).__name__}")
        self.planner = Planner(self.catalog, dialect, schemas=schemas,
                               estimator=estimator if estimator is not None else lambda: self.estimator,
                               statistics=lambda: self.estimator, settings=settings, cluster=self.cluster_shape,
                               cost_model=cost_model, rules=rules)
        self._spark_executor: SparkExecutor | None = None
        self._duckdb: DuckDBEngine | None = None
        self._estimator: Estimator | None = None
        self._statistics_notes: dict[str, str] = {}   # by table: stale, damaged or unusable statistics
        # The warnings of the query planned last (a malformed hint): the CLI prints them to stderr.
        self.warnings: tuple[str, ...] = ()

    @property
    def estimator(self) -> Estimator:
        """The cardinality estimator over the catalog's stored statistics (read once; ``cbo analyze`` collects them)."""
        if self._estimator is None:
            from cbo.estimate import Estimator
            from cbo.sources.statistics import load_checked

            # (a DuckDB session never connects to a database: its tables' staleness is unknown)
            stats, self._statistics_notes = load_checked(self.catalog, remote=self.engine == "spark")
            self._estimator = Estimator(stats)
        return self._estimator

    def statistics(self, table: str) -> TableStats:
        """The stored statistics of ``table`` (``stats.model.TableStats``: row count, and per
        column NULLs, distinct count, MCVs and histogram), as the estimator reads them; a
        CboError when there are none (``cbo analyze`` or ``cbo.tpch_catalog`` collects them)."""
        from cbo.sources.statistics import store_for

        qualified = self.catalog.table(table).qualified_name
        loaded = store_for(self.catalog).load(qualified)
        if loaded.stats is None:
            raise CboError(loaded.problem or f"no statistics for {qualified}: run `cbo analyze {table}`")
        return loaded.stats

    def statistics_figure(self, column: str) -> Figure:
        """A matplotlib figure of ``TABLE.COLUMN``'s stored distribution, as ``cbo stats show
        --plot`` draws it: histogram buckets as bars spanning their bounds (area = rows), MCVs as
        stems on the same value axis."""
        from cbo.app.stats_view import column_figure

        table, _, name = column.rpartition(".")
        if not table:
            raise CboError(f"statistics_figure needs TABLE.COLUMN, not {column!r}")
        stats = self.statistics(table)
        if name not in stats.columns:
            raise CboError(f"no column '{name}' in the statistics of {stats.table} "
                           f"(columns: {', '.join(stats.columns)})")
        return column_figure(stats, stats.columns[name])

    def cluster_shape(self) -> ClusterShape | None:
        """The shape of the cluster the catalog's Spark runs on (``cbo.cost.cluster``), read from
        the session, which starts for it; None in local mode and on DuckDB, where nothing starts."""
        spark_settings = self.catalog.spark
        if self.engine != "spark" or (not spark_settings.remote and spark_settings.master.startswith("local")):
            return None
        from cbo.app.progress import step
        from cbo.engines.spark import cluster_shape, spark_session

        return cluster_shape(spark_session(spark_settings, need_jdbc=bool(self.catalog.jdbc_sources()), step=step))

    # -- planning ----------------------------------------------------------------------------------

    def _plan(self, sql: str) -> PlannedQuery:
        planned = self.planner.plan(sql)
        notes = self._statistics_warnings(planned.plan)
        if notes:
            planned = dataclasses.replace(planned, warnings=planned.warnings + notes)
        self.warnings = planned.warnings
        return planned

    def _statistics_warnings(self, plan: Plan) -> tuple[str, ...]:
        """What is wrong with the statistics of the tables ``plan`` reads (stale, damaged,
        unusable): EXPLAIN shows it, the CLI prints it on stderr."""
        from cbo.ir.operators import Scan, walk

        if self._estimator is None or not self._statistics_notes:
            return ()
        tables = dict.fromkeys(n.table for n in walk(plan) if isinstance(n, Scan))
        return tuple(self._statistics_notes[t] for t in tables if t in self._statistics_notes)

    @on_deep_stack
    def plan(self, sql: str) -> PlanView:
        planned = self._plan(sql)
        return PlanView(planned, self._describe(planned), self.planner.dialect)

    # -- the plan space ----------------------------------------------------------------------------

    def plan_count(self, sql: str) -> int:
        """How many complete physical plans the memo holds for ``sql`` (``cbo.memo.space``)."""
        planner = self.planner
        return planner.plan_count(self._plan(sql))

    def plan_number(self, sql: str, number: int) -> PlanView:
        """The plan numbered ``number`` of ``sql``'s plan space (0 to ``plan_count - 1``); its
        EXPLAIN JSON runs with ``run_plan``."""
        return self._view(self.planner.plan_number(self._plan(sql), number))

    def sample_plans(self, sql: str, k: int, seed: int = 0) -> list[PlanView]:
        """``k`` plans drawn uniformly (with replacement) from ``sql``'s plan space."""
        import random

        planned = self._plan(sql)
        rng = random.Random(seed)
        return [self._view(self.planner.draw(planned, rng)) for _ in range(k)]

    def cheapest_plans(self, sql: str, k: int) -> list[PlanView]:
        """The ``k`` cheapest plans of ``sql``'s plan space, cheapest first (the first costs what
        the chosen plan costs)."""
        return [self._view(p) for p in self.planner.cheapest_plans(self._plan(sql), k)]

    def chosen_number(self, sql: str) -> int:
        """The number of the plan cbo chooses for ``sql`` in its plan space."""
        return self.planner.plan_rank(self._plan(sql))

    def given_plan(self, plan: str | os.PathLike[str] | dict[str, Any], sql: str | None = None) -> PlanView:
        """The plan given as cbo's EXPLAIN JSON (a file, its text, or the parsed object), found
        in its query's memo (``cbo.app.given_plan``); a CboError naming the first operator the
        memo does not hold when it is not a plan of its query."""
        from cbo.app.given_plan import given_plan, read_plan

        if isinstance(plan, dict):
            body, where = read_plan(json.dumps(plan), "plan"), "plan"
        elif isinstance(plan, str) and plan.lstrip().startswith("{"):
            body, where = read_plan(plan, "plan"), "plan"
        else:
            path = Path(plan).expanduser()
            try:
                text = path.read_text()
            except OSError as exc:
                raise CboError(f"cannot read {path}: {exc.strerror}") from None
            body, where = read_plan(text, str(path)), str(path)
        dialect = body.get("dialect", self.planner.dialect)
        if dialect != self.planner.dialect:
            planner = Planner(self.catalog, dialect, schemas=self.planner.schemas, estimator=lambda: self.estimator,
                              settings=self.planner.settings, cluster=self.cluster_shape)
        else:
            planner = self.planner
        planned = given_plan(planner, body, where, sql)
        self.warnings = planned.warnings
        return self._view(planned)

    def run_plan(self, plan: str | os.PathLike[str] | dict[str, Any], engine: str | None = None,
                 sql: str | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run exactly the physical plan given as cbo's EXPLAIN JSON (see ``given_plan``)."""
        return self._run(self.given_plan(plan, sql).planned, engine)

    def _view(self, planned: PlannedQuery) -> PlanView:
        return PlanView(planned, self._describe(planned), self.planner.dialect)

    @property
    def settings(self) -> OptimizerSettings:
        return self.planner.settings

    def set(self, **values: Any) -> None:
        """Change optimizer settings, e.g. ``session.set(join_reordering_strategy="NONE")``."""
        self.planner.settings = self.planner.settings.with_values(values)

    def rules(self) -> list[dict[str, object]]:
        """The search's rules: name, kind, whether enabled, and what each does."""
        return self.planner.optimizer().rules.describe()

    @on_deep_stack
    def memo(self, sql: str) -> MemoView:
        """The memo the search built for ``sql``: text in a REPL, a graph in Jupyter."""
        from cbo.memo.render import MemoView

        planned = self._plan(sql)
        assert planned.optimized is not None
        return MemoView(planned.optimized)

    @on_deep_stack
    def pushdown(self, sql: str) -> list[PushdownRecord]:
        """Each subplan of ``sql``'s chosen plan that one JDBC source could run as one query:
        whether the search pushed it, the SQL the source runs (or would), and the remote and
        local costs it compared (``cbo.app.pushdown``). ``[r.to_dict() for r in ...]`` makes a
        table of them."""
        from cbo.app.pushdown import pushdown_records
        from cbo.exec.remote import RemoteQueries

        return pushdown_records(self._plan(sql), RemoteQueries(self.catalog, partitioned_reads=False))

    @on_deep_stack
    def explain(self, sql: str, format: str = "text", analyze: bool = False, memo: bool = False) -> str:
        if memo:
            if analyze:
                raise CboError("explain: --memo and --analyze cannot be combined")
            view_memo = self.memo(sql)
            if format == "json":
                body = view_memo.json()
                if self.warnings and isinstance(body, dict):
                    body["warnings"] = list(self.warnings)
                return json.dumps(json_safe(body), indent=2, default=str, allow_nan=False)
            if format != "text":
                raise CboError(f"unknown explain format {format!r} (expected text or json)")
            return "\n".join([view_memo.text()] + [f"Warning: {w}" for w in self.warnings])
        view = self.plan(sql)
        if analyze:
            self._add_actual_rows(view)
        if format == "json":
            return json.dumps(json_safe(view.json()), indent=2, default=str, allow_nan=False)
        if format != "text":
            raise CboError(f"unknown explain format {format!r} (expected text or json)")
        return view.text()

    def _describe(self, planned: PlannedQuery) -> NodeInfo:
        from cbo.exec.remote import RemoteQueries
        from cbo.ir.operators import walk

        # The queries execution sends (the search's remote-query operators and JDBC table reads);
        # a table read's partitioning needs the database (its key's bounds) and is not shown; a
        # pushed subplan's comes from statistics, for as many cores as the executor reads with.
        if self._spark_executor is not None:   # the executor's own choices
            remote = self._spark_executor.views.remote.for_explain()
        else:
            remote = RemoteQueries(self.catalog, partitioned_reads=False,
                                   pushed_partitions=self._read_partitions(planned))
        pushed = remote.pushed(planned.plan, planned.operators)
        inside = {below for node in pushed for below in walk(node) if below is not node}

        def annotate(node: Plan, info: NodeInfo) -> None:
            add_estimate(info, node, planned, self.estimator)
            folded = pushed.get(node)
            if folded is not None:
                info.details["pushed_sql"] = folded.sql
                info.details["source"] = folded.source
                operator = planned.operator(node)
                if operator is not None:
                    info.details["pushed_bytes"] = round(operator.bytes)
                if folded.partitions:
                    assert folded.bounds is not None
                    info.details["pushed_partitions"] = {"column": folded.partition_column,
                                                         "lower": str(folded.bounds[0]),
                                                         "upper": str(folded.bounds[1]),
                                                         "partitions": folded.partitions}
            elif node in inside:
                info.details["in_pushed_sql"] = True
            add_physical_details(info, node, planned.operator(node))

        info = describe(planned.plan, annotate)
        if planned.partitions:
            info.details["shuffle_partitions"] = planned.partitions
        if planned.profile is not None:
            from cbo.cost.cluster import describe_profile

            info.details["cost_profile"] = describe_profile(planned.profile)
            info.details["cluster"] = planned.cluster.describe() if planned.cluster else "local mode"
        return info

    @staticmethod
    def _read_partitions(planned: PlannedQuery) -> int:
        """The parallel reads execution splits a large pushed query into at most, before Spark
        runs (then its default parallelism): the planned cluster's cores, else this machine's
        (local mode reads with every core)."""
        if planned.cluster is not None:
            return planned.cluster.total_cores
        return os.cpu_count() or 2

    def _add_actual_rows(self, view: PlanView) -> None:
        """EXPLAIN ANALYZE: actual rows (and, on Spark, Spark's own time metrics) per node."""
        try:
            if self.engine == "duckdb":
                self._analyze_duckdb(view)
            else:
                self._analyze_spark(view)
        except CboError:
            raise
        except Exception as exc:
            failure = engine_failure(self.engine, exc, _reason(exc), "explain analyze")
            if failure is None:
                raise
            raise failure from exc

    def _analyze_spark(self, view: PlanView) -> None:
        """One run of the whole plan as it always runs (one Spark SQL statement, cbo's execution
        settings); rows and times per node come from the SQL metrics of Spark's executed plan
        (``cbo.exec.spark_metrics``). Running each subplan on its own instead charged Spark's
        start-up to the first and ran the inputs over and over."""
        rows, elapsed, actuals = self.run_measured(view.planned)

        def visit(node: Plan, info: NodeInfo) -> None:
            actual = actuals[id(node)]
            info.actual_rows = actual.rows
            info.details["actual_rows_from"] = actual.source
            if actual.operators:
                info.details["spark_operators"] = actual.operators
            if actual.times:
                info.details["spark_time_s"] = {k: round(v, 4) for k, v in actual.times.items()}
            for child, child_info in zip(node.children, info.children):
                visit(child, child_info)

        visit(view.plan, view.info)
        view.info.details["analyze"] = {"engine": "spark", "runs": 1, "wall_time_s": round(elapsed, 4),
                                        "rows": len(rows),
                                        "adaptive": describe_adaptive(self._spark(view.planned).adaptive)}

    def run_measured(self, planned: PlannedQuery) -> tuple[list[tuple[Any, ...]], float, dict[int, Any]]:
        """Run a planned query once on Spark, as it always runs, and read Spark's metrics back: its
        rows, the seconds the run took, and for each node of ``planned.plan`` (by identity) what
        EXPLAIN ANALYZE shows of it (``cbo.exec.spark_metrics.Actual``: rows, where they come
        from, Spark's operators and their time metrics)."""
        import time

        from cbo.exec.spark_metrics import attribute, read_plan
        from cbo.physical.algorithm import Algorithm

        executor = self._spark(planned)
        from cbo.engines.spark import is_connect

        if is_connect(executor.spark):
            raise CboError("explain --analyze reads Spark's executed plan from the driver's JVM, which a Spark "
                           "Connect session does not have: use a catalog with [spark] master for it")
        try:
            with executor.own_join_order():
                frame = executor.dataframe(planned.plan, planned.names)
                started = time.perf_counter()
                rows = [tuple(row) for row in frame.collect()]
                elapsed = time.perf_counter() - started
            # The executed plan is the object that ran, metrics filled in (under adaptive
            # execution, its final plan: ``read_plan``).
            executed = read_plan(frame._jdf.queryExecution().executedPlan())
        finally:
            executor.release()   # the CTEs computed once (their metrics are read)
        scalar = frozenset(id(n.logical) for n in planned.physical.operators()
                           if n.algorithm is Algorithm.SCALAR_SUBQUERY) if planned.physical else frozenset()
        pushed = executor.views.remote.pushed(planned.plan, planned.operators)
        return rows, elapsed, attribute(planned.plan, executed, pushed, len(rows), scalar)

    def _analyze_duckdb(self, view: PlanView) -> None:
        """On DuckDB each subplan is counted by running it (DuckDB answers in milliseconds and
        plans joins its own way, so its operators do not map onto cbo's); no per-node times,
        which would count each input again; the whole plan's time is one run's."""
        import time

        from cbo.ir.operators import walk
        from cbo.sqlgen import to_sql

        planned = view.planned
        duck = self._duck()

        def visit(node: Plan, info: NodeInfo) -> None:
            names = tuple(f"c{i}" for i in range(len(node.output)))
            _, rows, _ = duck.run(f"SELECT count(*) FROM ({to_sql(node, names, 'duckdb')}) AS sub")
            info.actual_rows = int(rows[0][0])
            info.details["actual_rows_from"] = "this subplan counted on DuckDB"
            for child, child_info in zip(node.children, info.children):
                visit(child, child_info)

        visit(view.plan, view.info)
        started = time.perf_counter()
        _, rows, _ = duck.run(to_sql(planned.plan, planned.names, "duckdb"))
        counted = sum(1 for _ in walk(view.plan))
        view.info.details["analyze"] = {"engine": "duckdb", "runs": counted + 1, "wall_time_s":
                                        round(time.perf_counter() - started, 4), "rows": len(rows)}

    # -- running -----------------------------------------------------------------------------------

    @on_deep_stack
    def sql(self, sql: str) -> DataFrame:
        """The query as a PySpark DataFrame built from cbo's plan.

        Spark plans it here, with cbo's execution settings (join reordering and adaptive
        execution off, cbo's partition count), so actions on the DataFrame run cbo's plan;
        DataFrames derived from it by further transformations are planned by Spark as usual.
        Adaptive execution stays off whatever ``spark_adaptive`` says: an adaptive plan is
        re-planned during each action with the session's settings of that moment, which cbo
        does not hold once the DataFrame is returned.
        """
        from cbo.settings import ADAPTIVE_OFF

        planned = self._plan(sql)
        executor = self._spark(planned)
        executor.adaptive = ADAPTIVE_OFF
        with executor.own_join_order():
            frame = executor.dataframe(planned.plan, planned.names)
            from cbo.engines.spark import is_connect

            if not is_connect(executor.spark):
                frame._jdf.queryExecution().executedPlan()  # plan now, with cbo's execution settings
        # On Spark Connect the server plans at each action, with the settings of that moment: a
        # later action runs Spark's choices, not cbo's (``query`` runs cbo's plan either way).
        return frame

    @on_deep_stack
    def query(self, sql: str, engine: str | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run the query through cbo's plan; return column names and rows."""
        planned = self._plan(sql)
        return list(planned.names), self._run(planned, engine)[1]

    @on_deep_stack
    def run(self, planned: PlannedQuery, engine: str | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run an already planned query (e.g. one planned with other statistics or settings)."""
        return self._run(planned, engine)

    @on_deep_stack
    def run_together(self, planned: Sequence[PlannedQuery],
                     shuffle_partitions: int | None = None) -> list[list[tuple[Any, ...]]]:
        """The rows of several planned queries, each in no particular order, from one Spark job
        (``cbo.exec.spark_exec.collect_together``): for many small queries, whose cost is
        Spark's per query. Their output columns must be integers, booleans or strings.
        ``shuffle_partitions`` replaces the planned partition count (which changes no answer)."""
        from cbo.exec.spark_exec import collect_together

        try:   # (a plan whose output a batch cannot carry is a CboError naming it)
            return collect_together([(self._spark(q), q.plan, q.names) for q in planned], shuffle_partitions)
        except CboError:
            raise
        except Exception as exc:  # one of them failed while running: which one, run alone says
            failure = engine_failure("spark", exc, _reason(exc), "queries")
            if failure is None:
                raise
            raise failure from exc

    def _run(self, planned: PlannedQuery, engine: str | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        engine = engine or self.engine
        try:
            return self._execute(planned, engine)
        except CboError:
            raise
        except Exception as exc:  # an error raised while the query runs, e.g. a multi-row scalar subquery
            from cbo.errors import SourceUnreachable
            from cbo.exec.source_failure import unreachable_source

            failure = engine_failure(engine, exc, _reason(exc))
            if failure is None:   # not the engine's: cbo's own code failed (a bug)
                raise
            gone = unreachable_source(self.catalog, _reason(exc)) if engine == "spark" else None
            if gone is not None:  # a JDBC source went away mid-query: name it
                raise SourceUnreachable(gone) from exc
            raise failure from exc

    def _execute(self, planned: PlannedQuery, engine: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        if engine == "duckdb":
            from cbo.sqlgen import to_sql

            _, rows, _ = self._duck().run(to_sql(planned.plan, planned.names, "duckdb"))
            return list(planned.names), rows
        rows, _ = self._spark(planned).collect(planned.plan, planned.names)
        return list(planned.names), rows

    def _spark(self, planned: PlannedQuery | None = None) -> SparkExecutor:
        from cbo.app.progress import step
        from cbo.engines.spark import spark_session
        from cbo.exec.spark_exec import SparkExecutor

        spark = spark_session(self.catalog.spark, need_jdbc=bool(self.catalog.jdbc_sources()), step=step)
        if self._spark_executor is None:
            self._spark_executor = SparkExecutor(spark, self.catalog)
        return self._spark_executor.for_plan(planned.physical if planned else None,
                                             planned.partitions if planned else None, self.settings.spark_adaptive)

    def _duck(self) -> DuckDBEngine:
        if self._duckdb is None:
            from cbo.engines.duckdb_engine import DuckDBEngine

            self._duckdb = DuckDBEngine(self.catalog)
        return self._duckdb
