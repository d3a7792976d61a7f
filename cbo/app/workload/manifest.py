"""The manifest: what a result's figures depend on, saved with every result.

* ``cbo``: the git commit of the checkout cbo runs from and whether its tracked files differ
  from it (``dirty``, with the files), or the installed version when cbo is not a checkout;
* ``packages``: the installed versions of cbo's dependencies and how they differ from the lock
  (``constraints.txt`` beside ``pyproject.toml``), the Python and Java versions;
* ``settings``: each cbo configuration's optimizer settings, all of them, defaults included;
* ``cost_profiles``: each cbo configuration's cost profile (where it came from, its constants
  and a digest of them);
* ``statistics``: per table, the fingerprint of the data the stored statistics describe, when
  they were collected, and a digest of the stored statistics themselves;
* ``catalog``: its sources and tables, with no credentials (URLs redacted, no user names or
  password sources, Spark settings that look like secrets left out);
* ``machine``: host, cores, memory, and the load average at the start and at the end.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbo.settings import settings_record
from cbo.sources.catalog import Catalog

if TYPE_CHECKING:
    from cbo.app.session import Session

CHECKOUT = Path(__file__).resolve().parents[3]
LOCK_FILE = "constraints.txt"
SECRET = re.compile(r"password|secret|token|credential|key(store)?pass", re.I)


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def git_state(root: Path = CHECKOUT) -> dict[str, Any]:
    """The checkout's commit and whether its tracked files differ from it."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout if out.returncode == 0 else None

    if not (root / ".git").exists():
        return {"commit": None, "dirty": None, "checkout": None,
                "note": "cbo is not run from a git checkout (an installed package)"}
    commit = git("rev-parse", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=no")
    files = [line[3:] for line in (changed or "").splitlines() if line.strip()]
    return {"commit": commit.strip() if commit else None, "dirty": bool(files) if changed is not None else None,
            "changed_files": files[:50], "checkout": str(root)}


def lock_path(root: Path = CHECKOUT) -> Path:
    return root / LOCK_FILE


def read_lock(path: Path) -> dict[str, str]:
    """``name==version`` lines of a pip constraints file, names normalized (PEP 503)."""
    found: dict[str, str] = {}
    if not path.is_file():
        return found
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, _, version = line.partition("==")
            found[_normalized(name.split("[")[0])] = version.split(";")[0].strip()
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().strip()


def packages(root: Path = CHECKOUT) -> dict[str, Any]:
    """Installed versions of every package the lock names (or of cbo's direct dependencies
    when there is no lock), and the differences from the lock."""
    lock = read_lock(lock_path(root))
    names = sorted(lock) or sorted(_direct_dependencies())
    installed: dict[str, str | None] = {}
    for name in names:
        try:
            installed[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed[name] = None
    differences = {name: {"locked": lock[name], "installed": installed.get(name)} for name in lock
                   if installed.get(name) is not None and installed.get(name) != lock[name]}
    try:
        cbo_version = metadata.version("cbo")
    except metadata.PackageNotFoundError:
        cbo_version = None
    return {"cbo": cbo_version, "installed": installed, "lock": str(lock_path(root)) if lock else None,
            "differs_from_lock": differences}


def _direct_dependencies() -> list[str]:
    try:
        requirements = metadata.requires("cbo") or []
    except metadata.PackageNotFoundError:
        return []
    return [_normalized(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]) for r in requirements if "extra ==" not in r]


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        return (out.stderr or out.stdout).splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "not found"


def machine() -> dict[str, Any]:
    memory = None
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"host": platform.node(), "platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(),
            "memory_gib": memory, "python": platform.python_version(), "load_start": load()}


def load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system does not say)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def describe_catalog(catalog: Catalog) -> dict[str, Any]:
    """The catalog as results keep it: everything but credentials."""
    sources = {}
    for source in catalog.sources.values():
        body: dict[str, Any] = {"type": source.type}
        if source.type == "jdbc":
            body.update(dialect=source.dialect, schema=source.schema, location=_location(source))
        body["tables"] = {t.name: {k: v for k, v in {
            "path": str(t.path) if t.path else None, "spark_table": t.spark_table, "remote_name": t.remote_name,
            "parquet_copy": str(t.parquet_copy) if t.parquet_copy else None,
            "primary_key": list(t.primary_key) or None}.items() if v} for t in source.tables.values()}
        sources[source.name] = body
    spark = catalog.spark
    return {"file": str(catalog.path) if catalog.path else None, "sources": sources,
            "spark": {"master": spark.master, "remote": spark.remote and _redact_url(spark.remote),
                      "driver_memory": spark.driver_memory, "executor_memory": spark.executor_memory,
                      "conf": {k: v for k, v in spark.conf.items() if not SECRET.search(k)}}}


def _location(source: Any) -> str:
    if source.local_server is not None:
        return f"cbo's local {source.server_kind} ({source.local_server})"
    return _redact_url(source.url or "")


def _redact_url(url: str) -> str:
    """A URL without user information or password parameters."""
    url = re.sub(r"//[^/@]*@", "//", url)
    return re.sub(r"([?&;](password|user)=)[^&;]*", r"\1***", url, flags=re.I)


def statistics(catalog: Catalog) -> dict[str, Any]:
    """Per table: the fingerprint of the data its stored statistics describe, when they were
    collected, and a digest of the stored file (None: no statistics)."""
    from cbo.sources.statistics import store_for

    store = store_for(catalog)
    found: dict[str, Any] = {}
    for table in catalog.tables():
        name = table.qualified_name
        loaded = store.load(name)
        stats = loaded.stats
        if stats is None:
            found[name] = None
            continue
        try:
            digest = hashlib.sha256(store.path(name).read_bytes()).hexdigest()[:16]
        except OSError:
            digest = None
        found[name] = {"fingerprint": stats.fingerprint, "collected_at": stats.collected_at,
                       "rows": stats.row_count, "collector": stats.collector, "digest": digest}
    return found


def cbo_configuration(session: Session) -> dict[str, Any]:
    """A cbo session's optimizer settings (all of them) and its cost profile."""
    from cbo.cost.cluster import describe_profile

    settings = settings_record(session.planner.settings)
    profile = session.planner.profile()
    constants = dict(sorted(profile.constants.items()))
    digest = hashlib.sha256(json.dumps(constants, sort_keys=True).encode()).hexdigest()[:16]
    return {"settings": settings, "cost_profile": {"description": describe_profile(profile), "source": profile.source,
                                                   "digest": digest, "constants": constants}}


def manifest(experiment: dict[str, Any], catalog: Catalog, sessions: dict[str, Session]) -> dict[str, Any]:
    """A new result's manifest (``finished`` and the load at the end are added when it ends)."""
    return {"format": "cbo-workload-result/1", "started": now(), "finished": None, "complete": False,
            "experiment": experiment, "cbo": git_state(), "packages": packages(), "java": java_version(),
            "configurations": {label: cbo_configuration(s) for label, s in sessions.items()},
            "statistics": statistics(catalog), "catalog": describe_catalog(catalog), "machine": machine()}
