"""The ``cbo`` command.

Every error a user can act on is printed as one line (``cbo: error: ...``) with a non-zero exit
code; ``--debug`` shows the Python traceback as well.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cbo.connectors import by_server_command, with_servers
from cbo.errors import CboError

if TYPE_CHECKING:
    from cbo.app.session import PlanView

EXIT_ERROR = 2
EXIT_NOT_RUNNING = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cbo", description="A cost-based query optimizer whose plans run on Spark.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="TPC-H (or TPC-DS) end to end on the embedded default (Spark, DuckDB, "
                               "local PostgreSQL)")
    demo.add_argument("--workload", choices=("tpch", "tpcds"), default="tpch",
                      help="tpch (default) or tpcds (its queries cbo plans; those it refuses are listed)")
    demo.add_argument("--sf", type=float, help="scale factor (default 0.1 for TPC-H, 0.01 for TPC-DS)")
    demo.add_argument("--placement", choices=("federated", "all-spark", "all-postgres", "federated3"),
                      default="federated", help="where the tables live (default federated; federated3 is "
                      "TPC-H only)")
    demo.add_argument("--postgres", default="local",
                      help="'local' (default: cbo's throwaway server) or the URL of your own PostgreSQL")
    demo.add_argument("--mariadb", default="local",
                      help="for federated3: 'local' (default: cbo's throwaway server) or the URL of your own "
                      "MariaDB (mariadb://user@host:port/db, password in $CBO_MARIADB_PASSWORD)")
    demo.add_argument("--queries", help="comma-separated subset, e.g. q1,q6 (default: all)")

    query = commands.add_parser("query", help="run a SQL query through cbo's plan and print the result")
    _sql_arguments(query)
    query.add_argument("--engine", choices=("spark", "duckdb"), default="spark")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")

    explain = commands.add_parser("explain", help="show the plan cbo chooses for a query")
    _sql_arguments(explain)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--analyze", action="store_true",
                         help="run every subplan: actual rows and time per operator beside the estimates")
    explain.add_argument("--memo", action="store_true",
                         help="show the memo: groups, their expressions with costs and estimated rows, winners")
    explain.add_argument("--engine", choices=("spark", "duckdb"), default="spark",
                         help="engine for --analyze (default spark)")

    plans = commands.add_parser("plans", help="the query's plan space: count its plans, list the cheapest, draw "
                                "plans uniformly, or show one by its number")
    _sql_arguments(plans)
    shown = plans.add_mutually_exclusive_group()
    shown.add_argument("--cheapest", type=int, metavar="K", help="list the K cheapest plans: number and cost")
    shown.add_argument("--sample", type=int, metavar="K", help="list K plans drawn uniformly: number and cost")
    shown.add_argument("--number", type=int, metavar="N", help="show plan N as EXPLAIN does (--format json: a "
                       "plan file for run-plan)")
    plans.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    plans.add_argument("--format", choices=("text", "json"), default="text")

    run_plan = commands.add_parser("run-plan", help="run exactly the physical plan of a plan file (cbo's EXPLAIN "
                                   "JSON) and print the result")
    run_plan.add_argument("plan", type=Path, help="the plan file (cbo explain --format json writes one)")
    run_plan.add_argument("--catalog", type=Path, help="catalog file (default as for query)")
    run_plan.add_argument("--set", action="append", metavar="NAME=VALUE",
                          help="optimizer settings the query was planned with (the plan is found in its memo)")
    run_plan.add_argument("--engine", choices=("spark", "duckdb"), default="spark")
    run_plan.add_argument("--format", choices=("table", "csv", "json"), default="table")

    subplans = commands.add_parser("subplans", help="write every sub-plan the search estimates, with a canonical "
                                   "key and SQL counting it, to fill in for --set cardinalities=file:FILE")
    _sql_arguments(subplans)
    subplans.add_argument("--out", type=Path, required=True, help="JSON file to write")

    analyze = commands.add_parser("analyze", help="collect statistics of a catalog's tables into the store")
    analyze.add_argument("tables", nargs="*", metavar="TABLE", help="tables to analyze (default: all)")
    analyze.add_argument("--catalog", type=Path, help="catalog file (default as for query)")
    analyze.add_argument("--sample", type=float, default=1.0, help="read a Bernoulli sample of this fraction "
                         "of each Spark table (default 1: all rows)")
    analyze.add_argument("--analyze-source", action="store_true", help="run ANALYZE in PostgreSQL first")
    analyze.add_argument("--force", action="store_true", help="collect even when stored statistics are fresh")

    stats_cmd = commands.add_parser("stats", help="show stored statistics")
    stats_cmd.add_argument("action", choices=("show",))
    stats_cmd.add_argument("target", metavar="TABLE[.COLUMN]")
    stats_cmd.add_argument("--catalog", type=Path, help="catalog file (default as for query)")
    stats_cmd.add_argument("--plot", type=Path, help="with a column: draw its histogram and MCVs to this PNG")

    for connector in with_servers():   # cbo postgres|mariadb|sqlite start|stop|status|destroy
        assert connector.server_command is not None
        server = commands.add_parser(connector.server_command,
                                     help=f"manage cbo's throwaway local {connector.title} server")
        server.add_argument("action", choices=("start", "stop", "status", "destroy"))

    spark = commands.add_parser("spark", help="manage cbo's local Spark standalone cluster (one master, N workers)")
    spark.add_argument("action", choices=("start", "stop", "status"))
    spark.add_argument("--workers", type=int, default=2, help="workers to start (default 2)")
    spark.add_argument("--worker-cores", type=int, help="cores each worker offers (default: the machine's, shared)")
    spark.add_argument("--worker-memory", help="memory each worker offers, e.g. 1g (default: half the machine's, "
                       "shared, at least 1g)")
    spark.add_argument("--connect", action="store_true", help="also start a Spark Connect server on the cluster")

    catalog = commands.add_parser("catalog", help="check a catalog file: sources reachable, tables and keys")
    catalog.add_argument("action", choices=("check",))
    catalog.add_argument("file", type=Path, help="the catalog (TOML)")

    rules = commands.add_parser("rules", help="list the optimizer's rules: name, kind, enabled, what each does")
    rules.add_argument("--set", action="append", metavar="NAME=VALUE",
                       help="optimizer settings, e.g. disabled_rules=SortMergeJoin,ReorderJoins (shown as not enabled)")

    datagen = commands.add_parser("datagen", help="generate a workload's data, load it, write its catalogs")
    datagen.add_argument("workload", choices=("tpch", "tpcds"))
    datagen.add_argument("--sf", type=float, required=True, help="scale factor, e.g. 0.1 or 1")
    datagen.add_argument("--out", type=Path, required=True, help="directory for the Parquet files and catalogs")
    datagen.add_argument("--postgres", help="also load PostgreSQL: 'local' or a URL (postgresql://user@host:port/db)")
    datagen.add_argument("--mariadb", help="TPC-H only: also load MariaDB (with --postgres: the federated3 "
                         "placement): 'local' or a URL (mariadb://user@host:port/db, password in "
                         "$CBO_MARIADB_PASSWORD)")

    from cbo.app.workload.cli import add_parsers

    add_parsers(commands)   # workload run | rerun | compare | list, dataset export
    return parser


def _sql_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sql", nargs="?", help="the query text (or use -f FILE)")
    parser.add_argument("-f", "--file", type=Path, help="read the query from FILE ('-' for standard input)")
    parser.add_argument("--catalog", type=Path, help="catalog file (default: $CBO_CATALOG, else the demo's "
                        "TPC-H sf 0.1 federated catalog when present)")
    parser.add_argument("--dialect", default="trino", help="SQL dialect of the query (default trino; also spark, "
                        "duckdb, postgres, presto)")
    parser.add_argument("--set", action="append", metavar="NAME=VALUE",
                        help="an optimizer setting, e.g. join_reordering_strategy=NONE or max_reordered_joins=8 "
                        "(repeatable; `cbo rules` lists rule names for disabled_rules)")


def _settings(args: argparse.Namespace) -> dict[str, str]:
    from cbo.settings import parse_assignments

    return parse_assignments(args.set or [])


def _query_text(args: argparse.Namespace) -> str:
    if args.file is not None and args.sql is not None:
        raise CboError("give the query as an argument or with -f FILE, not both")
    if args.file is not None:
        if str(args.file) == "-":
            try:
                return sys.stdin.read()
            except UnicodeDecodeError as exc:
                raise CboError(f"standard input is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset "
                               f"{exc.start}") from None
        try:
            return args.file.read_text(encoding="utf-8")
        except OSError as exc:
            raise CboError(f"cannot read {args.file}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise CboError(f"{args.file} is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset "
                           f"{exc.start} ({exc.reason})") from None
    if args.sql is None:
        raise CboError("no query: give it as an argument or with -f FILE")
    return args.sql


def _catalog_path(args: argparse.Namespace) -> Path:
    from cbo.paths import default_catalog

    return args.catalog if args.catalog is not None else default_catalog()


def cmd_query(args: argparse.Namespace) -> int:
    from cbo.app.output import write_result
    from cbo.app.session import Session

    session = Session(_catalog_path(args), engine=args.engine, dialect=args.dialect, settings=_settings(args))
    with _progress(args.engine == "spark"):
        names, rows = session.query(_query_text(args))
    _warn(session.warnings)
    write_result(names, rows, args.format, sys.stdout)
    return 0


def _warn(warnings: tuple[str, ...]) -> None:
    """What planning ignored (a malformed hint), one line each on stderr; the query still ran."""
    for warning in warnings:
        print(f"cbo: warning: {warning}", file=sys.stderr)


def cmd_explain(args: argparse.Namespace) -> int:
    from cbo.app.session import Session

    session = Session(_catalog_path(args), engine=args.engine, dialect=args.dialect, settings=_settings(args))
    with _progress(args.analyze and args.engine == "spark"):
        text = session.explain(_query_text(args), format=args.format, analyze=args.analyze, memo=args.memo)
    _warn(session.warnings)   # also at the end of EXPLAIN's text and in its JSON
    print(text)
    return 0


def cmd_plans(args: argparse.Namespace) -> int:
    from cbo.app.session import Session

    session = Session(_catalog_path(args), dialect=args.dialect, settings=_settings(args))
    sql = _query_text(args)
    for value, flag in ((args.cheapest, "--cheapest"), (args.sample, "--sample")):
        if value is not None and value < 1:
            raise CboError(f"{flag} must be at least 1, got {value}")
    if args.number is not None:
        view = session.plan_number(sql, args.number)
        print(json.dumps(view.json(), indent=2, default=str) if args.format == "json" else view.text())
        return 0
    count = session.plan_count(sql)
    chosen = session.chosen_number(sql)
    views = session.cheapest_plans(sql, args.cheapest) if args.cheapest is not None else \
        session.sample_plans(sql, args.sample, args.seed) if args.sample is not None else []
    if args.format == "json":
        print(json.dumps({"plans": count, "chosen": chosen,
                          "listed": [dict(zip(("number", "cost"), _numbered(v))) for v in views]}, indent=2))
        return 0
    print(f"{count:,} plans; the chosen plan is number {chosen:,}")
    if views:
        print(f"{'number':>14}  {'cost':>12}")
        for view in views:
            number, cost = _numbered(view)
            print(f"{number:>14}  {cost:>12.6g}")
    _warn(session.warnings)
    return 0


def _numbered(view: PlanView) -> tuple[int, float]:
    """A plan taken from the plan space: its number there and its cost."""
    planned = view.planned
    assert planned.number is not None and planned.optimized is not None
    return planned.number, planned.optimized.cost


def cmd_run_plan(args: argparse.Namespace) -> int:
    from cbo.app.output import write_result
    from cbo.app.session import Session

    session = Session(_catalog_path(args), engine=args.engine, settings=_settings(args))
    with _progress(args.engine == "spark"):
        names, rows = session.run_plan(args.plan)
    _warn(session.warnings)
    write_result(names, rows, args.format, sys.stdout)
    return 0


def cmd_subplans(args: argparse.Namespace) -> int:
    import json

    from cbo.app.session import Session
    from cbo.app.subplans import export

    session = Session(_catalog_path(args), dialect=args.dialect, settings=_settings(args))
    document = export(session.planner, _query_text(args))
    out: Path = args.out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        temporary = out.with_name(out.name + ".tmp")
        temporary.write_text(json.dumps(document, indent=1, default=str) + "\n")
        temporary.replace(out)
    except OSError as exc:
        raise CboError(f"cannot write {out}: {exc.strerror or exc}") from None
    asked = sum(1 for s in document["subplans"] if s["asked"])
    print(f"{len(document['subplans'])} sub-plans ({asked} asked by the search) written to {out}")
    for reason in document["value_dependent"]:
        print(f"note: the set of sub-plans may change with the rows given: {reason}")
    return 0


def _progress(spark: bool) -> contextlib.AbstractContextManager[object]:
    """Spark's stage progress on stderr while a step that runs Spark jobs goes on."""
    from cbo.app.progress import spark_progress

    return spark_progress() if spark else contextlib.nullcontext()


def cmd_rules(args: argparse.Namespace) -> int:
    print(rules_table(_settings(args)))
    return 0


def rules_table(settings: dict[str, str], width: int | None = None) -> str:
    """The rules as a table: name, kind, enabled (under ``--set disabled_rules=...``), and the
    description wrapped to the terminal's width under its column, never cut, with the pattern
    each rule matches (``matches: ...``) below it."""
    import shutil
    import textwrap

    from cbo.memo.search import default_rules
    from cbo.settings import OptimizerSettings

    disabled = OptimizerSettings().with_values(settings).rules_off
    rules = default_rules(("jdbc", "spark"), disabled).describe()
    header = {"name": "name", "kind": "kind", "enabled": "enabled", "summary": "what it does"}
    rows = [header] + [{**r, "enabled": "yes" if r["enabled"] else "no"} for r in rules]
    name_width = max(len(str(r["name"])) for r in rows)
    kind_width = max(len(str(r["kind"])) for r in rows)
    enabled_width = len("enabled")
    indent = name_width + kind_width + enabled_width + 6
    width = width or shutil.get_terminal_size((120, 24)).columns
    lines = []
    for row in rows:
        summary = textwrap.wrap(str(row["summary"]), max(width - indent, 30)) or [""]
        if row.get("pattern"):
            summary += textwrap.wrap(f"matches: {row['pattern']}", max(width - indent, 30),
                                     break_on_hyphens=False)
        lines.append(f"{row['name']:<{name_width}}  {row['kind']:<{kind_width}}  {row['enabled']:<{enabled_width}}  "
                     f"{summary[0]}".rstrip())
        lines += [" " * indent + more for more in summary[1:]]
    return "\n".join(lines)


def cmd_analyze(args: argparse.Namespace) -> int:
    from cbo.app.progress import say, step
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import analyze

    if not 0 < args.sample <= 1:
        raise CboError(f"--sample must be in (0, 1], got {args.sample}")
    with _progress(True):  # the Spark collector's scans; nothing shows while only PostgreSQL is read
        results = analyze(load_catalog(_catalog_path(args)), args.tables or None, sample=args.sample, step=step,
                          analyze_source=args.analyze_source, force=args.force, progress=say)
    for r in results:
        print(f"{r.table:<28} {r.status:<10} {r.rows:>14,.0f} rows {r.seconds:>7.1f} s  {r.path}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from cbo.app.stats_view import show
    from cbo.sources.catalog import load_catalog

    print(show(load_catalog(_catalog_path(args)), args.target, args.plot))
    return 0


def cmd_local_server(command: str, action: str) -> int:
    """``cbo postgres|mariadb|sqlite start|stop|status|destroy``: the same for every local server."""
    server = by_server_command(command).local_server()
    if action == "start":
        print("\n".join(server.start().describe()))
        return 0
    if action == "stop":
        print("stopped" if server.stop() else "not running")
        return 0
    if action == "destroy":
        server.destroy()
        print("stopped and deleted")
        return 0
    info = server.status()
    if info is None:
        print("not running")
        return EXIT_NOT_RUNNING
    print(info.summary())
    return 0


def cmd_spark(args: argparse.Namespace) -> int:
    """``cbo spark start|stop|status``: the local standalone cluster."""
    from cbo.engines.spark_cluster import LocalSparkCluster, parse_memory_mb

    memory = parse_memory_mb(args.worker_memory) if args.worker_memory else None
    cluster = LocalSparkCluster(workers=args.workers, worker_cores=args.worker_cores, worker_memory_mb=memory,
                                connect=args.connect)
    if args.action == "stop":
        print("stopped" if cluster.stop() else "not running")
        return 0
    info = cluster.start() if args.action == "start" else cluster.status()
    if info is None:
        left = cluster.leftovers()
        print("not running" + (f" (still alive: {', '.join(left)}; `cbo spark stop` ends them)" if left else ""))
        return EXIT_NOT_RUNNING
    if args.action == "start" and args.connect and not info.connect_port:
        print("note: the cluster was already running without Spark Connect; stop it and start with --connect",
              file=sys.stderr)
    print(f"running: {info.url}")
    print(f"  web ui:    {info.web_ui}")
    if info.connect_url:
        print(f"  connect:   {info.connect_url} ({cluster.connect_state(info)})")
    print(f"  workers:   {len(info.worker_pids)} ({cluster.alive_workers(info)} alive), each "
          f"{info.worker_cores} cores and {info.worker_memory_mb} MB")
    print(f"  logs:      {info.log_dir}")
    print(f"  work:      {info.data_dir}")
    return 0


def cmd_catalog(path: Path) -> int:
    from cbo.sources.catalog import load_catalog
    from cbo.sources.metadata import with_database_keys
    from cbo.sources.schema import SchemaProvider

    catalog = with_database_keys(load_catalog(path))
    # Every table must be there to read: files present (and holding data), a database table in
    # the schema named. (A table in Spark's own catalog is looked up when Spark runs.)
    schemas = SchemaProvider(catalog)
    for table in catalog.tables():
        if catalog.source_of(table).type == "jdbc" or table.path is not None:
            schemas.columns(table)
    for source in catalog.sources.values():
        where = source.location() if source.type == "jdbc" else "files / Spark catalog"
        print(f"source {source.name} ({source.type}): {where}")
        for table in source.tables.values():
            keys = []
            if table.primary_key:
                keys.append(f"primary key ({', '.join(table.primary_key)})")
            keys += [f"unique ({', '.join(u)})" for u in table.unique_keys]
            keys += [f"foreign key ({', '.join(fk.columns)}) -> {fk.references} ({', '.join(fk.referenced_columns)})"
                     for fk in table.foreign_keys]
            print(f"  {table.name}: {'; '.join(keys) or 'no keys'}")
    return 0


def cmd_datagen(args: argparse.Namespace) -> int:
    from cbo.app.progress import say
    from cbo.workloads import tpch

    if args.workload == "tpcds":
        from cbo.workloads import tpcds

        if args.mariadb:
            raise CboError("--mariadb is for TPC-H (its federated3 placement); TPC-DS places tables in PostgreSQL "
                           "and Parquet only")
        catalogs = tpcds.prepare(args.sf, data_dir=args.out, postgres=args.postgres, progress=say)
        for placement, path in catalogs.items():
            print(f"{placement:<13} {path}")
        if not args.postgres:
            say("PostgreSQL not loaded (no --postgres): only the all-spark catalog was written")
        return 0
    if args.mariadb and not args.postgres:
        raise CboError("--mariadb needs --postgres too: the federated3 placement uses both servers")
    catalogs = tpch.prepare(args.sf, data_dir=args.out, postgres=args.postgres, mariadb=args.mariadb, progress=say)
    for placement, path in catalogs.items():
        print(f"{placement:<13} {path}")
    if not args.postgres:
        say("PostgreSQL not loaded (no --postgres): only the all-spark catalog was written")
    elif not args.mariadb:
        say("MariaDB not loaded (no --mariadb): the federated3 catalog was not written")
    return 0


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from cbo.app.demo import run_demo

        queries = args.queries.split(",") if args.queries else None
        if args.workload == "tpcds":
            from cbo.app.demo import run_tpcds_demo

            if args.placement == "federated3":
                raise CboError("the federated3 placement is TPC-H's; TPC-DS has all-spark, all-postgres and federated")
            return run_tpcds_demo(sf=args.sf or 0.01, postgres=args.postgres, placement=args.placement,
                                  queries=queries)
        return run_demo(sf=args.sf or 0.1, postgres=args.postgres, placement=args.placement, queries=queries,
                        mariadb=args.mariadb)
    if args.command == "query":
        return cmd_query(args)
    if args.command == "explain":
        return cmd_explain(args)
    if args.command == "subplans":
        return cmd_subplans(args)
    if args.command == "plans":
        return cmd_plans(args)
    if args.command == "run-plan":
        return cmd_run_plan(args)
    if args.command == "rules":
        return cmd_rules(args)
    if args.command == "analyze":
        return cmd_analyze(args)
    if args.command == "stats":
        return cmd_stats(args)
    if args.command in {c.server_command for c in with_servers()}:
        return cmd_local_server(args.command, args.action)
    if args.command == "spark":
        return cmd_spark(args)
    if args.command == "catalog":
        return cmd_catalog(args.file)
    if args.command == "datagen":
        return cmd_datagen(args)
    if args.command in ("workload", "dataset"):
        from cbo.app.workload.cli import dispatch as workload_dispatch

        return workload_dispatch(args)
    raise AssertionError(args.command)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.debug:
        from cbo.engines.spark import set_verbose

        set_verbose(True)  # Spark's own error log lines too
    try:
        from cbo.limits import deep

        if args.command == "workload":
            # A run stops at Ctrl-C itself (the engines' queries cancelled, what was measured kept),
            # which needs the signal on its own thread; its planning goes through the session,
            # which takes the deep stack by itself.
            return dispatch(args)
        return deep(dispatch, args)
    except CboError as exc:   # the user's input or environment, or the engine's cause
        _traceback_if(args.debug)
        print(f"cbo: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("cbo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`cbo rules | head`): nothing to report
        import os

        # Python would complain again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        _traceback_if(args.debug)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        hint = "" if args.debug else " (run with --debug for the traceback)"
        print(f"cbo: internal error: {type(exc).__name__}: {first}{hint}", file=sys.stderr)
        return 1


def _traceback_if(debug: bool) -> None:
    """With --debug, the traceback before the one error line (which stays last, where it is seen)."""
    if debug:
        import traceback

        traceback.print_exc()
