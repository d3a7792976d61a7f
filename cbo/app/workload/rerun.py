"""``cbo workload rerun RESULT``: the same experiment again, from its manifest, with each figure's
ratio to the saved one.

The experiment (workload, options, selection, configurations, timing rules, reference, catalog)
is read from the manifest and run into a new folder. A query whose text changed since the saved
run is an error naming it (the figures would not be of the same query). Then, per query and
configuration, the new fastest time over the saved one, and whether it lies within noise: within
the band the two runs' own spreads give (the slowest over the fastest of each figure's timed
runs, at least 10 %). Plans that changed and outcomes that differ are reported as ``compare``
reports them; on the same commit and statistics there should be none.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any, TextIO

from cbo.app.workload import experiment as experiments
from cbo.app.workload.compare import compare
from cbo.app.workload.results import Result, load
from cbo.errors import CboError

MIN_BAND = 1.10


def saved_experiment(result: Result) -> experiments.Experiment:
    spec = result.experiment.get("spec")
    if not spec:
        raise CboError(f"{result.path}: its manifest does not say how it was run (not a `cbo workload run` result)")
    return experiments.Experiment.from_json(spec)


def default_out(result: Result) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return result.path.with_name(f"{result.path.name}-rerun-{stamp}")


def ratios(saved: Result, new: Result) -> list[dict[str, Any]]:
    found = []
    for record in saved.records:
        again = new.record(record["query"])
        if again is None:
            continue
        for config, seconds in record.get("seconds", {}).items():
            fresh = again.get("seconds", {}).get(config)
            if not fresh or not seconds:
                continue
            band = max(MIN_BAND, _spread(record, config), _spread(again, config))
            ratio = fresh / seconds
            found.append({"query": record["query"], "config": config, "saved": seconds, "new": fresh,
                          "ratio": ratio, "band": band, "within_noise": 1 / band <= ratio <= band})
    return found


def _spread(record: dict[str, Any], config: str) -> float:
    times = [t for t in record.get("times", {}).get(config, []) if t > 0]
    return max(times) / min(times) if times else 1.0


def report(saved: Result, new: Result, stream: TextIO) -> list[dict[str, Any]]:
    found = ratios(saved, new)
    print(f"\nrerun of {saved.path} in {new.path}: new / saved fastest time", file=stream)
    print(f"  {'query':<8} {'configuration':<28} {'saved s':>9} {'new s':>9} {'ratio':>7}  noise band", file=stream)
    for f in found:
        mark = "" if f["within_noise"] else "  beyond noise"
        print(f"  {f['query']:<8} {f['config']:<28} {f['saved']:>9.3f} {f['new']:>9.3f} {f['ratio']:>7.3f}  "
              f"x/÷ {f['band']:.2f}{mark}", file=stream)
    configs = sorted({f["config"] for f in found})
    for config in configs:
        values = [f["ratio"] for f in found if f["config"] == config]
        inside = sum(1 for f in found if f["config"] == config and f["within_noise"])
        mean = math.exp(sum(map(math.log, values)) / len(values))
        print(f"  {config}: geometric mean ratio {mean:.3f}; {inside} of {len(values)} within noise", file=stream)
    comparison = compare(saved, new)
    if comparison.plans:
        print(f"  plans that changed: {', '.join(p['query'] + ' ' + p['config'] for p in comparison.plans)}",
              file=stream)
    for answer in comparison.answers:
        print(f"  {answer['query']} {answer['config']}: saved {answer['a']}, now {answer['b']}", file=stream)
    return found


def rerun(path: Path, out: Path | None, *, resume: bool = False, stdout: TextIO) -> tuple[experiments.Outcome, list]:
    saved = load(path)
    experiment = saved_experiment(saved)
    digests = {q["name"]: q["digest"] for q in saved.experiment.get("queries", [])}
    outcome = experiments.run(experiment, out or default_out(saved), resume=resume, stdout=stdout, expect=digests)
    found = report(saved, load(outcome.path), stdout)
    return outcome, found
