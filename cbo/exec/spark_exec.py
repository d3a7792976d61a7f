"""Running a plan on Spark as DataFrame operations that keep the plan's shape.

Every column is named after its identity (``c12``) while the plan runs, and renamed to the
query's output names at the end. Scalar expressions are rendered to Spark SQL by the same
AST renderer as everything else and evaluated with ``F.expr``. Joins run in the plan's order:
Spark's own join reordering is switched off while cbo's plans execute, and each equi-join
carries the strategy the planner chose as a hint (shuffle hash by default, broadcast when
asked). A Filter/Project over a JDBC scan is folded into the remote query, which Spark reads
in parallel partitions when the table has a numeric key with known bounds.

While a plan runs (``planned_execution``), adaptive query execution is off, so Spark neither
switches a join's strategy nor coalesces partitions at run time, its size-based broadcasting is
off (every join carries cbo's strategy as a hint: ``broadcast``, ``shuffle_hash``, ``merge``),
and every shuffle has the partition count the plan was costed with. A mark join
(three-valued IN/EXISTS) tags left rows with an id, left-joins the right side and keeps, per
id, the best outcome: TRUE if some row matched, NULL if only unknown comparisons, else FALSE.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from cbo.catalog import Catalog
from cbo.exec.remote import RemoteQueries, RemoteScan
from cbo.ir.expressions import TRUE, Expr
from cbo.ir.operators import Aggregate, Filter, Join, Limit, Plan, Project, Scan, SetOp, Sort, Values
from cbo.sqlgen import SqlRenderer, name_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Spark's rule that moves inner joins around to avoid cross products; cbo decides the order.
REORDER_RULES = "org.apache.spark.sql.catalyst.optimizer.ReorderJoin"


class SparkExecutor:
    def __init__(self, spark: "SparkSession", catalog: Catalog, join_hints: dict[Join, str] | None = None,
                 partitions: int | None = None, shuffle_partitions: int | None = None):
        self.spark = spark
        self.catalog = catalog
        self.join_hints = join_hints or {}
        self.render = SqlRenderer("spark")
        self.partitions = partitions or spark.sparkContext.defaultParallelism
        self.shuffle_partitions = shuffle_partitions
        self.remote = RemoteQueries(catalog)
        self._tables: dict[str, tuple[int | None, "DataFrame"]] = {}   # name -> (mtime, frame)

    # -- public ------------------------------------------------------------------------------------

    def dataframe(self, plan: Plan, names: tuple[str, ...]) -> "DataFrame":
        from pyspark.sql import functions as F

        frame = self._frame(plan)
        return frame.select(*[F.col(name_of(c)).alias(n) for c, n in zip(plan.output, names)])

    def collect(self, plan: Plan, names: tuple[str, ...]) -> tuple[list[tuple[Any, ...]], float]:
        started = time.perf_counter()
        with self.own_join_order():
            rows = [tuple(r) for r in self.dataframe(plan, names).collect()]
        return rows, time.perf_counter() - started

    def physical_plan(self, plan: Plan, names: tuple[str, ...]) -> str:
        """Spark's physical plan for cbo's plan (what ``collect`` would run)."""
        with self.own_join_order():
            frame = self.dataframe(plan, names)
            return str(frame._jdf.queryExecution().executedPlan().toString())

    @contextmanager
    def own_join_order(self) -> Iterator[None]:
        """Run cbo's plan as chosen: Spark's join reordering, adaptive execution and size-based
        broadcasting off; the planned shuffle partition count. Restored afterwards."""
        excluded = "spark.sql.optimizer.excludedRules"
        before = self.spark.conf.get(excluded, None)
        values = {excluded: ",".join(r for r in (before, REORDER_RULES) if r),
                  "spark.sql.adaptive.enabled": "false",
                  "spark.sql.autoBroadcastJoinThreshold": "-1"}
        if self.shuffle_partitions:
            values["spark.sql.shuffle.partitions"] = str(self.shuffle_partitions)
        saved = {key: self.spark.conf.get(key, None) for key in values}
        for key, value in values.items():
            self.spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)

    # -- operators ---------------------------------------------------------------------------------

    def _frame(self, plan: Plan) -> "DataFrame":
        remote = self.remote.fold(plan)
        if remote is not None:
            return self._read_remote(remote)
        method = getattr(self, f"_{type(plan).__name__}")
        return method(plan)

    def _expr(self, e: Expr):  # type: ignore[no-untyped-def]
        from pyspark.sql import functions as F

        return F.expr(self._text(e))

    def _text(self, e: Expr) -> str:
        """Spark SQL text of a scalar expression. Operators pass text rather than Column objects
        where PySpark accepts it: each Column is a round trip to the JVM, and a plan of a few
        hundred of them took longer to build than a small query takes to run."""
        return self.render.expr(e).sql(dialect="spark")

    def _Scan(self, scan: Scan) -> "DataFrame":
        frame = self._table_frame(scan.table)
        return frame.selectExpr(*[f"{_quoted(name)} AS {name_of(c)}" for c, name in zip(scan.columns, scan.column_names)])

    def _table_frame(self, name: str) -> "DataFrame":
        """The DataFrame over a whole table, made once per executor: reading a Parquet table's
        schema lists its files and reads footers (about 80 ms a table at SF 1), which Spark's own
        catalog tables do once too. A rewritten directory (new mtime) gets a fresh frame."""
        from cbo.engines.spark import read_table

        table = self.catalog.table(name)
        stamp = table.path.stat().st_mtime_ns if table.path is not None and table.path.exists() else None
        known = self._tables.get(table.qualified_name)
        if known is None or known[0] != stamp:
            known = self._tables[table.qualified_name] = (stamp, read_table(self.spark, self.catalog, table))
        return known[1]

    def _read_remote(self, remote: RemoteScan) -> "DataFrame":
        source = self.catalog.sources[remote.source]
        reader = self.spark.read.format("jdbc").option("url", source.url)
        if source.dialect == "postgres":
            reader = reader.option("driver", "org.postgresql.Driver")
        if source.user:
            reader = reader.option("user", source.user)
        password = source.password()
        if password is not None:
            reader = reader.option("password", password)
        if remote.partition_column and remote.bounds:
            reader = (reader.option("dbtable", f"({remote.sql}) cbo_remote")
                      .option("partitionColumn", remote.partition_column)
                      .option("lowerBound", str(remote.bounds[0])).option("upperBound", str(remote.bounds[1] + 1))
                      .option("numPartitions", str(self.partitions)))
        else:
            reader = reader.option("query", remote.sql)
        return reader.load()

    def _Filter(self, node: Filter) -> "DataFrame":
        return self._frame(node.input).filter(self._text(node.predicate))

    def _Project(self, node: Project) -> "DataFrame":
        frame = self._frame(node.input)
        if not node.assignments:
            return frame.select()
        return frame.selectExpr(*[f"{self._text(e)} AS {name_of(c)}" for c, e in node.assignments])

    def _Join(self, node: Join) -> "DataFrame":
        left, right = self._frame(node.left), self._frame(node.right)
        hint = self.join_hints.get(node)
        if node.kind == "mark":
            return self._mark_join(node, left, right, hint)
        if hint:
            right = right.hint(hint)
        how = {"inner": "inner", "left": "left", "right": "right", "full": "full", "semi": "left_semi",
               "anti": "left_anti"}[node.kind]
        if node.condition == TRUE:
            if node.kind == "inner":
                return left.crossJoin(right)
            from pyspark.sql import functions as F

            return left.join(right, F.lit(True), how)
        return left.join(right, self._expr(node.condition), how)

    def _mark_join(self, node: Join, left: "DataFrame", right: "DataFrame", hint: str | None) -> "DataFrame":
        from pyspark.sql import functions as F

        assert node.mark is not None and node.mark_predicate is not None
        row_id, matched, outcome = f"_row{node.mark.id}", f"_matched{node.mark.id}", f"_outcome{node.mark.id}"
        tagged = left.withColumn(row_id, F.monotonically_increasing_id())
        marked = right.withColumn(matched, F.lit(True))
        if hint:
            marked = marked.hint(hint)
        condition = self._expr(node.condition) if node.condition != TRUE else F.lit(True)
        joined = tagged.join(marked, condition, "left")
        predicate = self._expr(node.mark_predicate)
        score = (F.when(F.col(matched).isNull(), 0).when(predicate, 2).when(predicate.isNull(), 1).otherwise(0))
        left_columns = [name_of(c) for c in node.left.output]
        grouped = joined.groupBy(row_id).agg(*[F.first(c).alias(c) for c in left_columns],
                                             F.max(score).alias(outcome))
        mark = F.when(F.col(outcome) == 2, F.lit(True)).when(F.col(outcome) == 1, F.lit(None).cast("boolean")) \
            .otherwise(F.lit(False))
        return grouped.select(*[F.col(c) for c in left_columns], mark.alias(name_of(node.mark)))

    def _Aggregate(self, node: Aggregate) -> "DataFrame":
        frame = self._frame(node.input)
        groups = [name_of(c) for c in node.group_by]
        aggregates = [self._expr(a).alias(name_of(c)) for c, a in node.aggregates]
        if not aggregates:
            return frame.select(*groups).distinct() if groups else frame.limit(1).select()
        return frame.groupBy(*groups).agg(*aggregates)

    def _Sort(self, node: Sort) -> "DataFrame":
        from pyspark.sql import functions as F

        keys = []
        for key in node.keys:
            column = F.col(name_of(key.column))
            if key.ascending:
                keys.append(column.asc_nulls_first() if key.nulls_first else column.asc_nulls_last())
            else:
                keys.append(column.desc_nulls_first() if key.nulls_first else column.desc_nulls_last())
        return self._frame(node.input).orderBy(*keys)

    def _Limit(self, node: Limit) -> "DataFrame":
        frame = self._frame(node.input)
        if node.offset:
            frame = frame.offset(node.offset)
        if node.count is not None:
            frame = frame.limit(node.count)
        return frame

    def _SetOp(self, node: SetOp) -> "DataFrame":
        from pyspark.sql import functions as F

        frames = [self._frame(child).select(*[F.col(name_of(s)).alias(name_of(d)) for s, d in zip(cols, node.columns)])
                  for child, cols in zip(node.inputs, node.inputs_columns)]
        left, right = frames
        if node.kind == "union":
            combined = left.unionAll(right)
            return combined.distinct() if node.distinct else combined
        if node.kind == "intersect":
            return left.intersect(right) if node.distinct else left.intersectAll(right)
        return left.subtract(right) if node.distinct else left.exceptAll(right)

    def _Values(self, node: Values) -> "DataFrame":
        if not node.columns:
            return self.spark.range(1).select()
        return self.spark.sql(self.render.query(node).sql(dialect="spark"))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
