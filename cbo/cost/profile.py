"""Cost constants, one profile per engine, in one place.

A cost is a sum of *quantities* (bytes scanned, rows hashed, bytes shuffled, ...) each
multiplied by its constant, in seconds per unit; a plan's cost is then a predicted runtime on the
machine the constants were fitted on. ``python -m benchmarks.calibrate`` measures queries on this
machine and fits the constants with non-negative least squares; it writes a profile file
(JSON) that ``CostProfile.load`` reads. ``cbo/cost/profiles/spark.json`` is the fitted profile
shipped with cbo; without it the defaults below (round guesses for Spark in local mode) apply.

Quantities (the keys of ``constants``):

====================  ==========================================================================
scan_byte, scan_row   bytes and rows read from files (only the columns the plan reads)
cpu_row               rows passing through a filter, projection, merge or join output
hash_build_row/_byte  rows and bytes inserted into a shuffled hash join's table
hash_probe_row        rows looked up in a hash table
agg_row               rows fed to a hash aggregation (partial and final phases)
agg_byte              bytes of grouping key those rows carry (projected, hashed, compared, copied)
sort_row              row comparisons of a sort: rows x log2(rows per partition)
shuffle_row/_byte     rows and bytes written and read through an exchange (serialization,
                      compression, local disk; network on a cluster)
broadcast_row/_byte   rows collected to the driver and hashed; bytes sent to each executor
                      (``broadcast_byte`` is charged once per executor)
nested_loop_pair      pairs of rows a nested loop join compares
spill_byte            bytes of a hash table beyond a task's memory, written and read back
task                  a task launched (per partition of each stage)
jdbc_row, jdbc_byte   rows a JDBC read brings into Spark (a table, or a remote query's result);
                      bytes it sends over
remote_row_postgres   rows a pushed subplan's scans, filters, joins read in PostgreSQL, and rows of a
                      table read through JDBC (one per connector, by its dialect: remote_row_mysql
                      in MariaDB, remote_row_sqlite in SQLite; defaults from the connector)
remote_agg_row_...    rows a pushed subplan's aggregations read there (_postgres, _mysql, _sqlite)
remote_query          a query sent to a JDBC source (a table read or a pushed subplan): its latency
query                 a fixed cost per query (scheduling, planning), and per CTE computed once
                      (Spark runs its producer as a plan of its own)
====================  ==========================================================================

The environment entries describe the cluster the constants apply to: ``executors`` (a broadcast
is sent to each), ``cores``, ``task_memory_bytes`` (what a hash table may hold per task before
spilling), ``target_partition_bytes`` (cbo sizes shuffles to about this per partition) and
``max_partitions``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbo.connectors import CONNECTORS
from cbo.errors import CboError

_PRICED = [c for c in CONNECTORS if c.remote_costs is not None]
QUANTITIES = ("scan_byte", "scan_row", "cpu_row", "hash_build_row", "hash_build_byte", "hash_probe_row",
              "agg_row", "agg_byte", "sort_row", "shuffle_row", "shuffle_byte", "broadcast_row", "broadcast_byte",
              "nested_loop_pair", "spill_byte", "task", "jdbc_row", "jdbc_byte", "query",
              *(c.row_quantity for c in _PRICED), *(c.agg_row_quantity for c in _PRICED), "remote_query")

SPARK_DEFAULTS: dict[str, float] = {
    "scan_byte": 2e-9, "scan_row": 2e-8, "cpu_row": 1e-8,
    "hash_build_row": 1e-7, "hash_build_byte": 2e-9, "hash_probe_row": 5e-8,
    "agg_row": 5e-8, "agg_byte": 5e-9, "sort_row": 3e-8,
    "shuffle_row": 5e-8, "shuffle_byte": 1e-8,
    "broadcast_row": 2e-7, "broadcast_byte": 2e-8,
    "nested_loop_pair": 2e-9, "spill_byte": 2e-8, "task": 5e-3,
    "jdbc_row": 1e-6, "jdbc_byte": 2e-8, "query": 0.5,
    # each connector's rows read and aggregated in its source (Connector.remote_costs)
    **{c.row_quantity: c.cost_defaults()[c.row_quantity] for c in _PRICED},
    **{c.agg_row_quantity: c.cost_defaults()[c.agg_row_quantity] for c in _PRICED},
    "remote_query": 0.02,
}

PROFILE_DIR = Path(__file__).with_name("profiles")


@dataclass(frozen=True)
class CostProfile:
    engine: str = "spark"
    constants: Mapping[str, float] = field(default_factory=lambda: dict(SPARK_DEFAULTS))
    executors: int = 1
    cores: int = 2
    task_memory_bytes: float = 1.0e9
    target_partition_bytes: float = 64 * 2**20
    max_partitions: int = 200
    source: str = "defaults"          # where the constants came from
    fit: Mapping[str, Any] = field(default_factory=dict)   # calibration report, if fitted

    def __post_init__(self) -> None:
        unknown = set(self.constants) - set(QUANTITIES)
        if unknown:
            raise CboError(f"cost profile ({self.source}): unknown quantities {', '.join(sorted(unknown))}")
        for name, value in self.constants.items():
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise CboError(f"cost profile ({self.source}): constant {name} must be a non-negative number, "
                               f"not {value!r}")
        merged = dict(SPARK_DEFAULTS)
        merged.update(self.constants)
        object.__setattr__(self, "constants", merged)

    def partitions(self, scanned_bytes: float) -> int:
        """Shuffle partitions for a query reading ``scanned_bytes``: about one partition per
        ``target_partition_bytes``, at least two per core (so every core has work while one
        task straggles), at most ``max_partitions``."""
        wanted = math.ceil(scanned_bytes / self.target_partition_bytes)
        return int(min(self.max_partitions, max(2 * self.cores * self.executors, wanted)))

    # -- files -------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "constants": dict(self.constants), "executors": self.executors,
                "cores": self.cores, "task_memory_bytes": self.task_memory_bytes,
                "target_partition_bytes": self.target_partition_bytes, "max_partitions": self.max_partitions,
                "fit": dict(self.fit)}

    def save(self, path: Path) -> None:
        """Write the profile atomically (a half-written profile would poison every later plan)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        os.replace(temporary, path)

    @classmethod
    def load(cls, path: Path) -> CostProfile:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise CboError(f"cannot read cost profile {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise CboError(f"cost profile {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("constants"), dict):
            raise CboError(f"cost profile {path} has no 'constants' object")
        known = {"engine", "executors", "cores", "task_memory_bytes", "target_partition_bytes", "max_partitions", "fit"}
        extra = set(data) - known - {"constants"}
        if extra:
            raise CboError(f"cost profile {path}: unknown entries {', '.join(sorted(extra))}")
        values = {k: v for k, v in data.items() if k in known}
        return cls(constants=data["constants"], source=str(path), **values)


def default_profile(engine: str = "spark") -> CostProfile:
    """The shipped calibrated profile for ``engine`` when there is one, else the defaults.
    ``$CBO_COST_PROFILE`` names another profile file."""
    override = os.environ.get("CBO_COST_PROFILE")
    if override:
        return CostProfile.load(Path(override))
    shipped = PROFILE_DIR / f"{engine}.json"
    if shipped.is_file():
        return CostProfile.load(shipped)
    return CostProfile(engine=engine)
