"""Regenerate the tables of ``docs/results.md`` from the saved JSON in ``benchmarks/results``, so
they cannot drift from the data: ``python -m benchmarks.results_readme`` (or ``python -m benchmarks
--write-readme``); ``--check`` exits 1 when the page differs from what the JSON gives.

The page is its own template: prose is written by hand, and each generated table sits between
two markers naming what draws it and from which files (a glob, relative to the results folder)::

    <!-- table: tpch-run tpch-run-all-spark-sf1.json -->
    ... (replaced on every regeneration)
    <!-- /table -->

Kinds: ``files`` (every saved JSON: what it is and when it was measured), ``native``,
``stats-collection``, ``cardinality``, ``join-enumeration``, ``tpch-run``, ``calibration``,
``existential``, ``tpch-scale``, ``equivalence``, ``plan-space``, ``build-overhead``,
``spark-adaptive``, ``perror``, ``planning-time``. A new result
gets a table by adding a marker (and, for a new kind of JSON, a function in ``KINDS``); a marker
names a file that exists. ``--readme`` and ``--results`` point at another page and results folder.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
README = Path(__file__).resolve().parent.parent / "docs" / "results.md"   # the page the tables live in
COMMAND = "python -m benchmarks.results_readme"

MARKER = re.compile(r"(<!-- table: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)


class ReadmeError(Exception):
    pass


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _num(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


# -- the kinds of table -----------------------------------------------------------------------------

def files_table(paths: list[Path]) -> str:
    """Every saved JSON: the benchmark that wrote it, its scale factor or workload, when it ran."""
    lines = ["| file | benchmark | scale / workload | measured |", "|---|---|---|---|"]
    for path in paths:
        body = _load(path)
        if not isinstance(body, dict):
            lines.append(f"| `{path.name}` | — | — | — |")
            continue
        kind = body.get("benchmark") or ("cardinality" if "workload" in body else path.stem.split("-")[0])
        scale = body.get("scale_factor", body.get("sf"))
        what = []
        if body.get("workload"):
            what.append(str(body["workload"]))
        if scale is not None:
            what.append(f"SF {scale:g}")
        for key in ("placement", "engine"):
            if body.get(key):
                what.append(str(body[key]))
        when = (body.get("machine") or {}).get("when", "")[:16].replace("T", " ")
        lines.append(f"| `{path.name}` | {kind} | {', '.join(what) or '—'} | {when or '—'} |")
    return "\n".join(lines)


def native_table(paths: list[Path]) -> str:
    from benchmarks.tpch.plot import table

    reports = [r for r in map(_load, paths) if r.get("benchmark") == "tpch-native"]
    if not reports:
        raise ReadmeError("no tpch-native results")
    return table(reports)


def stats_collection_table(paths: list[Path]) -> str:
    (body,) = [_load(p) for p in paths]
    lines = ["| table | cbo Spark collector (s) | Spark ANALYZE (s) |", "|---|---|---|"]
    lines += [f"| {t['table']} | {t['cbo_spark_s']:.2f} | {t['spark_analyze_s']:.2f} |" for t in body["tables"]]
    lines.append(f"| total | {body['cbo_spark_total_s']:.2f} | {body['spark_analyze_total_s']:.2f} |")
    lines += ["", f"Ratio cbo / Spark: **{body['ratio']:.2f}**; PostgreSQL path (pg_class and pg_stats of all "
                  f"tables): **{body['postgres_path_s']:.3f} s**."]
    return "\n".join(lines)


def cardinality_table(paths: list[Path]) -> str:
    from benchmarks.cardinality.report import markdown, summarize

    (body,) = [_load(p) for p in paths]
    lines = markdown(summarize(body["records"]), "").splitlines()[2:]   # the page has its own heading
    timing = body.get("cbo_estimate_ms") or {}
    if timing:
        lines += ["", f"cbo's estimation time per sub-plan, statistics loaded: median {timing['median']:.2f} ms, "
                      f"p95 {timing['p95']:.1f} ms"
                      + (f" (CPU time: median {timing['cpu_median']:.2f} ms, p95 {timing['cpu_p95']:.1f} ms)"
                         if "cpu_median" in timing else "")
                      + f"; the first time a table or column pair is met: median "
                      f"{timing['first_time_median']:.2f} ms. Sub-plans skipped: {len(body.get('skipped', []))}."]
    return "\n".join(lines)


def join_enumeration_table(paths: list[Path]) -> str:
    from benchmarks.join_enumeration.__main__ import markdown

    (body,) = [_load(p) for p in paths]
    return markdown(body)


def tpch_run_table(paths: list[Path]) -> str:
    """One row per query, one column per configuration (the fastest run; the error, or the
    timeout, where it did not finish), the rounds, cbo / faster Spark; then the geomeans."""
    (body,) = [_load(p) for p in paths]
    configs = body["configs"]
    queries = body.get("queries") or []
    ratio = any("cbo_vs_faster_spark" in q for q in queries)
    lines = ["| query | rounds | " + " | ".join(configs) + (" | cbo / faster Spark |" if ratio else " |"),
             "|---|---:|" + "---:|" * len(configs) + ("---:|" if ratio else "")]
    for q in queries:
        cells = []
        for config in configs:
            seconds = q.get("seconds", {}).get(config)
            problem = q.get("problems", {}).get(config)
            timeout = q.get("timeouts", {}).get(config)
            matched = q.get("matches", {}).get(config, True)
            cell = _num(seconds) if seconds is not None else (str(problem).split(":")[0][:30] if problem else
                                                               f"timeout ({timeout:g} s)" if timeout else "—")
            cells.append(cell + ("" if matched or seconds is None else " (wrong answer)"))
        row = f"| {q['query']} | {q.get('rounds', '')} | " + " | ".join(cells) + " |"
        if ratio:
            row += f" {_num(q.get('cbo_vs_faster_spark'), 2)} |"
        lines.append(row)
    geomeans = (body.get("summary") or {}).get("geomean_seconds") or {}
    if geomeans:
        cells = " | ".join(_num(geomeans.get(c)) for c in configs)
        lines.append(f"| geomean | | {cells} |" + (" |" if ratio else ""))
    summary = body.get("summary") or {}
    facts = [f"{key.replace('_', ' ')} {_num(value, 3)}" for key, value in summary.items()
             if isinstance(value, (int, float)) and not isinstance(value, bool)]
    if "all_answers_match" in summary:
        facts.append("every answer matches DuckDB" if summary["all_answers_match"] else "**some answers differ**")
    if facts:
        lines += ["", "; ".join(facts) + "."]
    return "\n".join(lines)


def calibration_table(paths: list[Path]) -> str:
    """A cost fit's report: the Spark fit (``calibration``), the remote fit (``calibration-remote``,
    its constants too) or the one-constant ``agg_byte`` fit (``calibration-agg-byte``)."""
    (body,) = [_load(p) for p in paths]
    report = body["report"]
    if body.get("benchmark") == "calibration-agg-byte":
        rows = [("fitted agg_byte (seconds per byte of grouping key)", f"{report['value']:.2g}"),
                ("pairs of aggregations", len(report["pairs"])),
                ("per pair", ", ".join(f"{p['implied_agg_byte']:.2g}" for p in report["pairs"]))]
        return "\n".join(["| | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])
    before = report.get("spearman_default", report.get("spearman_before"))
    rows = [("training queries", report.get("training_queries")),
            ("held-back queries", report.get("held_back_queries")),
            ("training median relative error", f"{report['median_relative_error']:.2f} "
                                                f"(max {report['max_relative_error']:.2f})"),
            ("held-back Spearman(cost, runtime), constants before the fit", f"{before:.3f}"),
            ("held-back Spearman(cost, runtime), fitted constants", f"{report['spearman_fitted']:.3f}")]
    if body.get("benchmark") == "calibration-remote":
        rows += [(f"`{name}`", f"{value:.3g}") for name, value in body["constants"].items()]
    return "\n".join(["| | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows if v is not None])


# The existential benchmark's forms by their JSON keys, named by what each does.
EXISTENTIAL_FORMS = {"spark": "Spark", "3.1": "DISTINCT above", "3.2": "DISTINCT below", "3.3": "semi join",
                     "free": "cbo free"}


def existential_table(paths: list[Path]) -> str:
    (body,) = [_load(p) for p in paths]
    forms = list(EXISTENTIAL_FORMS)
    names = EXISTENTIAL_FORMS
    lines = ["| case | " + " | ".join(names[f] for f in forms) + " | free chose |",
             "|---|" + "---:|" * len(forms) + "---|"]
    for case in body["cases"]:
        seconds = case["seconds"]
        others = [seconds[f] for f in ("spark", "3.1", "3.2", "3.3") if seconds.get(f) is not None]
        cells = []
        for form in forms:
            value = seconds.get(form)
            text = _num(value)
            if form == "free" and value is not None and others and value <= min(others):   # fastest of all
                text = f"**{text}**"
            cells.append(text)
        chose = ", ".join(names.get(f, f) for f in case.get("forms", {}).get("free", [])) or "—"
        lines.append(f"| {case['case']} | " + " | ".join(cells) + f" | {chose} |")
    s = body["summary"]
    lines += ["", f"cbo free within 1.1x of the fastest forced form in {s['cases_free_within_1.1x_of_fastest_forced']} "
                  f"of {s['cases']} cases (worst {s['worst_free_vs_fastest_forced']:.2f}x); worst against Spark "
                  f"{s['worst_free_vs_spark']:.2f}x; "
                  + ("every answer matches DuckDB." if s.get("all_answers_match") else "**some answers differ**.")]
    if s.get("cases_free_plan_within_1.1x_of_fastest_forced") is not None:
        # free's plan timed in all its runs: free's own and those of the forced form whose physical
        # plan is identical (``same_plan_as_free``), so that run-to-run noise is not counted as a miss
        pooled = [min([c["seconds"]["free"]] + [c["seconds"][f] for f in c.get("same_plan_as_free", [])
                                                 if f in c["seconds"]]) / c["seconds"]["spark"]
                  for c in body["cases"] if "free" in c["seconds"] and "spark" in c["seconds"]]
        lines.append(f"By plan (free's plan timed in its own runs and in those of the identical forced form): "
                     f"within 1.1x of the fastest forced form in {s['cases_free_plan_within_1.1x_of_fastest_forced']} "
                     f"of {s['cases']} (worst {s['worst_free_plan_vs_fastest_forced']:.2f}x)"
                     + (f"; worst against Spark {max(pooled):.2f}x." if pooled else "."))
    return "\n".join(lines)


def tpch_scale_table(paths: list[Path]) -> str:
    (body,) = [_load(p) for p in paths]
    configs = body["configs"]
    lines = ["| SF | Parquet | " + " | ".join(f"{c} ({len(body['summed_queries'])} queries summed)" for c in configs)
             + " | geomean cbo / Spark |", "|---|---|" + "---|" * len(configs) + "---|"]
    for point in body["points"]:
        size = point["data_bytes"] / 2**30
        size_text = f"{size:.2f} GiB" if size >= 1 else f"{point['data_bytes'] / 2**20:.0f} MiB"
        lines.append(f"| {point['scale_factor']:g} | {size_text} | "
                     + " | ".join(f"{point['total_seconds'][c]:.1f} s" for c in configs)
                     + f" | {point['cbo_vs_spark_default']:.2f} |")
    growth = ", ".join(f"{c} {body['growth'][c]:.2f}" for c in configs)
    per_query = "; ".join(f"{q} " + ", ".join(_num(v["growth"].get(c), 2) for c in configs)
                          for q, v in body["queries"].items())
    lines += ["", f"Growth (slope of log seconds on log SF): {growth}. Per query ({', '.join(configs)}): {per_query}."]
    return "\n".join(lines)


def equivalence_table(paths: list[Path]) -> str:
    """The equivalence runs added up per commit and family (``benchmarks.equivalence.summary``)."""
    from benchmarks.equivalence.summary import markdown, totals

    runs = [body for body in map(_load, paths) if isinstance(body, dict) and body.get("benchmark") == "equivalence"]
    if not runs:
        raise ReadmeError("no equivalence runs")
    return markdown(totals(runs))


def plan_space_table(paths: list[Path]) -> str:
    """How the chosen plan ranks among plans drawn from its memo (``benchmarks.plan_space``)."""
    (body,) = [_load(p) for p in paths]
    s = body["summary"]
    lines = ["| query | memo groups | plans timed | cut off | chosen / fastest | rank | Spearman(cost, time) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for q in body["queries"]:
        lines.append(f"| {q['query']} | {q['memo_groups']} | {q['plans_timed']} | {q['cut_off']} | "
                     f"{_num(q['chosen_over_fastest'], 2)} | {q['rank']} | {_num(q.get('spearman'), 2)} |")
    lines += ["", f"{s['draws']} distinct plans drawn (K = {body['k']} per query, seed {body['seed']}), "
                  f"{s['cut_off']} cut off at {body['cutoff']:g}x the chosen plan's time; the chosen plan was the "
                  f"fastest in {s['chosen_fastest']} of {s['queries']} queries (median chosen / fastest "
                  f"{s['median_chosen_over_fastest']:.2f}, worst {s['worst_chosen_over_fastest']:.2f}); Spearman of "
                  f"estimated cost and time {s['spearman_all_plans']:.2f} over all plans, "
                  f"{s['spearman_ratios_to_chosen']:.2f} as ratios to each query's chosen plan, median "
                  f"{s['median_spearman_per_query']:.2f} per query."]
    return "\n".join(lines)


def build_overhead_table(paths: list[Path]) -> str:
    """What cbo costs before Spark runs a query (``benchmarks.tpch.build_overhead``)."""
    (body,) = [_load(p) for p in paths]
    s = body["summary"]
    rows = [("cbo's planning (parse, bind, normalize, search)", s["plan_ms"]),
            ("building the plan's DataFrame (rendering the statement, Spark's parse and analysis)", s["dataframe_ms"]),
            ("Spark SQL's own parse and analysis of the query text", s["spark_sql_ms"])]
    return "\n".join(["| step | median ms | max ms |", "|---|---:|---:|"]
                     + [f"| {name} | {v['median']:.1f} | {v['max']:.1f} |" for name, v in rows])


def spark_adaptive_table(paths: list[Path]) -> str:
    """``benchmarks.spark_adaptive``: per workload and configuration, the geometric mean of its
    time over adaptive execution off's, the queries faster and slower by 5 %, the worst query,
    and the stages and tasks Spark ran."""
    (body,) = [_load(p) for p in paths]
    lines = ["| workload | configuration | time / off (geomean) | faster | slower | worst | stages | tasks |",
             "|---|---|---|---|---|---|---|---|"]
    for group, found in body["summary"].items():
        if not isinstance(found, dict):
            continue
        off = found["off"]
        lines.append(f"| {group} | off | 1 | | | | {off['stages']} | {off['tasks']} |")
        for config in body["configs"]:
            row = found.get(config)
            if config == "off" or row is None:
                continue
            worst = f"{row['worst'][0]} {row['worst'][1]:.2f}"
            lines.append(f"| {group} | {config} | {_num(row['geomean_vs_off'])} | {row['faster_by_5pct']} | "
                         f"{row['slower_by_5pct']} | {worst} | {row['stages']} | {row['tasks']} |")
    lines += ["", f"Default `spark_adaptive` = `{body['chosen']}`; SF {body['scale_factor']:g}, best of "
                  f"{body['repeat']}; answers all equal to off's: {body['summary']['all_answers_match']}."]
    return "\n".join(lines)


def sqllogictest_table(paths: list[Path]) -> str:
    """SQLite's sqllogictest corpus through cbo (``benchmarks.sqllogictest``): each saved run, its
    outcomes per class of files, and its most frequent refusals."""
    runs = [body for body in map(_load, paths) if isinstance(body, dict) and body.get("benchmark") == "sqllogictest"]
    if not runs:
        raise ReadmeError("no sqllogictest runs")
    outcomes = ["answered", "refused", "internal", "wrong", "hang", "error_as_reference", "unchecked",
                "accepted_invalid"]
    lines = ["| run | class | files | queries | " + " | ".join(o.replace("_", " ") for o in outcomes)
             + " | cbo = file | DuckDB = file |", "|---|---|---:|---:|" + "---:|" * (len(outcomes) + 2)]
    notes = []
    for body in sorted(runs, key=lambda b: (b.get("set") or "", b["machine"]["when"])):
        every = body.get("every", 1)
        label = f"`{body['commit'][:10]}{'+uncommitted' if body.get('uncommitted_changes') else ''}` " \
                f"{body.get('set') or 'files'}{f' (every {every})' if every > 1 else ''}"
        for name, entry in sorted(body["classes"].items()):
            counts = entry["outcomes"]
            lines.append(f"| {label} | {name} | {entry['files']} | {entry['queries']:,} | "
                         + " | ".join(f"{counts.get(o, 0):,}" for o in outcomes)
                         + f" | {entry['cbo_matches_file']:,} | {entry['duckdb_matches_file']:,} |")
        wrong = [p for p in body["problems"] if p["outcome"] == "wrong"]
        division = sum(p["detail"].startswith("division:") for p in wrong)
        top = "; ".join(f"{r['message']} ({r['count']:,})" for r in body["refusals"][:5]) or "none"
        notes.append(f"{label}: of {len(wrong):,} wrong, {division:,} divide as the engine does, not as the "
                     f"dialect; refusals: {top}.")
    return "\n".join(lines + [""] + notes)


def perror_table(paths: list[Path]) -> str:
    """P-error per query and system (``benchmarks.cardinality.perror``), with cbo's q-errors and
    the measured runtime ratio cbo / cbo-oracle where the run had one; then a summary row."""
    parts = []
    for path in paths:
        body = _load(path)
        systems = body["systems"]
        header = ["query", *systems, "q-error cbo root", "q-error cbo max", "runtime cbo / cbo-oracle"]
        lines = [f"TPC-H SF {body['sf']:g} (`{path.name}`; distortions: median over seeds "
                 f"{', '.join(map(str, body['seeds']))}):", "", "| " + " | ".join(header) + " |",
                 "|" + "---|" * len(header)]
        for record in body["records"]:
            cells = [record["query"]]
            cells += [f"{record[s]:.3f}" if record.get(s) is not None else "error" for s in systems]
            runs = record.get("cbo_runs") or [{}]
            cells.append(f"{record['cbo_root_q_error']:.2f}" if "cbo_root_q_error" in record else "")
            cells.append(f"{runs[0]['q_error_max']:.1f}" if "q_error_max" in runs[0] else "")
            ratio = record.get("runtime_cbo_over_oracle")
            cells.append(f"{ratio:.3f}" if ratio is not None else "")
            lines.append("| " + " | ".join(cells) + " |")
        summary = body["summary"]
        cells = ["geomean (queries > 1.01)"]
        cells += [f"{summary[s]['geomean']:.3f} ({summary[s]['above_1_01']})" if summary.get(s) else "" for s in systems]
        lines.append("| " + " | ".join(cells + ["", "", ""]) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def planning_time_table(paths: list[Path]) -> str:
    """Planning time per query (``benchmarks.planning_time``): the best of the repeated plannings
    and each query's first, median and slowest, and the queries over one second."""
    lines = ["| file | commit | statistics | queries | median | max | over 1 s | slowest "
             "| first planning: median / max |", "|---|---|---|---|---|---|---|---|---|"]
    for path in paths:
        body = _load(path)
        queries = body["queries"]
        best = sorted((f["plan_ms"], name) for name, f in queries.items())
        first = [f["first_ms"] for f in queries.values() if "first_ms" in f]
        values = [ms for ms, _ in best]
        slowest = ", ".join(f"{name} {ms:.0f}" for ms, name in reversed(best[-4:]))
        stats = "plan files' (no samples)" if body["stats"].endswith("tpcds-sf1") else "SF 1, with samples"
        first_text = f"{statistics.median(first):.1f} / {max(first):.0f} ms" if first else "—"
        lines.append(f"| `{path.name}` | {str(body.get('commit', ''))[:7]} | {stats} | {len(values)} "
                     f"| {statistics.median(values):.1f} ms | {max(values):.0f} ms "
                     f"| {sum(ms > 1000.0 for ms in values)} | {slowest} ms | {first_text} |")
    return "\n".join(lines)


KINDS: dict[str, Callable[[list[Path]], str]] = {
    "files": files_table, "native": native_table, "stats-collection": stats_collection_table,
    "cardinality": cardinality_table, "join-enumeration": join_enumeration_table, "tpch-run": tpch_run_table,
    "calibration": calibration_table, "existential": existential_table, "tpch-scale": tpch_scale_table,
    "equivalence": equivalence_table, "plan-space": plan_space_table, "build-overhead": build_overhead_table,
    "spark-adaptive": spark_adaptive_table,
    "sqllogictest": sqllogictest_table, "perror": perror_table, "planning-time": planning_time_table,
}


# -- the page ---------------------------------------------------------------------------------------

def render_table(spec: str, results: Path = RESULTS) -> str:
    kind, *patterns = spec.split()
    if kind not in KINDS:
        raise ReadmeError(f"marker 'table: {spec}': unknown kind {kind!r} (expected one of: {', '.join(KINDS)})")
    paths = sorted({p for pattern in (patterns or ["*.json"]) for p in results.glob(pattern)})
    if not paths:
        raise ReadmeError(f"marker 'table: {spec}': no file in {results} matches {' '.join(patterns)}")
    try:
        return KINDS[kind](paths)
    except (KeyError, ValueError, TypeError) as exc:
        raise ReadmeError(f"marker 'table: {spec}': {type(exc).__name__}: {exc}") from exc


def regenerate(text: str, results: Path = RESULTS) -> str:
    """``text`` with every marked table drawn anew from the JSON in ``results``."""
    def replace(match: re.Match[str]) -> str:
        return match.group(1) + render_table(match.group("spec"), results) + "\n" + match.group(4)

    return MARKER.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page's tables differ from the saved JSON")
    parser.add_argument("--readme", type=Path, default=README, help=f"the page to regenerate (default {README})")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help=f"the folder of saved JSON its markers name (default {RESULTS})")
    args = parser.parse_args(argv)
    current = args.readme.read_text()
    try:
        fresh = regenerate(current, args.results)
    except ReadmeError as exc:
        print(f"error: {exc}")
        return 2
    tables = len(MARKER.findall(current))
    if args.check:
        if fresh != current:
            print(f"{args.readme}: its tables differ from the saved JSON; regenerate with `{COMMAND}`")
            return 1
        print(f"{args.readme}: {tables} tables match the saved JSON")
        return 0
    if fresh != current:
        args.readme.write_text(fresh)
        print(f"{args.readme}: {tables} tables regenerated")
    else:
        print(f"{args.readme}: {tables} tables already match the saved JSON")
    return 0


if __name__ == "__main__":
    from benchmarks.cli import run_main

    run_main(main)
