"""The cluster a plan will run on, and the cost profile that fits it.

A profile's constants are seconds per unit of work measured on one machine (``cbo.cost.profile``):
on the 2-core reference machine in local mode, one executor with 2 cores. A plan that runs on a
cluster of another shape does the same work on more (or fewer) cores, so the planner reads the
session's shape (``ClusterShape``: executors, cores each, Spark's default shuffle partitions and
broadcast threshold; ``cbo.engines.spark.cluster_shape`` reads it from a running session) and
costs with the profile for it (``profile_for``):

* a profile fitted on a cluster of that shape, when one exists: ``python -m benchmarks.calibrate
  --master URL`` writes ``<cache>/profiles/spark-<executors>x<cores>.json``; that directory is
  looked in first, then the profiles shipped with cbo (``shape_profiles``);
* else the given profile scaled to the shape (``scaled``): the work that runs in tasks, one per
  core (scanning, hashing, sorting, shuffling, launching tasks), takes the profile's time times
  its cores over the cluster's; the driver's part of a broadcast, a JDBC source's reading and the
  fixed cost per query do not spread over executors and keep their constants. A broadcast is sent
  to every executor (``broadcast_byte`` is charged per executor), so with more executors a
  broadcast costs more beside a shuffle. Shuffles get at most the session's default shuffle
  partition count (``max_partitions``).

Local mode keeps the profile as it is: it was fitted there, and a plan must not depend on the
cores of the machine that plans it (the plan files are the same on every machine).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from cbo.cost.profile import PROFILE_DIR, CostProfile

# Quantities whose work runs in tasks, spread over the cluster's cores.
PARALLEL = ("scan_byte", "scan_row", "cpu_row", "hash_build_row", "hash_build_byte", "hash_probe_row", "agg_row",
            "sort_row", "shuffle_row", "shuffle_byte", "nested_loop_pair", "spill_byte", "task")


@dataclass(frozen=True)
class ClusterShape:
    """What a Spark session runs on. ``broadcast_threshold`` is ``spark.sql.autoBroadcastJoinThreshold``
    in bytes (-1: broadcasts off); ``shuffle_partitions`` is ``spark.sql.shuffle.partitions``."""

    executors: int
    cores: int                       # per executor
    shuffle_partitions: int = 200
    broadcast_threshold: int = 10 * 2**20
    master: str = ""                 # where it was read (spark://..., sc://...), for EXPLAIN

    @property
    def key(self) -> str:
        """Names the profile fitted on this shape: ``2x4`` is two executors of four cores."""
        return f"{self.executors}x{self.cores}"

    @property
    def total_cores(self) -> int:
        return self.executors * self.cores

    def describe(self) -> str:
        executors = f"{self.executors} executor{'s' if self.executors != 1 else ''}"
        cores = f"{self.cores} core{'s' if self.cores != 1 else ''}"
        threshold = "off" if self.broadcast_threshold < 0 else _bytes(self.broadcast_threshold)
        where = f" on {self.master}" if self.master else ""
        return (f"{executors} x {cores}{where}; shuffle partitions {self.shuffle_partitions}, "
                f"broadcast threshold {threshold}")


def user_profile_dir() -> Path:
    """Where calibration on a cluster saves its profiles: the cache, not cbo's own files."""
    from cbo.paths import cache_dir

    return cache_dir() / "profiles"


def shape_profile_path(shape: ClusterShape, engine: str = "spark", directory: Path | None = None) -> Path:
    return (directory or user_profile_dir()) / f"{engine}-{shape.key}.json"


def shape_profiles(shape: ClusterShape, engine: str = "spark") -> list[Path]:
    """Where a profile fitted on ``shape`` may be, in the order they are looked at."""
    return [shape_profile_path(shape, engine, directory) for directory in (user_profile_dir(), PROFILE_DIR)]


def scaled(profile: CostProfile, shape: ClusterShape) -> CostProfile:
    """``profile`` moved to a cluster of ``shape`` (see the module's docstring)."""
    ratio = (profile.executors * profile.cores) / shape.total_cores
    constants = {name: value * ratio if name in PARALLEL else value for name, value in profile.constants.items()}
    return replace(profile, constants=constants, executors=shape.executors, cores=shape.cores,
                   max_partitions=max(1, shape.shuffle_partitions),
                   source=f"{profile.source} scaled from {profile.executors}x{profile.cores} to {shape.key}")


def profile_for(profile: CostProfile, shape: ClusterShape | None) -> CostProfile:
    """The profile to cost with on ``shape``: ``profile`` itself in local mode (``shape`` None),
    the profile fitted on that shape when there is one (``shape_profiles``), else ``profile``
    scaled to it."""
    if shape is None:
        return profile
    for fitted in shape_profiles(shape, profile.engine):
        if fitted.is_file():
            return replace(CostProfile.load(fitted), max_partitions=max(1, shape.shuffle_partitions))
    return scaled(profile, shape)


def describe_profile(profile: CostProfile) -> str:
    """The profile's name for EXPLAIN: its file (not the directory: paths are long) and how it
    came to be."""
    source = profile.source
    for part in source.split(" "):
        if "/" in part:
            source = source.replace(part, Path(part).name)
    fitted = profile.fit.get("training_queries")
    how = f"fitted on {fitted} queries" if fitted else "not fitted"
    return f"{source} ({how}; costs {profile.executors} x {profile.cores} cores)"


def _bytes(value: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"
