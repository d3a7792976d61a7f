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


def read_cases(path: Path) -> list[Case]:
    cases, lines = [], path.read_text().splitlines()
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
        directive, settings = words[0], parse_assignments(words[1:])
        if directive != "plan":
            raise ValueError(f"{path}:{start}: unknown directive {directive!r} (expected plan)")
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
        cases.append(Case(path, start, comments, directive, settings, "\n".join(sql), "\n".join(expected)))
    return cases


def write_cases(path: Path, cases: list[Case], outputs: dict[int, str]) -> None:
    blocks = []
    for case in cases:
        head = [*case.comments, " ".join(["plan", *(f"{k}={v}" for k, v in case.settings.items())])]
        blocks.append("\n".join(head + [case.sql, "----", outputs.get(case.line, case.expected)]))
    path.write_text("\n\n".join(blocks) + "\n")
