"""A workload: its queries, the dialect they are written in, and where its data comes from.

A workload is either a folder of ``.sql`` files (one query per file, named by the file's stem,
in natural order: ``q2`` before ``q10``) run over a catalog the user names, or a named workload
of the registry (``cbo.app.workload.registry``: TPC-H, TPC-DS, the STATS workloads, the
existential family), which prepares its own data and catalog. A folder that is a named
workload's own query folder (``cbo/workloads/tpch_sql``) is that workload.

The text is written in one dialect (``dialect``): cbo parses it in that dialect, and an engine
that speaks another gets it transpiled by sqlglot (``cbo.app.workload.engines``), except the
engines the workload declares its text runs on as written (``as_written``: TPC-H's queries are
written to run unchanged on Spark, DuckDB and PostgreSQL).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cbo.errors import CboError
from cbo.frontend.parse import DEFAULT_DIALECT

Progress = Callable[[str], None]


@dataclass(frozen=True)
class WorkloadQuery:
    name: str           # what results call it: the file's stem, "q01", "e03"
    sql: str
    index: int          # its position in the whole workload (the timing rules rotate by it)
    label: str = ""     # a longer description, when the name is an id (the existential cases)

    @property
    def digest(self) -> str:
        """Identifies the text: a result's query is re-run only if its text is the same."""
        return hashlib.sha256(self.sql.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class WorkloadOptions:
    """What a named workload is prepared with: scale factor and placement of generated data,
    and the size and seed of generated query sets."""

    sf: float = 0.1
    placement: str = "all-spark"
    count: int | None = None
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"sf": self.sf, "placement": self.placement, "count": self.count, "seed": self.seed}


@dataclass(frozen=True)
class Workload:
    name: str                        # the named workload, or the folder's name
    source: str                      # what `workload run` was given: a name or the folder's path
    queries: tuple[WorkloadQuery, ...]
    dialect: str = DEFAULT_DIALECT
    as_written: frozenset[str] = frozenset()   # engines that run the text unchanged
    catalog: Path | None = None      # the workload's own catalog (named workloads), of the placement asked for
    catalogs: dict[str, Path] = field(default_factory=dict)   # every placement prepared: placement -> catalog
    options: WorkloadOptions | None = None    # named workloads: how their data was prepared
    facts: dict[str, Any] = field(default_factory=dict)   # e.g. the STATS generator's seed

    def select(self, names: Sequence[str] | None) -> Workload:
        """The workload with only the queries named (``q3`` finds ``q03``); all when empty."""
        if not names:
            return self
        by_name = {_canonical(q.name): q for q in self.queries}
        chosen, unknown = [], []
        for name in names:
            found = by_name.get(_canonical(name.strip()))
            if found is None:
                unknown.append(name)
            elif found not in chosen:
                chosen.append(found)
        if unknown:
            known = ", ".join(q.name for q in self.queries[:8]) + (" ..." if len(self.queries) > 8 else "")
            raise CboError(f"workload {self.name}: no query named {', '.join(map(repr, unknown))} (it has {known})")
        return replace(self, queries=tuple(chosen))


def _canonical(name: str) -> str:
    """Names compare without case and without leading zeros in numbers: q3 is q03."""
    return re.sub(r"\d+", lambda m: str(int(m.group())), name.lower())


def _natural(path: Path) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.stem.lower()))


def read_folder(folder: Path) -> tuple[WorkloadQuery, ...]:
    """The ``.sql`` files of ``folder`` as queries, in natural order of their names; a file
    that holds no query (empty, or only comments) is an error naming it."""
    if not folder.is_dir():
        raise CboError(f"{folder}: not a folder of .sql files, nor a named workload (`cbo workload list` names them)")
    paths = sorted(folder.glob("*.sql"), key=_natural)
    if not paths:
        raise CboError(f"{folder}: no .sql files in it")
    queries = []
    for index, path in enumerate(paths):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise CboError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
        sql = text.strip().rstrip(";").strip()
        if not _has_statement(sql):
            raise CboError(f"{path}: holds no query")
        queries.append(WorkloadQuery(path.stem, sql, index))
    return tuple(queries)


def _has_statement(sql: str) -> bool:
    without_comments = re.sub(r"--[^\n]*|/\*.*?\*/", "", sql, flags=re.S)
    return bool(without_comments.strip())


def numbered(pairs: Sequence[tuple[str, str]], labels: Sequence[str] | None = None) -> tuple[WorkloadQuery, ...]:
    """(name, sql) pairs as queries, numbered in order."""
    return tuple(WorkloadQuery(name, sql, index, labels[index] if labels else "")
                 for index, (name, sql) in enumerate(pairs))
