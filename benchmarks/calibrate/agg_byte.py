"""Fit the one constant ``agg_byte`` (seconds per byte of grouping key fed to a hash
aggregation) from pairs of aggregations that differ only in the width of their key.

    python -m benchmarks.calibrate.agg_byte               # SF 1, updates cbo/cost/profiles/spark.json
    python -m benchmarks.calibrate.agg_byte --dry-run     # measure and report, write nothing
    # refit from saved measurements:
    python -m benchmarks.calibrate.agg_byte --records benchmarks/results/calibration-agg-byte.json

The training set of ``python -m benchmarks.calibrate`` groups only by narrow keys (integers, a
one-character flag), so it cannot tell a per-byte term from the per-row one: both grow with the
rows aggregated. Each pair here aggregates the same rows into the same number of groups, once
by a narrow key (the string columns read into an integer aggregate) and once with the wide
string columns in the key (a DISTINCT over every column of
customer is the DISTINCT above a semi join's inner join). The other constants stay as fitted; the difference in runtime
within a pair, less what they predict for the difference (more bytes scanned and shuffled), is
the extra key bytes' cost, and ``agg_byte`` is the least-squares slope through the origin over
the pairs. The machine is shared, and a loaded machine slows every query alike: each pair's
times are first scaled so that its narrow query takes what the profile predicts for it, which
keeps the within-pair ratio measured and removes the load. The profile keeps its other
constants and records this fit under ``fit.agg_byte``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.calibrate.__main__ import FLOOR, RESULTS, measure, predict
from benchmarks.calibrate.workload import Item
from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from cbo.app.progress import say
from cbo.cost import CostProfile
from cbo.cost.profile import PROFILE_DIR, SPARK_DEFAULTS

TWENTY_PERCENT = "c_acctbal < -999.99 + 10999.98 * 0.2"
CUSTOMER_LENGTHS = ("length(c_name) + length(c_address) + length(c_phone) + length(c_mktsegment) "
                    "+ length(c_comment)")
# (name, narrow key, wide key): same rows and groups, and the same columns read (the narrow
# query groups by the key alone and folds the string columns into an integer aggregate), so
# scans cost the same and only the key's bytes (and the partial results' bytes, which the
# shuffle terms price) differ.
PAIRS = (
    ("customer", f"select count(*), max(m) from (select c_custkey, max({CUSTOMER_LENGTHS}) m from customer "
                 f"group by c_custkey) t",
     "select count(*) from (select distinct * from customer) t"),
    ("orders", "select count(*), max(m) from (select o_orderkey, max(length(o_clerk) + length(o_comment)) m "
               "from orders "
               "group by o_orderkey) t",
     "select count(*) from (select distinct o_orderkey, o_clerk, o_comment from orders) t"),
    ("partsupp", "select count(*), max(m) from (select ps_partkey, ps_suppkey, max(length(ps_comment)) m "
                 "from partsupp "
                 "group by ps_partkey, ps_suppkey) t",
     "select count(*) from (select distinct ps_partkey, ps_suppkey, ps_comment from partsupp) t"),
    ("customer_orders_3.1",
     f"select count(*), max(m) from (select c_custkey, max({CUSTOMER_LENGTHS}) m from customer, orders "
     f"where c_custkey = o_custkey and {TWENTY_PERCENT} group by c_custkey) t",
     f"select count(*) from (select distinct c.* from customer c, orders where c_custkey = o_custkey "
     f"and {TWENTY_PERCENT}) t"),
)

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibrate.agg_byte",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query after a warm-up (default 3)")
    parser.add_argument("--profile", type=Path, default=PROFILE_DIR / "spark.json", help="profile to update")
    parser.add_argument("--out", type=Path, default=RESULTS / "calibration-agg-byte.json", help="report JSON")
    parser.add_argument("--dry-run", action="store_true", help="report only; leave the profile as it is")
    parser.add_argument("--records", type=Path, help="refit from this report's measurements instead of running")
    return parser.parse_args(argv)


def slope(records: list[dict], constants: dict[str, float]) -> tuple[float, list[dict]]:
    """The least-squares ``agg_byte`` over the pairs (records in narrow, wide order)."""
    others = dict(constants, agg_byte=0.0)
    pairs = []
    for narrow, wide in zip(records[0::2], records[1::2]):
        extra_bytes = wide["quantities"].get("agg_byte", 0.0) - narrow["quantities"].get("agg_byte", 0.0)
        scale = predict(narrow, others) / narrow["seconds"]   # the load, removed
        extra = (wide["seconds"] - narrow["seconds"]) * scale
        unexplained = extra - (predict(wide, others) - predict(narrow, others))
        pairs.append({"narrow": narrow["name"], "wide": wide["name"], "extra_key_bytes": extra_bytes,
                      "scale": scale, "extra_seconds": extra, "unexplained_seconds": unexplained,
                      "implied_agg_byte": unexplained / extra_bytes if extra_bytes else None})
    numerator = sum(p["extra_key_bytes"] * p["unexplained_seconds"] for p in pairs)
    denominator = sum(p["extra_key_bytes"] ** 2 for p in pairs)
    return (numerator / denominator if denominator else 0.0), pairs


def run(args: argparse.Namespace, profile: CostProfile) -> list[dict]:
    from cbo.app.session import Session
    from cbo.workloads import tpch

    catalogs = tpch.prepare(args.sf, postgres=None, progress=say)
    session = Session(catalogs["all-spark"])
    # Plans (and so the quantities the fit reads) are chosen with the profile being refitted.
    session.planner.base_profile = profile
    session.query("select count(*) from region")   # start Spark before timing anything
    # Eager aggregation off: it would push the narrow query's max below its join, and the pair
    # would no longer differ in the key alone.
    items = [Item(f"{name}/{form}", sql, {"disabled_rules": "EagerAggregation"}) for name, narrow, wide in PAIRS
             for form, sql in (("narrow", narrow), ("wide", wide))]
    return measure(session, items, args.repeat, "agg_byte")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    profile = CostProfile.load(args.profile) if args.profile.exists() else CostProfile()
    if args.records:
        saved = json.loads(args.records.read_text())
        records, args.repeat, args.sf = saved["records"], saved["report"]["repeat"], saved["report"]["scale_factor"]
    else:
        records = run(args, profile)
    constants = dict(profile.constants)
    fitted, pairs = slope(records, constants)
    value = max(fitted, SPARK_DEFAULTS["agg_byte"] * FLOOR)
    for p in pairs:
        implied = "-" if p["implied_agg_byte"] is None else f"{p['implied_agg_byte']:.3g}"
        print(f"{p['wide']:<28} +{p['extra_key_bytes'] / 1e6:9.1f} MB of key  +{p['extra_seconds']:6.3f} s "
              f"(times x {p['scale']:.2f})  "
              f"unexplained {p['unexplained_seconds']:+6.3f} s  implies {implied} s/byte")
    print(f"agg_byte: fitted {fitted:.3g} s/byte, kept {value:.3g} (hash_build_byte is "
          f"{constants['hash_build_byte']:.3g})")
    report = {"method": "slope through the origin of unexplained runtime against extra key bytes, pairs of "
                        "aggregations over the same rows; other constants held", "fitted": fitted,
              "value": value, "pairs": pairs, "repeat": args.repeat, "scale_factor": args.sf}
    if not args.dry_run:
        updated = CostProfile(engine=profile.engine, constants=dict(constants, agg_byte=value),
                              executors=profile.executors, cores=profile.cores,
                              task_memory_bytes=profile.task_memory_bytes,
                              target_partition_bytes=profile.target_partition_bytes,
                              max_partitions=profile.max_partitions, source=str(args.profile),
                              fit=dict(profile.fit, agg_byte=report))
        updated.save(args.profile)
        say(f"updated agg_byte in {args.profile}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not args.records:
        args.out.write_text(json.dumps({"benchmark": "calibration-agg-byte", "machine": machine_info(),
                                        "report": report, "records": records}, indent=2))
    say(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    run_main(main)
