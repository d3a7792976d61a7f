"""A result folder: the manifest and one JSON line per measured query, written as they arrive.

    OUT/manifest.json    what was run, on what, how (``cbo.app.workload.manifest``); ``complete``
                         is true once every query is measured
    OUT/results.jsonl    one line per query: its record (``cbo.app.workload.timing``), appended
                         and flushed to disk as soon as the query is measured

An interrupted run keeps every query it finished; ``--resume`` continues it, running only the
queries missing from ``results.jsonl``, after checking that the experiment is the same one (the
same workload, query texts, configurations, timing rules and catalog); a line cut short by the
interruption is dropped. A record is never rewritten.

``load`` also reads the JSON reports of ``benchmarks.tpch.run`` (a file with ``queries``), whose
records have the same form, so ``compare`` and ``rerun``'s ratios work on them too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbo.errors import CboError

MANIFEST = "manifest.json"
RECORDS = "results.jsonl"
# What must be equal for a run to continue another: the experiment, not where or when it ran.
SAME_EXPERIMENT = ("workload", "options", "dialect", "queries", "configs", "timing", "reference", "catalog")


@dataclass
class Result:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]

    @property
    def experiment(self) -> dict[str, Any]:
        return self.manifest.get("experiment") or {}

    @property
    def configs(self) -> list[str]:
        found = self.experiment.get("configs")
        if found:
            return [c["label"] if isinstance(c, dict) else c for c in found]
        return list(self.manifest.get("configs") or [])

    def record(self, query: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r["query"] == query), None)


def write_json(path: Path, body: Any) -> None:
    """Atomically: a reader sees the old file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(body, indent=2, default=str) + "\n")
    os.replace(temporary, path)


def read_records(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """The records of a ``results.jsonl``; a last line cut short by an interruption is dropped
    (and, with ``repair``, cut from the file, so that the next record starts a line)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records, good = [], 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break
        good += len(line)
    if repair and good < len(data):
        with path.open("r+b") as handle:
            handle.truncate(good)
    return records


class ResultFolder:
    def __init__(self, path: Path):
        self.path = path
        self.manifest_path = path / MANIFEST
        self.records_path = path / RECORDS

    def start(self, manifest: dict[str, Any], resume: bool) -> list[dict[str, Any]]:
        """Write the manifest of a new run, or check a run to continue (and note in ``manifest``
        when it started and when it was resumed); the records kept."""
        if self.manifest_path.exists():
            earlier = load(self.path)
            done = len(earlier.records)
            if not resume:
                state = "complete" if earlier.manifest.get("complete") else f"incomplete: {done} queries measured"
                raise CboError(f"{self.path} already holds a run ({state}): add --resume to continue it, or "
                               "choose another --out")
            differ = [k for k in SAME_EXPERIMENT if earlier.experiment.get(k) != manifest["experiment"].get(k)]
            if differ:
                raise CboError(f"{self.path} holds another experiment (its {', '.join(differ)} differ): cannot "
                               "resume it; choose another --out")
            kept = read_records(self.records_path, repair=True)
            # (in place: the caller keeps updating this manifest, and rewrites it when done)
            manifest.update(started=earlier.manifest.get("started"),
                            resumed=[*earlier.manifest.get("resumed", []), manifest["started"]],
                            machine_first=earlier.manifest.get("machine_first") or earlier.manifest.get("machine"))
            write_json(self.manifest_path, manifest)
            return kept
        if self.path.exists() and any(self.path.iterdir()):
            raise CboError(f"{self.path} exists and is not a result folder: choose another --out")
        self.path.mkdir(parents=True, exist_ok=True)
        write_json(self.manifest_path, manifest)
        return []

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=str, separators=(",", ":")) + "\n"
        with self.records_path.open("a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def update(self, manifest: dict[str, Any]) -> None:
        write_json(self.manifest_path, manifest)


def load(path: Path) -> Result:
    """A result folder, or a ``benchmarks.tpch.run`` JSON report; a one-line error otherwise."""
    path = Path(path)
    if path.is_dir():
        manifest_path = path / MANIFEST
        if not manifest_path.exists():
            raise CboError(f"{path}: not a result folder (no {MANIFEST})")
        try:
            manifest = json.loads(manifest_path.read_text())
        except json.JSONDecodeError as exc:
            raise CboError(f"{manifest_path}: not JSON (line {exc.lineno}: {exc.msg})") from None
        return Result(path, manifest, read_records(path / RECORDS))
    if not path.exists():
        raise CboError(f"{path}: no such result (a folder `cbo workload run` wrote, or a benchmark's JSON)")
    try:
        body = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CboError(f"{path}: not a result folder nor a JSON report ({exc})") from None
    if not isinstance(body, dict) or not isinstance(body.get("queries"), list):
        raise CboError(f"{path}: a JSON file without query records (not a run's report)")
    manifest = {k: v for k, v in body.items() if k != "queries"}
    return Result(path, manifest, body["queries"])
