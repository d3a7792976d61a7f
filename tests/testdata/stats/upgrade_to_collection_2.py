"""How the SF 1 statistics kept with the tests were brought to collection version 2.

They were collected by an older cbo (100,000-row samples, MCVs not noise-tested); collecting
them again would change more than the method (other samples, fingerprints). This applies the
two changes of version 2 to the stored values and nothing else, for tables larger than the
collector's sample (the others are exact):

* MCVs: each MCV's sample count is recovered from its frequency (k = frequency x n, n the one
  sample size that makes every count a whole number), ``stats.histogram.choose_mcv`` is applied
  to the counts, and a dropped value's rows go to the histogram bucket holding it (the next one
  when it falls between buckets), one more distinct value there, as a rebuilt histogram would
  count it. On the data the SF 1 collection keeps exactly the MCVs a fresh collection keeps.
* Bucket distinct counts: ``stats.histogram.with_distinct``.

Usage: ``python tests/testdata/stats/upgrade_to_collection_2.py tests/testdata/stats/tpch-sf1``
(run once; the files record ``collection_version`` 2 and are skipped after).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from stats.histogram import MCV_SIZE, choose_mcv, with_distinct
from stats.model import Bucket
from stats.spark_collector import SAMPLE_ROWS


def sample_size(frequencies: list[float]) -> int:
    for n in range(int(SAMPLE_ROWS * 0.9), int(SAMPLE_ROWS * 1.1) + 1):
        if all(abs(f * n - round(f * n)) < 1e-6 for f in frequencies):
            return n
    raise ValueError("no sample size makes every MCV count whole")


def upgrade(body: dict) -> None:
    rows = body["row_count"]
    for c in body["columns"]:
        mcv = c["mcv"]
        if mcv:
            n = sample_size([f for _, f in mcv])
            counts = [(v, float(round(f * n))) for v, f in mcv]
            kept = {json.dumps(v) for v, _ in choose_mcv(counts, c["distinct"], rows * (1 - c["null_fraction"]),
                                                          rows, MCV_SIZE, sample_rows=n)}
            histogram = c["histogram"]
            for v, f in mcv:
                if json.dumps(v) in kept:
                    continue
                index = next((i for i, (lo, hi, _, _) in enumerate(histogram) if lo <= v <= hi), None)
                if index is None:   # between two buckets (the MCVs were left out of them), or beyond all
                    index = next((i for i, b in enumerate(histogram) if b[0] > v), len(histogram) - 1)
                    lo, hi, r, d = histogram[index]
                    histogram[index] = [min(lo, v), max(hi, v), r, d]
                histogram[index][2] += f * rows
                histogram[index][3] += 1
            c["mcv"] = [[v, f] for v, f in mcv if json.dumps(v) in kept]
        buckets = with_distinct([Bucket(*b) for b in c["histogram"]], max(c["distinct"] - len(c["mcv"]), 0.0))
        c["histogram"] = [[b.lower, b.upper, b.rows, b.distinct] for b in buckets]
    body["collection_version"] = 2


def main(folder: Path) -> None:
    for path in sorted(folder.glob("*.json")):
        body = json.loads(path.read_text())
        if body.get("collection_version", 1) >= 2:
            continue
        if body["row_count"] > SAMPLE_ROWS:
            upgrade(body)
        body["collection_version"] = 2
        path.write_text(json.dumps(body, separators=(",", ":")))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
