"""One experiment: a workload's queries in every configuration, into a result folder.

An :class:`Experiment` is everything that decides the figures and nothing about where they are
written: the workload (and how its data is prepared), the query selection, the configurations,
the timing rules, the reference engine, the catalog. It is saved in the manifest, so that
``rerun`` can make it again.

``run`` prepares the workload (data, catalog, cbo's statistics, collected where missing or
stale so cbo never plans from defaults), then measures the queries one after the other
(``timing``), writing each record as soon as it is complete (``results``), with progress on
stderr and one table row per query on stdout. It ends with a summary in the manifest: per
configuration the geometric mean of its times and of its per-query ratios to the first
configuration, its timeouts and its failures by kind.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from cbo.answers import digest, is_ordered
from cbo.app.progress import say, step
from cbo.app.workload import manifest as manifests
from cbo.app.workload import registry
from cbo.app.workload.configs import Config, Kind
from cbo.app.workload.engines import Engines, Reference
from cbo.app.workload.registry import resolve
from cbo.app.workload.results import ResultFolder, read_records
from cbo.app.workload.timing import Failure, ParseFailure, TimingRules, fail, first_line, measure, new_record
from cbo.app.workload.workloads import Workload, WorkloadOptions, WorkloadQuery
from cbo.errors import CboError
from cbo.sources.catalog import Catalog, load_catalog

REFERENCES = ("duckdb", "none")


@dataclass(frozen=True)
class Experiment:
    source: str                                  # a named workload or a folder of .sql files
    configs: tuple[Config, ...]
    options: WorkloadOptions = field(default_factory=WorkloadOptions)
    timing: TimingRules = field(default_factory=TimingRules)
    queries: tuple[str, ...] = ()                # a selection by name (empty: all)
    dialect: str | None = None                   # a folder's dialect (None: cbo's default)
    catalog: str | None = None                   # a catalog file (None: the workload's own, or the default)
    reference: str = "duckdb"                    # or "none": answers not checked
    plan_only: bool = False                      # plan in the cbo configurations, run nothing

    def __post_init__(self) -> None:
        if self.reference not in REFERENCES:
            raise CboError(f"unknown reference engine {self.reference!r} (expected {' or '.join(REFERENCES)})")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "configs": [c.to_json() for c in self.configs],
                "options": self.options.to_json(), "timing": self.timing.to_json(), "selection": list(self.queries),
                "dialect": self.dialect, "catalog_file": self.catalog, "reference": self.reference,
                "plan_only": self.plan_only}

    @staticmethod
    def from_json(body: dict[str, Any]) -> Experiment:
        options = body.get("options") or {}
        return Experiment(body["source"], tuple(Config.from_json(c) for c in body["configs"]),
                          WorkloadOptions(**options), TimingRules.from_json(body["timing"]),
                          tuple(body.get("selection") or ()), body.get("dialect"), body.get("catalog_file"),
                          body.get("reference", "duckdb"), bool(body.get("plan_only")))


@dataclass
class Outcome:
    path: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any]

    @property
    def exit_code(self) -> int:
        """1 when a configuration answered wrongly or failed (a timeout or a baseline's parse
        failure is recorded, not fatal), else 0."""
        bad = {Failure.WRONG_ANSWER.value, Failure.ERROR.value}
        return 1 if any(kind in bad for r in self.records for kind in r.get("failures", {}).values()) else 0


def geomean(values: list[float | None]) -> float | None:
    found = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in found) / len(found)) if found else None


def summarize(records: list[dict[str, Any]], configs: list[str]) -> dict[str, Any]:
    """Per configuration: geometric mean seconds, the geometric mean of its per-query ratio to the
    first configuration (queries both finished with right answers), timeouts and failures."""
    summary: dict[str, Any] = {"queries": len(records),
                               "geomean_seconds": {c: geomean([r["seconds"].get(c) for r in records]) for c in configs}}
    if configs:
        first = configs[0]
        summary["ratio_to"] = first
        summary["geomean_ratio"] = {c: geomean([r["seconds"][c] / r["seconds"][first] for r in records
                                               if r["seconds"].get(c) and r["seconds"].get(first)])
                                    for c in configs[1:]}
    summary["timeouts"] = {c: [r["query"] for r in records if c in r["timeouts"]] for c in configs
                           if any(c in r["timeouts"] for r in records)}
    failures: dict[str, dict[str, list[str]]] = {}
    for r in records:
        for config, kind in r.get("failures", {}).items():
            if kind != Failure.TIMEOUT.value:
                failures.setdefault(config, {}).setdefault(kind, []).append(r["query"])
    summary["failures"] = failures
    summary["all_answers_match"] = all(all(r["matches"].values()) for r in records)
    summary["unchecked"] = [r["query"] for r in records if not r.get("checked", True)]
    return summary


class Progress:
    """Where the run is: query, configuration, what ran and how long, and the time since the
    start. On a terminal one line rewritten in place; in a log, a line at most every 15 s."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total, self.stream = total, stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.perf_counter()
        self.last = -math.inf
        self.prefix = ""

    def elapsed(self) -> str:
        seconds = int(time.perf_counter() - self.started)
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    def query(self, number: int, query: WorkloadQuery) -> None:
        self.prefix = f"[{number}/{self.total}] {query.name}"
        self.line(f"{self.prefix} ...", force=not self.tty)

    def run(self, config: str, what: str, seconds: float | None) -> None:
        took = f" {seconds:.3f} s" if seconds is not None else ""
        self.line(f"{self.prefix} {config}: {what}{took}")

    def line(self, text: str, force: bool = False) -> None:
        text = f"{text}  (elapsed {self.elapsed()})"
        if self.tty:
            self.stream.write("\r\x1b[K" + text[:160])
            self.stream.flush()
        elif force or time.perf_counter() - self.last >= 15:
            self.last = time.perf_counter()
            say(text)

    def clear(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def prepare(experiment: Experiment, progress: Callable[[str], None] = say) -> tuple[Workload, Catalog]:
    """The workload (its data prepared) and the catalog the experiment runs over."""
    workload = resolve(experiment.source, experiment.options, dialect=experiment.dialect, progress=progress)
    workload = workload.select(experiment.queries)
    if experiment.catalog and not Path(experiment.catalog).expanduser().exists() and registry.find(experiment.catalog):
        # a named workload's catalog (``--catalog tpch``): its data prepared at the options' scale
        named = registry.find(experiment.catalog)
        assert named is not None
        path = named.load(experiment.options, progress).catalog or Path(experiment.catalog)
    elif experiment.catalog:
        path = Path(experiment.catalog).expanduser()
    elif workload.catalog is not None:
        path = workload.catalog
    else:
        from cbo.paths import default_catalog

        path = default_catalog()
    return workload, load_catalog(path)


def describe(experiment: Experiment, workload: Workload, catalog: Catalog, configs: list[Config]) -> dict[str, Any]:
    """The manifest's ``experiment``: what was run (``spec``: as ``rerun`` makes it again), and
    what it resolved to (the workload's queries with a digest of each text, the catalog)."""
    return {"workload": workload.name, "options": workload.options.to_json() if workload.options else None,
            "dialect": workload.dialect, "as_written": sorted(workload.as_written),
            "queries": [{"name": q.name, "digest": q.digest} for q in workload.queries],
            "configs": [c.to_json() for c in configs], "timing": experiment.timing.to_json(),
            "reference": experiment.reference, "catalog": str(catalog.path), "plan_only": experiment.plan_only,
            "facts": workload.facts, "spec": experiment.to_json()}


def collect_statistics(catalog: Catalog) -> dict[str, str]:
    """cbo's statistics of every table, collected where missing or stale (table -> collected | fresh)."""
    from cbo.sources.statistics import analyze

    with step("cbo's statistics (collected where missing or stale)"):
        results = analyze(catalog, progress=say)
    return {r.table: r.status for r in results}


def run(experiment: Experiment, out: Path, *, resume: bool = False, stdout: TextIO | None = None,
        expect: dict[str, str] | None = None) -> Outcome:
    """Run the experiment into the folder ``out``; ``expect`` (query -> digest of its text, a
    saved run's) makes a query whose text changed since an error before anything runs."""
    stdout = stdout or sys.stdout
    workload, catalog = prepare(experiment)
    if expect is not None:
        now = {q.name: q.digest for q in workload.queries}
        changed = [name for name, digest in expect.items() if now.get(name) != digest]
        if changed:
            raise CboError(f"the text of {', '.join(changed)} changed since the saved run (or the query is gone): "
                           "a rerun would not measure the same queries")
    configs = list(experiment.configs)
    labels = [c.label for c in configs]
    engines = Engines(catalog, workload, say)
    engines.check(configs)
    statistics = collect_statistics(catalog) if any(c.kind is Kind.CBO for c in configs) else {}
    for config in configs:
        if config.kind is Kind.CBO:
            engines.session(config)
    manifest = manifests.manifest(describe(experiment, workload, catalog, configs), catalog, engines.sessions)
    manifest["statistics_collected"] = statistics
    folder = ResultFolder(out)
    records = folder.start(manifest, resume)
    done = {r["query"] for r in records}
    if done:
        say(f"resuming {out}: {len(done)} of {len(workload.queries)} queries already measured")
    reference = Reference(catalog, engines) if experiment.reference == "duckdb" and not experiment.plan_only else None
    if not experiment.plan_only and any(c.kind.engine == "spark" for c in configs):
        with step("warming Spark up"):
            engines.warm_up(configs)
    limit = max((c.timeout_s for c in configs if c.timeout_s), default=None)
    width = max(12, *(len(label) + 2 for label in labels))
    name_width = max(8, *(len(q.name) + 2 for q in workload.queries))
    print(f"{'query':<{name_width}}" + "".join(f"{label:>{width}}" for label in labels) + "   answers", file=stdout,
          flush=True)
    progress = Progress(len(workload.queries))
    try:
        for number, query in enumerate(workload.queries, start=1):
            if query.name in done:
                continue
            progress.query(number, query)
            record = measure_query(query, configs, engines, reference, experiment, limit, progress)
            folder.append(record)
            records.append(record)
            progress.clear()
            print(table_row(record, labels, width, name_width), file=stdout, flush=True)
    except KeyboardInterrupt:
        progress.clear()
        manifest.update(interrupted=manifests.now())
        manifest["machine"]["load_end"] = manifests.load()
        folder.update(manifest)
        kept = len(read_records(folder.records_path))   # what is on disk, whenever the signal came
        say(f"interrupted: {kept} of {len(workload.queries)} queries kept in {out} "
            "(the same command with --resume continues)")
        raise
    finally:
        engines.close()
        if reference is not None:
            reference.close()
    order = {q.name: i for i, q in enumerate(workload.queries)}
    records.sort(key=lambda r: order.get(r["query"], len(order)))
    summary = summarize(records, labels)
    manifest.update(finished=manifests.now(), complete=True, summary=summary, setup=engines.setup)
    manifest["machine"]["load_end"] = manifests.load()
    folder.update(manifest)
    print_summary(summary, stdout)
    say(f"saved {out}")
    return Outcome(out, records, summary)


def measure_query(query: WorkloadQuery, configs: list[Config], engines: Engines, reference: Reference | None,
                  experiment: Experiment, limit: float | None, progress: Progress | None = None) -> dict[str, Any]:
    """One query's record: each configuration prepared (cbo plans), the reference's answer, the
    timed runs."""
    record = new_record(query.name)
    if query.label:
        record["label"] = query.label
    plans, runs = {}, {}
    for config in configs:
        if experiment.plan_only and config.kind is not Kind.CBO:
            continue
        try:
            prepared = engines.prepare(config, query)
        except ParseFailure as exc:
            fail(record, config.label, Failure.PARSE, first_line(exc))
            continue
        except Exception as exc:  # e.g. cbo cannot plan it: reported, the others run
            fail(record, config.label, Failure.ERROR, first_line(exc))
            continue
        runs[config.label] = prepared.run
        if prepared.facts:
            plans[config.label] = prepared.facts
    record["plans"] = plans
    if experiment.plan_only:
        record["rounds"] = 0
        return record
    expected = None
    ordered = _ordered(query, engines)
    if reference is not None:
        try:
            rows, seconds = reference.answer(query, limit)
            expected = rows
            record["reference"] = {"engine": "duckdb", "rows": len(rows), "seconds": round(seconds, 4),
                                   "digest": digest(rows, ordered=ordered)}
        except Exception as exc:  # the answers cannot be checked: said so, and run all the same
            record["reference"] = {"engine": "duckdb", "error": first_line(exc)}
    limits = {c.label: c.timeout_s for c in configs}
    return measure(record, query.index, runs, expected, ordered, experiment.timing, limits,
                   progress=progress.run if progress else None)


def _ordered(query: WorkloadQuery, engines: Engines) -> bool:
    try:
        return is_ordered(query.sql, engines.workload.dialect)
    except Exception:  # sqlglot cannot read it: compare as multisets (the engines report the text)
        return False


def cell(record: dict[str, Any], config: str) -> str:
    if config in record["timeouts"]:
        limit = record["timeouts"][config]
        return f">{limit:g} s" if limit else "timeout"
    kind = record.get("failures", {}).get(config)
    if kind:
        return {"wrong_answer": "WRONG", "parse": "parse error"}.get(kind, "failed")
    seconds = record["seconds"].get(config)
    if seconds is None:
        plan = (record.get("plans") or {}).get(config)
        return f"cost {plan['cost']:.3g}" if plan and plan.get("cost") is not None else "-"
    return f"{seconds:.3f}"


def table_row(record: dict[str, Any], configs: list[str], width: int, name_width: int = 8) -> str:
    cells = "".join(f"{cell(record, c):>{width}}" for c in configs)
    problems = {c: p for c, p in record["problems"].items()}
    if not record.get("checked", False) and not problems:
        verdict = "not checked" + (f" ({record['reference']['error']})" if "error" in record.get("reference", {})
                                   else "")
    else:
        verdict = "ok" if not problems else "; ".join(f"{c}: {p}" for c, p in problems.items())
    return f"{record['query']:<{name_width}}{cells}   {verdict}"


def print_summary(summary: dict[str, Any], stdout: TextIO) -> None:
    geomeans = ", ".join(f"{c} {v:.3f}" for c, v in summary["geomean_seconds"].items() if v)
    if geomeans:
        print(f"geometric mean seconds: {geomeans}", file=stdout)
    for config, ratio in (summary.get("geomean_ratio") or {}).items():
        if ratio:
            print(f"{config} / {summary['ratio_to']}: {ratio:.3f} (geometric mean of per-query ratios)", file=stdout)
    for config, names in summary["timeouts"].items():
        print(f"{config} timed out on: {', '.join(names)}", file=stdout)
    for config, kinds in summary["failures"].items():
        for kind, names in kinds.items():
            print(f"{config}: {kind.replace('_', ' ')} on {', '.join(names)}", file=stdout)
    if summary["unchecked"]:
        print(f"answers not checked: {', '.join(summary['unchecked'])}", file=stdout)
    print("all answers match the reference: " + ("yes" if summary["all_answers_match"] else "NO"), file=stdout)

