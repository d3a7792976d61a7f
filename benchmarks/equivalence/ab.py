"""Cases per CPU second of the equivalence harness, before and after a change, side by side:
``python -m benchmarks.equivalence.ab --before 8b9bb4a [--families semijoin,reorder] [--cases 200]``.

The ``--before`` commit is exported (``git archive``) to a temporary directory; for each family
the benchmark runs there and then in this checkout with the same ``--seed`` and ``--cases``, one
after the other, and the CPU seconds of each whole process (user + system, start-up included)
give the ratio. CPU time, not wall time: the machine may be shared. Prints one line per run and
the ratio per family; saves nothing (the figures go in ``benchmarks/results/equivalence-ab.txt``
by hand, with the command).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cli import run_main

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ("decorrelation", "reorder", "semijoin", "table-pushdown", "eager-aggregation")


def run(root: Path, family: str, cases: int, seed: int, out: Path) -> tuple[float, dict]:
    """CPU seconds of one run of the benchmark from ``root``, and its report."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "benchmarks.equivalence", "--family", family, "--cases", str(cases),
                    "--seed", str(seed), "--no-corpus", "--out", str(out)],
                   cwd=root, env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.equivalence.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--families", default=",".join(LOCAL))
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cbo-equivalence-ab-") as directory:
        old = Path(directory) / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        for family in args.families.split(","):
            cpu = {}
            for label, root in (("before", old), ("after", ROOT)):
                cpu[label], report = run(root, family, args.cases, args.seed, Path(directory) / f"{label}.json")
                print(f"{family} {label}: {cpu[label]:.1f} CPU s, {report['cases']} cases "
                      f"({report['cases'] / cpu[label]:.2f} per CPU s), {report['plans_checked']} plans, "
                      f"{report['tlp_checked']} TLP, {report['mismatches'] + report['errors']} failures", flush=True)
            print(f"== {family}: {cpu['before'] / cpu['after']:.2f}x fewer CPU seconds", flush=True)
    return 0


if __name__ == "__main__":
    run_main(main)
