"""SQLite's sqllogictest corpus as a conformance benchmark: every query of the chosen files
through cbo on DuckDB, compared with DuckDB and with the file's own expected results.

    python -m benchmarks.sqllogictest --corpus PATH/test                     # select1-5
    python -m benchmarks.sqllogictest --corpus PATH/test --set all --every 10
    python -m benchmarks.sqllogictest --corpus PATH/test --files 'random/expr/*.test' --spark-every 50

``--corpus`` is the ``test`` directory of a checkout of the sqllogictest repository (or
``$CBO_SQLLOGICTEST``; default ``.cache/sqllogictest/test`` in the checkout). No package
registry ships the corpus, so it is not fetched here: see ``docs/guide/conformance.md``.

Each query's outcome (``benchmarks.sqllogictest.runner``) is counted per class of files
(``select``, ``evidence``, ``random/<kind>``, ``index/<kind>``); refusals are counted by their
message with the refused constructs named, and every query that is not a plain answer is kept
with its file and line in the JSON
(``benchmarks/results/sqllogictest/<set>-<commit>-<time>.json``). ``--spark-every N`` runs every
N-th answered query through cbo on Spark too (local mode) and compares with DuckDB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.sqllogictest.records import Query, format_result
from benchmarks.sqllogictest.runner import FileReport, Outcome, Settings, make_worker, message_class, run_file

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "sqllogictest"
DEFAULT_CORPUS = ROOT / ".cache" / "sqllogictest" / "test"
SETS = {
    "select": ["select1.test", "select2.test", "select3.test", "select4.test", "select5.test"],
    "evidence": ["evidence/*.test"],
    "random": ["random/aggregates/*.test", "random/expr/*.test", "random/groupby/*.test", "random/select/*.test"],
    "index": ["index/*/*/*.test"],
}
SETS["all"] = [p for name in ("select", "evidence", "random", "index") for p in SETS[name]]


def corpus_directory(given: Path | None = None) -> Path | None:
    """The corpus's ``test`` directory: ``given``, else ``$CBO_SQLLOGICTEST``, else the
    checkout's ``.cache/sqllogictest/test``; None when it holds no select1.test."""
    for candidate in (given, os.environ.get("CBO_SQLLOGICTEST"), DEFAULT_CORPUS):
        if candidate and (Path(candidate) / "select1.test").is_file():
            return Path(candidate)
    return None


def file_class(relative: str) -> str:
    parts = relative.split("/")
    if len(parts) == 1:
        return "select" if parts[0].startswith("select") else parts[0]
    if parts[0] in ("random", "index"):
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sqllogictest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="the corpus's test directory (default: $CBO_SQLLOGICTEST, "
                                                    "else .cache/sqllogictest/test)")
    parser.add_argument("--set", choices=sorted(SETS), default="select", help="which files (default select: select1-5)")
    parser.add_argument("--files", nargs="+", help="glob patterns under the corpus instead of --set")
    parser.add_argument("--every", type=int, default=1, help="run every N-th query of each file (default 1: all)")
    parser.add_argument("--max-queries", type=int, help="at most N queries of each file (the first N)")
    parser.add_argument("--max-files", type=int, help="at most N files, spread over the matched ones")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per query before it counts as a hang")
    parser.add_argument("--dialect", default="postgres", help="cbo's dialect for the queries (default postgres, "
                        "whose integer division is SQLite's; the files' skipif/onlyif postgresql apply)")
    parser.add_argument("--spark-every", type=int, default=0, help="also run every N-th answered query on Spark")
    parser.add_argument("--out", type=Path, help="JSON file (default: a new file in benchmarks/results/sqllogictest/)")
    return parser.parse_args(argv)


def select_files(corpus: Path, patterns: list[str], max_files: int | None) -> list[Path]:
    files: list[Path] = []
    for pattern in patterns:
        found = sorted(corpus.glob(pattern))
        files += [f for f in found if f not in files]
    if max_files is not None and len(files) > max_files:
        step = len(files) / max_files
        files = [files[int(i * step)] for i in range(max_files)]
    return files


def spark_checker(dialect: str):
    """A check of one query through cbo on Spark (local mode) against DuckDB's rows: None if
    they agree, else what differs. Sessions are kept per catalog."""
    from cbo.answers import compare
    from cbo.app.session import Session
    from cbo.errors import CboError

    sessions: dict[Path, Session] = {}

    def check(sql: str, catalog: Path, query: Query, expected: list[tuple[Any, ...]]) -> str | None:
        session = sessions.get(catalog)
        if session is None:
            sessions.clear()
            session = sessions[catalog] = Session(catalog, engine="spark", dialect=dialect)
        try:
            _, rows = session.query(sql)
        except CboError as exc:
            return f"error on Spark: {str(exc).splitlines()[0][:300]}"
        except Exception as exc:   # noqa: BLE001 - reported, not raised: the run goes on
            return f"internal error on Spark: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        verdict = compare(expected, rows, ordered=False)
        if not verdict.matches:
            # Spark writes values its own way (decimals, NULL order): the file's view decides
            if format_result(rows, query.types, query.sort) == format_result(expected, query.types, query.sort):
                return None
            return f"answer differs from DuckDB's: {verdict.detail}"
        return None

    return check


def git_commit() -> tuple[str, bool]:
    from benchmarks.equivalence.__main__ import git_commit as commit_of

    return commit_of()


def summarize(reports: list[tuple[str, FileReport]]) -> dict[str, Any]:
    classes: dict[str, dict[str, Any]] = {}
    refusals: Counter = Counter()
    refusal_examples: dict[str, str] = {}
    problems: list[dict[str, Any]] = []
    for relative, report in reports:
        entry = classes.setdefault(file_class(relative), {"files": 0, "queries": 0, "outcomes": Counter(),
                                                          "cbo_matches_file": 0, "duckdb_matches_file": 0,
                                                          "setup_failed_files": 0, "skipped_after_setup": 0,
                                                          "spark_checked": 0, "spark_failures": 0})
        entry["files"] += 1
        entry["queries"] += report.queries
        entry["outcomes"].update(report.outcomes)
        entry["cbo_matches_file"] += report.cbo_matches_file
        entry["duckdb_matches_file"] += report.duckdb_matches_file
        entry["setup_failed_files"] += bool(report.setup_failed)
        entry["skipped_after_setup"] += report.skipped_after_setup
        entry["spark_checked"] += report.spark_checked
        entry["spark_failures"] += len(report.spark_failures)
        for result in report.results:
            if result.outcome is Outcome.REFUSED:
                key = message_class(result.detail) + (" [DuckDB answers]" if result.duckdb_answers else "")
                refusals[key] += 1
                refusal_examples.setdefault(key, result.sql)
            else:
                problems.append({"file": relative, "line": result.line, "outcome": result.outcome.value,
                                 "detail": result.detail, "sql": result.sql, "cbo_sql": result.cbo_sql[:2000],
                                 "duckdb_answers": result.duckdb_answers})
        for failure in report.spark_failures:
            problems.append({"file": relative, "outcome": "spark", **failure})
    for entry in classes.values():
        entry["outcomes"] = dict(entry["outcomes"])
    return {"classes": classes,
            "refusals": [{"message": k, "count": n, "example": refusal_examples[k]} for k, n in refusals.most_common()],
            "problems": problems,
            "setup_failures": [{"file": r, "statement": rep.setup_failed} for r, rep in reports if rep.setup_failed]}


def print_table(summary: dict[str, Any]) -> None:
    columns = [o.value for o in Outcome]
    print(f"{'class':<20}{'files':>6}{'queries':>9}" + "".join(f"{c[:10]:>11}" for c in columns) +
          f"{'=file':>8}{'duck=file':>10}")
    for name, entry in sorted(summary["classes"].items()):
        print(f"{name:<20}{entry['files']:>6}{entry['queries']:>9}" +
              "".join(f"{entry['outcomes'].get(c, 0):>11}" for c in columns) +
              f"{entry['cbo_matches_file']:>8}{entry['duckdb_matches_file']:>10}")
    if summary["refusals"]:
        print("\nrefusals by message:")
        for item in summary["refusals"][:25]:
            print(f"  {item['count']:>7}  {item['message']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = corpus_directory(args.corpus)
    if corpus is None:
        print("error: no sqllogictest corpus: pass --corpus (the test directory of a sqllogictest checkout, "
              "holding select1.test) or set CBO_SQLLOGICTEST", file=sys.stderr)
        return 2
    files = select_files(corpus, args.files or SETS[args.set], args.max_files)
    if not files:
        print(f"error: no file under {corpus} matches {args.files or SETS[args.set]}", file=sys.stderr)
        return 2
    commit, dirty = git_commit()
    when = dt.datetime.now(dt.UTC)
    settings = Settings(dialect=args.dialect, timeout=args.timeout, max_queries=args.max_queries, every=args.every,
                        spark=spark_checker(args.dialect) if args.spark_every else None, spark_every=args.spark_every)
    started, cpu_started = time.monotonic(), time.process_time()
    reports: list[tuple[str, FileReport]] = []
    worker = make_worker(args.dialect)
    try:
        with tempfile.TemporaryDirectory(prefix="cbo-sqllogictest-") as directory:
            for index, path in enumerate(files):
                relative = str(path.relative_to(corpus))
                report = run_file(path, Path(directory) / str(index), worker, settings, relative)
                reports.append((relative, report))
                bad = {k: v for k, v in report.outcomes.items() if k != "answered"}
                print(f"[{index + 1}/{len(files)}] {relative}: {report.queries} queries, "
                      f"{report.outcomes.get('answered', 0)} answered {bad or ''}"
                      f"{' SETUP: ' + report.setup_failed[:120] if report.setup_failed else ''}", flush=True)
    finally:
        worker.close()
        if settings.spark is not None:
            from cbo.engines.spark import stop_session

            stop_session()
    summary = summarize(reports)
    elapsed = time.monotonic() - started
    body = {"benchmark": "sqllogictest", "commit": commit, "uncommitted_changes": dirty,
            "corpus": str(corpus), "files": len(files), "patterns": args.files or SETS[args.set],
            "set": None if args.files else args.set,
            "dialect": args.dialect, "every": args.every, "max_queries": args.max_queries, "timeout": args.timeout,
            "spark_every": args.spark_every, "queries": sum(r.queries for _, r in reports),
            "outcomes": dict(sum((r.outcomes for _, r in reports), Counter())),
            "seconds": round(elapsed, 1), "cpu_seconds": round(time.process_time() - cpu_started, 1),
            "worker_restarts": worker.restarts, **summary,
            "load_average": os.getloadavg(), "niceness": os.nice(0), "machine": machine_info()}
    label = args.set if not args.files else "files"
    out = args.out or RESULTS / f"{label}-{commit[:10]}-{when:%Y%m%dT%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(body, indent=1, default=str) + "\n")
    print_table(summary)
    print(f"saved {out}")
    bad = sum(body["outcomes"].get(k, 0) for k in ("internal", "wrong", "hang"))
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
