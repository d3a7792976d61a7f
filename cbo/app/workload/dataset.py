"""``cbo dataset export``: (plan, estimates, cost quantities, actual rows, seconds) as Parquet.

For every query of a workload and every cbo configuration, the chosen plan and, with
``--draws N``, N plans drawn uniformly at random from the memo (``Planner.draw``: a random
expression in every group, implemented at its cheapest) are each run on Spark: once to warm up,
then ``--repeat`` times, the fastest counting. The last run's Spark metrics are attributed to
the plan's nodes as EXPLAIN ANALYZE attributes them (``Session.run_measured``). Two files are
written, one row per plan and one row per node of each plan's physical tree (``PLAN_FIELDS`` and
``NODE_FIELDS`` document every column; each Parquet field carries its description in its
metadata), with the manifest of ``workload run`` beside them::

    OUT/plans.parquet   OUT/nodes.parquet   OUT/manifest.json

A plan's ``predicted_seconds`` is its cost: the profile's constants times its ``quantities``, so
the quantities and ``measured_seconds`` are what a re-fit of the constants needs
(``notebooks/06-learning-data.ipynb`` does it). A drawn plan may be slow: ``--timeout`` cuts it,
and the plan is kept with ``timed_out`` set and no time.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbo.app.progress import say, step
from cbo.app.workload import manifest as manifests
from cbo.app.workload.configs import Config, Kind
from cbo.app.workload.engines import Engines, Reference, plan_shape
from cbo.app.workload.experiment import Experiment, _ordered, collect_statistics, describe, prepare
from cbo.app.workload.results import write_json
from cbo.app.workload.timing import first_line
from cbo.app.workload.workloads import WorkloadQuery
from cbo.errors import CboError, QueryTimeout

if TYPE_CHECKING:
    import pyarrow as pa

    from cbo.app.session import Session
    from cbo.planner import PlannedQuery

FORMAT = "cbo-dataset/1"

# (name, Arrow type name, description): the plans table.
PLAN_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("plan_id", "string", "identifies the plan: query/configuration/chosen or query/configuration/draw-N"),
    ("query", "string", "the query's name in its workload"),
    ("query_label", "string", "a longer description of the query, when its name is an id (else empty)"),
    ("sql", "string", "the query's text"),
    ("config", "string", "the cbo configuration that planned it (cbo, cbo:name=value,...)"),
    ("kind", "string", "chosen: the plan cbo chose; draw: a plan drawn uniformly at random from the memo"),
    ("draw", "int32", "the draw's number (0 for the chosen plan)"),
    ("seed", "int64", "the seed of the draws (the same seed draws the same plans)"),
    ("same_as_chosen", "bool", "a drawn plan whose shape is the chosen plan's"),
    ("predicted_seconds", "double", "the plan's cost: sum over its nodes of quantity x the profile's constant"),
    ("measured_seconds", "double", "the fastest of the timed runs (null: timed out or failed)"),
    ("times", "list<double>", "every timed run's seconds"),
    ("timed_out", "bool", "a run went past --timeout (the plan was not run again)"),
    ("error", "string", "why the plan did not run, or null"),
    ("result_rows", "int64", "rows the plan returned"),
    ("matches", "bool", "its answer equals the reference engine's (null: not checked)"),
    ("quantities", "map<string,double>", "the plan's cost quantities summed over its nodes (cbo.cost.profile)"),
    ("constants", "map<string,double>", "the cost profile's constants the plan was costed with"),
    ("partitions", "int32", "the shuffle partition count it was planned and run with"),
    ("plan_ms", "double", "the search's time for the query (the chosen plan's)"),
    ("shape", "string", "the EXPLAIN tree without estimates (equal shapes: the same plan)"),
    ("explain", "string", "the EXPLAIN ANALYZE text of the last run (estimated and actual rows per node)"),
)

NODE_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("plan_id", "string", "the plan the node belongs to (plans.plan_id)"),
    ("node_id", "int32", "its position in a pre-order walk of the physical tree (0 is the root)"),
    ("parent_id", "int32", "its parent's node_id (null at the root)"),
    ("depth", "int32", "edges from the root"),
    ("algorithm", "string", "the physical operator: a join strategy, an aggregation's, an exchange ..."),
    ("operator", "string", "the logical operator it runs (for an exchange or sort enforcer: the one it moves)"),
    ("enforcer", "bool", "an exchange, broadcast, gather or sort the plan needs between operators"),
    ("detail", "string", "an enforcer's columns, e.g. shuffle(l_orderkey)"),
    ("tables", "list<string>", "the base tables below the node"),
    ("estimated_rows", "double", "cbo's estimate of its output rows (its memo group's)"),
    ("width_bytes", "double", "estimated bytes per output row"),
    ("cost", "double", "its own cost (predicted seconds)"),
    ("total_cost", "double", "its cost with everything below it"),
    ("quantities", "map<string,double>", "what it alone does: bytes scanned, rows hashed, ... (cbo.cost.profile)"),
    ("actual_rows", "int64", "its output rows in the last run (null: not measured, see actual_rows_from)"),
    ("actual_rows_from", "string", "where the actual rows come from, or why there are none"),
    ("spark_operators", "list<string>", "Spark's operators attributed to it (EXPLAIN ANALYZE's mapping)"),
    ("spark_time_s", "map<string,double>", "their time metrics in seconds, task time summed over tasks"),
)


def _arrow_type(name: str) -> pa.DataType:
    import pyarrow as pa

    simple = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "double": pa.float64(),
              "bool": pa.bool_(), "list<double>": pa.list_(pa.float64()), "list<string>": pa.list_(pa.string()),
              "map<string,double>": pa.map_(pa.string(), pa.float64())}
    return simple[name]


def schema(fields: tuple[tuple[str, str, str], ...]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(name, _arrow_type(kind), metadata={"description": text})
                      for name, kind, text in fields], metadata={"format": FORMAT})


@dataclass
class Dataset:
    plans: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)

    def write(self, out: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        for name, rows, fields in (("plans", self.plans, PLAN_FIELDS), ("nodes", self.nodes, NODE_FIELDS)):
            table = pa.Table.from_pylist([_map_columns(r, fields) for r in rows], schema=schema(fields))
            temporary = out / f".{name}.parquet.tmp"
            pq.write_table(table, temporary)
            temporary.replace(out / f"{name}.parquet")


def _map_columns(row: dict[str, Any], fields: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
    """Maps as Arrow takes them (lists of pairs), every field present."""
    found = {}
    for name, kind, _ in fields:
        value = row.get(name)
        if kind.startswith("map<") and value is not None:
            value = sorted(value.items())
        found[name] = value
    return found


def physical_nodes(plan_id: str, planned: PlannedQuery, actuals: dict[int, Any] | None) -> list[dict[str, Any]]:
    """The rows of ``nodes.parquet`` for one plan: its physical tree in pre-order."""
    from cbo.ir.operators import Scan, operator_name, walk

    assert planned.physical is not None
    rows: list[dict[str, Any]] = []

    def visit(node: Any, parent: int | None, depth: int) -> None:
        node_id = len(rows)
        actual = actuals.get(id(node.logical)) if actuals is not None else None
        tables = sorted({n.table for n in walk(node.logical) if isinstance(n, Scan)})
        rows.append({"plan_id": plan_id, "node_id": node_id, "parent_id": parent, "depth": depth,
                     "algorithm": node.algorithm.label, "operator": operator_name(node.logical),
                     "enforcer": node.is_enforcer, "detail": node.detail or None, "tables": tables,
                     "estimated_rows": float(node.rows), "width_bytes": float(node.width), "cost": float(node.cost),
                     "total_cost": float(node.total), "quantities": {k: float(v) for k, v in node.quantities.items()},
                     "actual_rows": actual.rows if actual is not None else None,
                     "actual_rows_from": actual.source if actual is not None else "not run",
                     "spark_operators": list(actual.operators) if actual is not None and not node.is_enforcer
                     else None,
                     "spark_time_s": dict(actual.times) if actual is not None and not node.is_enforcer else None})
        for child in node.inputs:
            visit(child, node_id, depth + 1)

    visit(planned.physical, None, 0)
    return rows


def export(experiment: Experiment, out: Path, *, draws: int = 0, seed: int = 0) -> Dataset:
    configs = [c for c in experiment.configs if c.kind is Kind.CBO]
    if len(configs) != len(experiment.configs):
        others = ", ".join(c.label for c in experiment.configs if c.kind is not Kind.CBO)
        raise CboError(f"dataset export plans with cbo: its configurations are cbo ones (not {others})")
    if draws < 0:
        raise CboError(f"--draws must not be negative (got {draws})")
    if out.exists() and any(out.iterdir()):
        raise CboError(f"{out} exists and is not empty: choose another --out")
    workload, catalog = prepare(experiment)
    statistics = collect_statistics(catalog)
    engines = Engines(catalog, workload, say)
    for config in configs:
        engines.session(config)
    described = {**describe(experiment, workload, catalog, configs), "draws": draws, "seed": seed,
                 "dataset": FORMAT}
    manifest = manifests.manifest(described, catalog, engines.sessions)
    manifest["statistics_collected"] = statistics
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "manifest.json", manifest)
    reference = Reference(catalog, engines) if experiment.reference == "duckdb" else None
    with step("warming Spark up"):
        engines.warm_up(configs)
    dataset = Dataset()
    try:
        for number, query in enumerate(workload.queries, start=1):
            say(f"[{number}/{len(workload.queries)}] {query.name}")
            expected = None
            if reference is not None:
                try:
                    expected = reference.answer(query, None)[0]
                except Exception as exc:  # the plans run unchecked
                    say(f"  the reference engine failed ({first_line(exc)}): answers not checked")
            for config in configs:
                _export_query(dataset, engines, config, query, expected, _ordered(query, engines), experiment,
                              draws, seed)
    finally:
        engines.close()
        if reference is not None:
            reference.close()
    dataset.write(out)
    manifest.update(finished=manifests.now(), complete=True, plans=len(dataset.plans), nodes=len(dataset.nodes))
    manifest["machine"]["load_end"] = manifests.load()
    write_json(out / "manifest.json", manifest)
    say(f"saved {len(dataset.plans)} plans and {len(dataset.nodes)} nodes in {out}")
    return dataset


def _draw_seed(seed: int, query: str, config: str) -> int:
    """Each query's draws their own stream, the same whatever else is exported."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{query}/{config}".encode()).digest()[:8], "big")


def _export_query(dataset: Dataset, engines: Engines, config: Config, query: WorkloadQuery, expected: Any,
                  ordered: bool, experiment: Experiment, draws: int, seed: int) -> None:
    session = engines.session(config)
    try:
        chosen = session.planner.plan(query.sql)
    except Exception as exc:
        say(f"  {config.label}: cannot plan it: {first_line(exc)}")
        return
    plans: list[tuple[str, int, PlannedQuery]] = [("chosen", 0, chosen)]
    rng = random.Random(_draw_seed(seed, query.name, config.label))
    for index in range(1, draws + 1):
        plans.append(("draw", index, session.planner.draw(chosen, rng)))
    chosen_shape = None
    for kind, index, planned in plans:
        plan_id = f"{query.name}/{config.label}/{kind if kind == 'chosen' else f'draw-{index}'}"
        row, nodes, shape = _measure_plan(session, engines, planned, plan_id, config, expected, ordered, experiment)
        chosen_shape = chosen_shape or shape
        optimized = planned.optimized
        assert optimized is not None
        row.update(query=query.name, query_label=query.label, sql=query.sql, config=config.label, kind=kind,
                   draw=index, seed=seed, same_as_chosen=kind == "draw" and shape == chosen_shape,
                   predicted_seconds=float(optimized.cost), partitions=planned.partitions,
                   plan_ms=round(chosen.optimized.counters.elapsed_ms, 2) if chosen.optimized else None,
                   quantities={k: float(v) for k, v in optimized.physical.total_quantities().items()},
                   constants={k: float(v) for k, v in (planned.profile.constants if planned.profile else {}).items()},
                   shape=shape)
        dataset.plans.append(row)
        dataset.nodes.extend(nodes)
        took = f"{row['measured_seconds']:.3f} s" if row["measured_seconds"] is not None else \
            ("timed out" if row["timed_out"] else f"failed: {row['error']}")
        say(f"  {plan_id}: predicted {optimized.cost:.3f} s, measured {took}")


def _measure_plan(session: Session, engines: Engines, planned: PlannedQuery, plan_id: str, config: Config,
                  expected: Any, ordered: bool, experiment: Experiment) -> tuple[dict[str, Any], list, str]:
    from cbo.answers import compare
    from cbo.app.session import PlanView

    view = PlanView(planned, session._describe(planned))
    shape = plan_shape(view.text())
    row: dict[str, Any] = {"plan_id": plan_id, "times": [], "timed_out": False, "error": None,
                           "measured_seconds": None, "result_rows": None, "matches": None, "explain": view.text()}
    spark = engines.spark()
    actuals = None
    try:
        for attempt in range(experiment.timing.repeat + 1):   # the first run warms up, untimed
            (rows, seconds, actuals), _ = engines.on_spark(spark, lambda: session.run_measured(planned),
                                                           config.timeout_s)
            if attempt == 0:
                row["result_rows"] = len(rows)
                if expected is not None:
                    row["matches"] = compare(expected, rows, ordered=ordered).matches
            else:
                row["times"].append(round(seconds, 4))
    except QueryTimeout:
        row["timed_out"] = True
    except Exception as exc:  # a drawn plan Spark cannot run: kept, with why
        row["error"] = first_line(exc)
    if row["times"]:
        row["measured_seconds"] = min(row["times"])
    if actuals is not None:
        _annotate(view, actuals)
        row["explain"] = view.text()
    return row, physical_nodes(plan_id, planned, actuals), shape


def _annotate(view: Any, actuals: dict[int, Any]) -> None:
    """EXPLAIN ANALYZE's text: each node's actual rows beside its estimate."""
    def visit(node: Any, info: Any) -> None:
        actual = actuals.get(id(node))
        if actual is not None:
            info.actual_rows = actual.rows
            info.details["actual_rows_from"] = actual.source
        for child, child_info in zip(node.children, info.children):
            visit(child, child_info)

    visit(view.plan, view.info)


def export_workload(source: str, out: Path, *, sf: float = 0.1, queries: tuple[str, ...] = (),
                    configs: str = "cbo", draws: int = 0, seed: int = 0, repeat: int = 1,
                    timeout_s: float | None = None, catalog: str | None = None) -> Dataset:
    """``cbo dataset export`` from Python (the notebooks): the same export, arguments by name."""
    from cbo.app.workload.configs import parse_configs
    from cbo.app.workload.timing import TimingRules
    from cbo.app.workload.workloads import WorkloadOptions

    experiment = Experiment(source, tuple(parse_configs(configs, timeout_s)), WorkloadOptions(sf=sf),
                            TimingRules(repeat=repeat), tuple(queries), catalog=catalog)
    return export(experiment, Path(out), draws=draws, seed=seed)
