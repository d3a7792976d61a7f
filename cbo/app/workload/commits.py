"""Two commits run on one workload, taking turns: ``cbo workload compare --commits A B SOURCE``.

Each commit is checked out into a temporary git worktree, and a worker process
(``commit_worker.py``, run with that worktree first on ``PYTHONPATH``) plans and runs the
queries with its cbo. The workload's data, catalog and statistics are prepared once, here, and
both sides plan from the same statistics. For each query the two sides' configurations are
measured together by the same timing rules as ``workload run`` (``timing.measure``): one cold
run, one warm-up each, then rounds in which A's and B's runs alternate in rotated, reversed
orders, so that the machine's slow and fast moments fall on both alike (``join_enumeration.ab``'s
taking turns, for whole queries). Every answer is checked against the reference engine.

Only cbo configurations differ between commits, so only they are allowed here. With
``--plan-only`` nothing runs: the plans, costs and estimates alone are compared. The two
results are written as ordinary result folders (``OUT/A`` and ``OUT/B``, each with its commit in
its manifest) and compared by ``compare``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from cbo.app.progress import say
from cbo.app.workload import manifest as manifests
from cbo.app.workload.compare import compare, text
from cbo.app.workload.configs import Config, Kind
from cbo.app.workload.engines import Engines, Reference, count_query, node_estimates, plan_shape, smallest_table
from cbo.app.workload.experiment import (
    Experiment,
    Progress,
    _ordered,
    collect_statistics,
    describe,
    prepare,
    summarize,
)
from cbo.app.workload.results import ResultFolder, load
from cbo.app.workload.timing import Failure, RunTimedOut, Timed, fail, measure, new_record
from cbo.errors import CboError

WORKER = Path(__file__).resolve().with_name("commit_worker.py")
SIDES = ("A", "B")


class WorkerProcess:
    """One commit's worker: requests in, answers out, one JSON line each."""

    def __init__(self, side: str, tree: Path):
        self.side, self.tree = side, tree
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree)] + ([os.environ["PYTHONPATH"]]
                                                                         if os.environ.get("PYTHONPATH") else [])))
        self.process = subprocess.Popen([sys.executable, str(WORKER)], cwd=tree, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def ask(self, **request: Any) -> dict[str, Any]:
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise CboError(f"the worker of commit {self.side} ({self.tree}) stopped (its error is above)")
            try:
                answer = json.loads(line)
            except json.JSONDecodeError:
                continue   # something the other cbo printed: not an answer
            if isinstance(answer, dict) and "ok" in answer:
                return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _git(*args: str) -> str:
    root = manifests.CHECKOUT
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise CboError(f"git {' '.join(args)}: {(out.stderr or out.stdout).strip().splitlines()[-1:]}")
    return out.stdout.strip()


def resolve_commit(revision: str) -> str:
    if not (manifests.CHECKOUT / ".git").exists():
        raise CboError("compare --commits needs cbo run from its git checkout")
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except CboError:
        raise CboError(f"compare --commits: {revision!r} is not a commit of {manifests.CHECKOUT}") from None


def compare_commits(revisions: tuple[str, str], experiment: Experiment, out: Path, stdout: TextIO,
                    factor: float = 2.0) -> int:
    configs = list(experiment.configs)
    others = [c.label for c in configs if c.kind is not Kind.CBO]
    if others:
        raise CboError(f"compare --commits runs cbo configurations only (Spark's and the engines' own do not change "
                       f"between commits): drop {', '.join(others)}")
    commits = [resolve_commit(r) for r in revisions]
    if out.exists() and any(out.iterdir()):
        raise CboError(f"{out} exists and is not empty: choose another --out")
    workload, catalog = prepare(experiment)
    collect_statistics(catalog)
    engines = Engines(catalog, workload, say)   # the reference's text, and nothing else
    scratch = Path(tempfile.mkdtemp(prefix="cbo-compare-"))
    trees: dict[str, Path] = {}
    workers: dict[str, WorkerProcess] = {}
    try:
        for side, commit in zip(SIDES, commits):
            tree = scratch / side
            _git("worktree", "add", "--detach", str(tree), commit)
            trees[side] = tree
            say(f"{side}: commit {commit[:10]} in {tree}")
            workers[side] = WorkerProcess(side, tree)
        described = {}
        for side, worker in workers.items():
            answer = worker.ask(op="init", catalog=str(catalog.path), dialect=workload.dialect,
                                configs={c.label: c.settings_dict for c in configs})
            if not answer["ok"]:
                raise CboError(f"commit {side} cannot start: {answer['error']}")
            described[side] = answer["configurations"]
        base = describe(experiment, workload, catalog, configs)
        folders = {}
        manifests_by_side = {}
        for side, commit in zip(SIDES, commits):
            manifest = manifests.manifest({**base, "commit_compare": {"side": side, "revision": commit}}, catalog, {})
            manifest["cbo"] = {"commit": commit, "dirty": False, "checkout": str(trees[side]),
                               "note": f"a worktree of {manifests.CHECKOUT} made by compare --commits"}
            manifest["configurations"] = described[side]
            folders[side] = ResultFolder(out / side)
            folders[side].start(manifest, resume=False)
            manifests_by_side[side] = manifest
        reference = Reference(catalog, engines) if experiment.reference == "duckdb" and not experiment.plan_only \
            else None
        if not experiment.plan_only:
            warm_up = count_query(smallest_table(catalog), workload.dialect)
            for side, worker in workers.items():
                answer = worker.ask(op="warm_up", sql=warm_up)
                if not answer["ok"]:
                    raise CboError(f"commit {side} cannot run a query: {answer['error']}")
        progress = Progress(len(workload.queries))
        limit = max((c.timeout_s for c in configs if c.timeout_s), default=None)
        records: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
        for number, query in enumerate(workload.queries, start=1):
            progress.query(number, query)
            joint = new_record(query.name)
            plans: dict[str, Any] = {}
            runs = {}
            for config in configs:
                for side in SIDES:
                    label = f"{side}:{config.label}"
                    answer = workers[side].ask(op="plan", config=config.label, sql=query.sql)
                    if not answer["ok"]:
                        fail(joint, label, Failure.ERROR, answer["error"])
                        continue
                    plans[label] = {"plan": answer["plan"], "shape": plan_shape(answer["plan"]),
                                    "estimates": node_estimates(answer["tree"]), "cost": answer["cost"],
                                    "plan_ms": answer["plan_ms"], "partitions": answer["partitions"],
                                    "planning_timed": not config.plans_untimed}
                    runs[label] = _remote_run(workers[side], config, query.sql)
            joint["plans"] = plans
            if not experiment.plan_only:
                expected, ordered = None, _ordered(query, engines)
                if reference is not None:
                    try:
                        expected, _ = reference.answer(query, limit)
                    except Exception as exc:  # unchecked, and said so
                        joint["reference"] = {"engine": "duckdb", "error": str(exc).splitlines()[0][:300]}
                measure(joint, query.index, runs, expected, ordered, experiment.timing,
                        {f"{s}:{c.label}": c.timeout_s for s in SIDES for c in configs}, progress=progress.run)
            for side in SIDES:
                record = _side(joint, side)
                folders[side].append(record)
                records[side].append(record)
            progress.clear()
        for side in SIDES:
            labels = [c.label for c in configs]
            manifest = manifests_by_side[side]
            manifest.update(finished=manifests.now(), complete=True, summary=summarize(records[side], labels))
            manifest["machine"]["load_end"] = manifests.load()
            folders[side].update(manifest)
        if reference is not None:
            reference.close()
    finally:
        for worker in workers.values():
            worker.close()
        for tree in trees.values():
            subprocess.run(["git", "-C", str(manifests.CHECKOUT), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    comparison = compare(load(out / "A"), load(out / "B"), factor)
    print(text(comparison), file=stdout)
    say(f"saved {out / 'A'} and {out / 'B'}")
    return 0


def _remote_run(worker: WorkerProcess, config: Config, sql: str) -> Callable[[], Timed]:
    def run() -> Timed:
        answer = worker.ask(op="run", config=config.label, sql=sql, untimed_planning=config.plans_untimed,
                            timeout=config.timeout_s)
        if not answer["ok"]:
            if answer.get("timeout"):
                raise RunTimedOut(config.timeout_s or 0.0)
            raise CboError(answer["error"])
        return Timed([tuple(row) for row in answer["rows"]], answer["seconds"])
    return run


def _side(joint: dict[str, Any], side: str) -> dict[str, Any]:
    """The record of one side, its configurations named as in a run of its own."""
    prefix = f"{side}:"

    def mine(mapping: dict[str, Any]) -> dict[str, Any]:
        return {k[len(prefix):]: v for k, v in mapping.items() if k.startswith(prefix)}

    record = {"query": joint["query"]}
    for key in ("seconds", "times", "matches", "problems", "timeouts", "failures", "plans"):
        record[key] = mine(joint.get(key, {}))
    record["order"] = [c[len(prefix):] for c in joint.get("order", []) if c.startswith(prefix)]
    for key in ("cold_run_s", "rounds", "checked", "reference", "warm_up_kept"):
        if key in joint:
            record[key] = joint[key]
    record["turns"] = joint.get("order", [])
    return record
