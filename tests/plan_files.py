"""Plan tests as data files (like CockroachDB's testdata): SQL in, the chosen plan out.

A file under ``tests/testdata/plans`` holds cases separated by blank lines::

    # a comment
    plan max_reordered_joins=4
    select ... (one or more lines)
    ----
    - Project[...]  (est. rows 10)
        - ...

The directive ``plan`` may carry optimizer settings (``name=value``). The expected text is the
EXPLAIN tree of the chosen plan with its join strategies and estimated rows. After a change
that alters plans on purpose, regenerate with ``CBO_REWRITE=1 ./run test tests/quick/test_plan_files.py``
and review the diff.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cbo.settings import OptimizerSettings, parse_assignments

PLANS = Path(__file__).parent / "testdata" / "plans"
TPCH_STATS = Path(__file__).parent / "testdata" / "stats" / "tpch-sf1"
TPCDS_STATS = Path(__file__).parent / "testdata" / "stats" / "tpcds-sf1"
TPCDS_PLANS = PLANS / "tpcds.test"   # planned over TPC-DS's catalog and statistics, read as DuckDB's SQL


@dataclass
class Case:
    path: Path
    line: int
    comments: list[str]
    directive: str
    settings: dict[str, str]
    sql: str
    expected: str

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"

    def optimizer_settings(self) -> OptimizerSettings:
        return OptimizerSettings().with_values(self.settings)


@dataclass
class Block:
    """One case of a data file: its comments, the directive line's words, the SQL, the output."""

    line: int            # of the directive
    comments: list[str]
    words: list[str]
    sql: str
    expected: str


def read_blocks(path: Path, directives: tuple[str, ...]) -> list[Block]:
    """The cases of a data file (plan files and rule files share the format): comments, a
    directive line, SQL, ``----``, the expected output up to a blank line."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        comments = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("#")):
            if lines[i].startswith("#"):
                comments.append(lines[i])
            i += 1
        if i >= len(lines):
            break
        start = i + 1
        words = lines[i].split()
        if words[0] not in directives:
            raise ValueError(f"{path}:{start}: unknown directive {words[0]!r} (expected {' or '.join(directives)})")
        i += 1
        sql = []
        while i < len(lines) and lines[i] != "----":
            sql.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError(f"{path}:{start}: case without a ---- line")
        i += 1
        expected = []
        while i < len(lines) and lines[i].strip():
            expected.append(lines[i])
            i += 1
        blocks.append(Block(start, comments, words, "\n".join(sql), "\n".join(expected)))
    return blocks


def read_cases(path: Path) -> list[Case]:
    return [Case(path, b.line, b.comments, b.words[0], parse_assignments(b.words[1:]), b.sql, b.expected)
            for b in read_blocks(path, ("plan",))]


def write_cases(path: Path, cases: list[Case], outputs: dict[int, str]) -> None:
    blocks = []
    for case in cases:
        head = [*case.comments, " ".join(["plan", *(f"{k}={v}" for k, v in case.settings.items())])]
        blocks.append("\n".join(head + [case.sql, "----", outputs.get(case.line, case.expected)]))
    path.write_text("\n\n".join(blocks) + "\n")
