"""The ``cbo workload`` and ``cbo dataset`` commands (``cbo.app.cli`` adds them to ``cbo``)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cbo.errors import CboError

if TYPE_CHECKING:
    from cbo.app.workload.experiment import Experiment

DEFAULT_CONFIGS = "cbo,spark-default"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _experiment_arguments(parser: argparse.ArgumentParser, configs: str = DEFAULT_CONFIGS) -> None:
    parser.add_argument("source", metavar="SOURCE", help="a folder of .sql files, or a named workload "
                        "(`cbo workload list`: tpch, tpcds, stats, stats2, existential)")
    parser.add_argument("--catalog", type=Path, help="catalog file, or a named workload whose catalog to use "
                        "(--catalog tpch: TPC-H at --sf); default: a named workload's own, for a folder "
                        "$CBO_CATALOG, else the demo's catalog")
    parser.add_argument("--configs", default=configs, help=f"comma-separated configurations (default {configs}): "
                        "cbo, cbo:name=value,..., spark-default, spark-cbo, spark-dsv2, duckdb, postgres")
    parser.add_argument("--queries", help="comma-separated subset by name, e.g. q1,q6 (default: all)")
    parser.add_argument("--sf", type=_positive, default=0.1, help="named workloads: scale factor (default 0.1)")
    parser.add_argument("--placement", default="all-spark", help="named workloads: where the tables live "
                        "(all-spark, all-postgres, federated, federated3; default all-spark)")
    parser.add_argument("--count", type=int, help="stats, stats2: how many queries to generate (default 200)")
    parser.add_argument("--seed", type=int, help="stats, stats2: the generator's seed (default: the workload's)")
    parser.add_argument("--dialect",
                        help="a folder's SQL dialect (default trino; also spark, duckdb, postgres, presto)")
    parser.add_argument("--timeout", type=_positive, metavar="SECONDS",
                        help="a run's limit: past it the run is cancelled and recorded as a timeout (default: none)")
    parser.add_argument("--reference", choices=("duckdb", "none"), default="duckdb",
                        help="the engine answers are checked against (default duckdb)")


def _timing_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds per query, at least (default 3)")
    parser.add_argument("--max-rounds", type=int, default=9, help="rounds for a short query, at most (default 9)")
    parser.add_argument("--budget", type=float, default=15.0,
                        help="a short query gets as many rounds as fit in this many seconds (default 15)")
    parser.add_argument("--long-warm-up", type=float, metavar="SECONDS",
                        help="when every configuration's warm-up of a query takes longer, keep the warm-ups as the "
                             "times (default: warm-ups are never kept)")


def add_parsers(commands: argparse._SubParsersAction) -> None:
    workload = commands.add_parser("workload",
                                   help="run a workload in several configurations, rerun or compare results")
    actions = workload.add_subparsers(dest="action", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="every query in every configuration, timed and checked; results as they come")
    _experiment_arguments(run)
    _timing_arguments(run)
    run.add_argument("--plan-only", action="store_true", help="plan in the cbo configurations, run nothing")
    run.add_argument("--out", type=Path, help="result folder (default cbo-results/<workload>-<time>)")
    run.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")

    rerun = actions.add_parser("rerun", help="run a saved result's experiment again; each figure's ratio to the saved")
    rerun.add_argument("result", type=Path, metavar="RESULT")
    rerun.add_argument("--out", type=Path, help="result folder (default RESULT-rerun-<time>)")
    rerun.add_argument("--resume", action="store_true", help="continue an interrupted rerun in --out")

    compare = actions.add_parser("compare", help="two results side by side, or two commits run on one workload")
    compare.add_argument("items", nargs="+", metavar="A B | SOURCE",
                         help="two results (folders or a benchmark's JSON); with --commits, the workload")
    compare.add_argument("--commits", nargs=2, metavar=("REV_A", "REV_B"),
                         help="run the workload with the cbo of each commit, taking turns, then compare")
    compare.add_argument("--factor", type=_positive, default=2.0,
                         help="report estimates that moved by more than this factor (default 2)")
    compare.add_argument("--format", choices=("text", "json"), default="text")
    for argument in ("--catalog", "--queries", "--placement", "--dialect"):
        compare.add_argument(argument, help="with --commits: as for `workload run`")
    compare.add_argument("--configs", default="cbo", help="with --commits: cbo configurations (default cbo)")
    compare.add_argument("--sf", type=_positive, default=0.1, help="with --commits: as for `workload run`")
    compare.add_argument("--timeout", type=_positive, help="with --commits: as for `workload run`")
    compare.add_argument("--plan-only", action="store_true", help="with --commits: compare plans and estimates only")
    compare.add_argument("--out", type=Path, help="with --commits: where the two results go (OUT/A, OUT/B)")
    _timing_arguments(compare)

    actions.add_parser("list", help="the named workloads")

    dataset = commands.add_parser("dataset", help="export plans with their estimates, cost quantities, actual rows "
                                                  "and times as Parquet")
    dataset_actions = dataset.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = dataset_actions.add_parser("export", help="plans.parquet and nodes.parquet of a workload's queries")
    _experiment_arguments(export, configs="cbo")
    export.add_argument("--draws", type=int, default=0, help="plans drawn at random from each memo beside the "
                        "chosen one (default 0)")
    export.add_argument("--draw-seed", type=int, default=0, help="seed of the draws (default 0)")
    export.add_argument("--repeat", type=int, default=1, help="timed runs per plan after a warm-up (default 1)")
    export.add_argument("--out", type=Path, help="output folder (default cbo-dataset/<workload>-<time>)")


def experiment_from(args: argparse.Namespace) -> Experiment:
    from cbo.app.workload.configs import parse_configs
    from cbo.app.workload.experiment import Experiment
    from cbo.app.workload.timing import TimingRules
    from cbo.app.workload.workloads import WorkloadOptions

    rules = TimingRules(getattr(args, "repeat", 3), getattr(args, "max_rounds", 9), getattr(args, "budget", 15.0),
                        getattr(args, "long_warm_up", None))
    options = WorkloadOptions(sf=args.sf, placement=args.placement or "all-spark",
                              count=getattr(args, "count", None), seed=getattr(args, "seed", None))
    queries = tuple(q.strip() for q in (args.queries or "").split(",") if q.strip())
    return Experiment(args.source, tuple(parse_configs(args.configs, args.timeout)), options, rules, queries,
                      args.dialect, str(args.catalog) if args.catalog else None,
                      getattr(args, "reference", "duckdb"), bool(getattr(args, "plan_only", False)))


def _default_out(root: str, source: str) -> Path:
    name = Path(source).name or "workload"
    return Path(root) / f"{name}-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "dataset":
        from cbo.app.workload.dataset import export

        experiment = experiment_from(args)
        export(experiment, args.out or _default_out("cbo-dataset", args.source), draws=args.draws, seed=args.draw_seed)
        return 0
    if args.action == "list":
        from cbo.app.workload.registry import listing

        print(listing())
        return 0
    if args.action == "run":
        from cbo.app.workload import experiment as experiments

        if args.resume and args.out is None:
            raise CboError("--resume continues the run in --out: name it")
        outcome = experiments.run(experiment_from(args), args.out or _default_out("cbo-results", args.source),
                                  resume=args.resume)
        return outcome.exit_code
    if args.action == "rerun":
        from cbo.app.workload.rerun import rerun

        outcome, _ = rerun(args.result, args.out, resume=args.resume, stdout=sys.stdout)
        return outcome.exit_code
    if args.action == "compare":
        return _compare(args)
    raise AssertionError(args.action)


def _compare(args: argparse.Namespace) -> int:
    if args.commits:
        from cbo.app.workload.commits import compare_commits

        if len(args.items) != 1:
            raise CboError("compare --commits REV_A REV_B takes one workload (SOURCE), not "
                           f"{len(args.items)} arguments")
        args.source = args.items[0]
        args.reference = "duckdb"
        experiment = experiment_from(args)
        out = args.out or _default_out("cbo-results", f"compare-{Path(args.source).name}")
        return compare_commits((args.commits[0], args.commits[1]), experiment, out, sys.stdout, args.factor)
    if len(args.items) != 2:
        raise CboError(f"compare takes two results (A B), not {len(args.items)}; or --commits REV_A REV_B SOURCE")
    from cbo.app.workload.compare import compare, text
    from cbo.app.workload.results import load

    comparison = compare(load(args.items[0]), load(args.items[1]), args.factor)
    if args.format == "json":
        print(json.dumps(comparison.to_json(), indent=2, default=str))
    else:
        print(text(comparison))
    return 0
