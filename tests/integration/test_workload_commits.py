"""``cbo workload compare --commits A B``: two commits of cbo plan one workload, each in a worktree
of its own with a worker importing that commit's cbo, and the comparison shows the plans that
changed between them. The commits are made here, in a clone of this checkout: B differs from A
only in the shipped cost profile, where broadcasting costs ten thousand times more, so joins
that A broadcasts B shuffles. Plans only (nothing runs): the timed mode runs the same workers."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

from cbo.app.workload import manifest as manifests
from cbo.app.workload.commits import compare_commits
from cbo.app.workload.configs import parse_configs
from cbo.app.workload.experiment import Experiment
from cbo.app.workload.results import load
from cbo.app.workload.workloads import WorkloadOptions

ROOT = Path(__file__).resolve().parents[2]


def git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(where), "-c", "user.name=cbo tests", "-c", "user.email=tests@cbo",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def test_compare_of_two_commits_shows_the_plans_that_changed(spark, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(repo)], check=True)
    before = git(repo, "rev-parse", "HEAD")
    profile = repo / "cbo" / "cost" / "profiles" / "spark.json"
    body = json.loads(profile.read_text())
    for name in ("broadcast_row", "broadcast_byte"):
        body["constants"][name] *= 1e4
    profile.write_text(json.dumps(body, indent=2))
    git(repo, "commit", "--quiet", "-am", "broadcasts cost more")
    after = git(repo, "rev-parse", "HEAD")
    monkeypatch.setattr(manifests, "CHECKOUT", repo)

    experiment = Experiment("tpch", tuple(parse_configs("cbo")), WorkloadOptions(sf=0.01),
                            queries=("q03", "q05", "q10"), plan_only=True)
    stdout = io.StringIO()
    assert compare_commits((before, "HEAD"), experiment, tmp_path / "out", stdout) == 0
    report = stdout.getvalue()
    a, b = load(tmp_path / "out" / "A"), load(tmp_path / "out" / "B")
    assert (a.manifest["cbo"]["commit"], b.manifest["cbo"]["commit"]) == (before, after)
    changed = [q for q in ("q03", "q05", "q10") if a.record(q)["plans"]["cbo"]["shape"]
               != b.record(q)["plans"]["cbo"]["shape"]]
    assert changed, report
    assert f"Plans: {len(changed)} of 3 changed:" in report
    assert "-" in report and "broadcast" in report   # the diff shows A's broadcasts gone in B
    for query in changed:
        assert f"  {query} cbo: cost " in report
    # the same statistics for both: estimates do not move
    assert "Estimates that moved beyond 2x: 0." in report
    assert a.record("q03")["plans"]["cbo"]["estimates"] == b.record("q03")["plans"]["cbo"]["estimates"]
    # the worktrees are gone again
    assert git(repo, "worktree", "list").count("\n") == 0
