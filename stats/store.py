"""The statistics store: one directory per catalog, one JSON file per table.

Writes are atomic (a temporary file in the same directory, flushed and renamed over the old
one), so a crash or a kill leaves either the old file or the new one, never half of one. A file
that is corrupt, from another format version, or stale against the data's current fingerprint
is reported by name and treated as missing; reading never raises for them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stats.model import TableStats


@dataclass(frozen=True)
class Loaded:
    stats: TableStats | None
    problem: str | None = None   # why the stored statistics are not used, naming the file


class StatsStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, table: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", table)
        return self.directory / f"{safe}.json"

    def save(self, stats: TableStats) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(stats.table)
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(stats.to_json(), out, separators=(",", ":"))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target

    def load(self, table: str, fingerprint: str | None = None) -> Loaded:
        path = self.path(table)
        if not path.exists():
            return Loaded(None)
        try:
            stats = TableStats.from_json(json.loads(path.read_text()))
        except json.JSONDecodeError as exc:
            return Loaded(None, f"{path}: corrupt statistics file (invalid JSON at line {exc.lineno}); ignored")
        except (ValueError, KeyError, TypeError) as exc:
            return Loaded(None, f"{path}: unusable statistics file ({exc}); ignored")
        except OSError as exc:
            return Loaded(None, f"{path}: cannot read ({exc.strerror}); ignored")
        if fingerprint is not None and stats.fingerprint != fingerprint:
            return Loaded(None, f"{path}: stale statistics (the data changed since {stats.collected_at}); ignored")
        return Loaded(stats)

    def tables(self) -> list[str]:
        names = []
        for path in sorted(self.directory.glob("*.json")):
            loaded = self.load_path(path)
            if loaded.stats is not None:
                names.append(loaded.stats.table)
        return names

    def load_path(self, path: Path) -> Loaded:
        try:
            return Loaded(TableStats.from_json(json.loads(path.read_text())))
        except (ValueError, KeyError, TypeError, OSError) as exc:
            return Loaded(None, f"{path}: unusable statistics file ({exc}); ignored")
