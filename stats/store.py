"""The statistics store: one directory per catalog, one JSON file per table.

Writes are atomic (a temporary file in the same directory, flushed and renamed over the old
one), so a crash or a kill leaves either the old file or the new one, never half of one. A
table's row sample is a Parquet file named after its content's digest, written before the JSON
that names it; older samples of the table are removed only after the new JSON is in place. A file
that is corrupt, from another format version, or stale against the data's current fingerprint
is reported by name and treated as missing; reading never raises for them. A file is checked as
it is read (``stats.model.validate``: its shape and that every count and fraction is one), and a
row sample against the digest in its name, so a truncated or altered sample is known before an
estimate reads it. A temporary file that a killed writer left behind (its name holds the
writer's process id) is removed by the next writer (``clean``).
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
    problem: str | None = None   # why the stored statistics are not (all) used, naming the file
    # The statistics are usable but incomplete (their row sample is missing or damaged): the next
    # ``cbo analyze`` collects them again.
    damaged: bool = False


class StatsStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, table: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", table)
        return self.directory / f"{safe}.json"

    def clean(self) -> list[Path]:
        """Remove the temporary files of writers that are gone (killed mid-write): named with
        their process id, removed once no such process runs; without one (an older cbo's), once
        an hour old. Returns what it removed."""
        import time

        removed = []
        for path in self.directory.glob(".*.tmp"):
            match = re.search(r"\.pid(\d+)\.", path.name)
            try:
                if match is not None:
                    if _alive(int(match.group(1))):
                        continue
                elif time.time() - path.stat().st_mtime < 3600:
                    continue
                path.unlink()
                removed.append(path)
            except OSError:
                continue
        return removed

    def save(self, stats: TableStats) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(stats.table)
        sample_name = self._save_sample(stats, target) if stats.sample is not None else None
        body = stats.to_json()
        if sample_name is not None:
            body["sample_file"] = sample_name
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=f".{target.name}.pid{os.getpid()}.",
                                             suffix=".tmp")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(body, out, separators=(",", ":"))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        for old in self.directory.glob(f"{target.stem}.sample-*.parquet"):
            if old.name != sample_name:
                old.unlink(missing_ok=True)
        return target

    def _save_sample(self, stats: TableStats, target: Path) -> str:
        import hashlib

        import pyarrow.parquet as pq

        assert stats.sample is not None
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=f".{target.stem}.sample.pid{os.getpid()}.",
                                             suffix=".tmp")
        os.close(handle)
        try:
            pq.write_table(stats.sample.to_arrow(), temporary)
            digest = hashlib.sha256(Path(temporary).read_bytes()).hexdigest()[:12]
            name = f"{target.stem}.sample-{digest}.parquet"
            os.replace(temporary, self.directory / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return name

    def load(self, table: str, fingerprint: str | None = None) -> Loaded:
        path = self.path(table)
        if not path.exists():
            return Loaded(None)
        try:
            stats = TableStats.from_json(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            return Loaded(None, f"{path}: corrupt statistics file (invalid JSON at line {exc.lineno}); ignored")
        except UnicodeDecodeError:
            return Loaded(None, f"{path}: corrupt statistics file (not UTF-8 text); ignored")
        except (ValueError, KeyError, TypeError) as exc:
            return Loaded(None, f"{path}: unusable statistics file ({exc}); ignored")
        except OSError as exc:
            return Loaded(None, f"{path}: cannot read ({exc.strerror}); ignored")
        if fingerprint is not None and stats.fingerprint != fingerprint:
            return Loaded(None, f"{path}: stale statistics (the data changed since {stats.collected_at}); ignored")
        return self._with_sample(stats, path)

    def _with_sample(self, stats: TableStats, path: Path) -> Loaded:
        """Attach the row sample (read lazily); a missing sample file costs the sample, not the statistics."""
        if stats.sample_file is None:
            return Loaded(stats)
        sample_path = self.directory / stats.sample_file
        if not sample_path.exists():
            return Loaded(stats, f"{path}: its row sample {stats.sample_file} is missing; estimating without it",
                          damaged=True)
        problem = _sample_problem(sample_path)
        if problem is not None:
            return Loaded(stats, f"{sample_path}: {problem}; estimating without it", damaged=True)
        from dataclasses import replace

        from stats.model import column_kinds
        from stats.sample import RowSample

        sample = RowSample(None, column_kinds(stats.columns), stats.row_count, path=sample_path)
        return Loaded(replace(stats, sample=sample))

    def tables(self) -> list[str]:
        names = []
        for path in sorted(self.directory.glob("*.json")):
            loaded = self.load_path(path)
            if loaded.stats is not None:
                names.append(loaded.stats.table)
        return names

    def load_path(self, path: Path) -> Loaded:
        try:
            return self._with_sample(TableStats.from_json(json.loads(path.read_text(encoding="utf-8"))), path)
        except (ValueError, KeyError, TypeError, OSError) as exc:
            return Loaded(None, f"{path}: unusable statistics file ({exc}); ignored")


def _sample_problem(path: Path) -> str | None:
    """What is wrong with a row sample file, or None: its name carries the digest of its content
    (``sample-<digest>.parquet``), so a truncated or altered file is told by hashing it."""
    import hashlib

    match = re.search(r"\.sample-([0-9a-f]+)\.parquet$", path.name)
    if match is None:
        return "not a row sample file name (sample-<digest>.parquet)"
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"cannot read ({exc.strerror})"
    if not digest.startswith(match.group(1)):
        return "damaged row sample (its content no longer has the digest in its name: truncated or altered)"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
