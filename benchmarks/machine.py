"""What a benchmark ran on: machine, versions and settings, saved beside every result."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _java() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
        return (out.stderr or out.stdout).splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "not found"


def git_commit(*paths: str) -> tuple[str, bool]:
    """The commit of the checkout the benchmark runs from, and whether ``paths`` (relative to
    the checkout) differ from it: such a run counts for no commit."""
    root = Path(__file__).resolve().parent.parent

    def git(*words: str) -> str:
        return subprocess.run(["git", "-C", str(root), *words], capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain", "--", *paths).strip())
    except (OSError, subprocess.CalledProcessError):
        return "unknown", True
    return commit, dirty


def machine_info() -> dict[str, object]:
    versions = {}
    for package in ("cbo", "pyspark", "duckdb", "sqlglot", "psycopg", "pyarrow", "pandas", "numpy", "tpchgen-cli"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        "java": _java(),
        "versions": versions,
    }
