"""Rule tests as data (CockroachDB's ``opt/xform/testdata/rules``): where a rule fires and where
it does not, one readable file per rule family under ``tests/testdata/rules``.

A case is a directive line, the SQL, ``----``, and the expected output::

    # Q17's shape: part joined on its key below the aggregation of lineitem.
    opt expect=PushTableIntoAggregate rows:part=200
    select ...
    ----
    - Project[...]  (est. rows 10)
        - ...

Directives:

* ``opt``: the chosen plan (EXPLAIN's tree with strategies and estimated rows);
* ``memo``: the memo (groups, expressions, costs; ``*`` marks the winners).

Options on the directive line:

* ``expect=Rule[,Rule]``: each rule fired (a transformation rule added an expression or merged
  groups; an implementation rule gave an alternative). ``expect-not=Rule[,Rule]``: none did.
* ``stats=NAME``: the statistics, by name, from ``tests/testdata/stats`` (default ``tpch-sf1``);
  ``stats=none`` plans without any (every estimate a default).
* ``rows:TABLE=N``: inline statistics: the table's statistics scaled to ``N`` rows (distinct
  counts capped at ``N``, histogram rows scaled, value frequencies kept).
* ``name=value``: an optimizer setting (``cbo.settings``), as ``--set`` takes it.

The schema is TPC-H's (``lake.*`` tables of the SF 0.01 Parquet catalog). ``CBO_REWRITE=1``
rewrites the expected outputs (the expect options are still checked); review the diff.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from cbo.settings import OptimizerSettings, parse_assignments
from tests.plan_files import read_blocks

RULES = Path(__file__).parent / "testdata" / "rules"
STATS = Path(__file__).parent / "testdata" / "stats"
DIRECTIVES = ("opt", "memo")


@dataclass
class RuleCase:
    path: Path
    line: int
    comments: list[str]
    directive: str
    options: list[str]
    sql: str
    expected: str
    expect: list[str] = field(default_factory=list)
    expect_not: list[str] = field(default_factory=list)
    stats: str = "tpch-sf1"
    rows: dict[str, float] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.line}"

    def optimizer_settings(self) -> OptimizerSettings:
        return OptimizerSettings().with_values(self.settings)


def _parse_options(case: RuleCase) -> None:
    for item in case.options:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"{case.name}: an option is written name=value, not {item!r}")
        if name == "expect":
            case.expect += [r for r in value.split(",") if r]
        elif name == "expect-not":
            case.expect_not += [r for r in value.split(",") if r]
        elif name == "stats":
            case.stats = value
        elif name.startswith("rows:"):
            case.rows[name[len("rows:"):]] = float(value)
        else:
            case.settings.update(parse_assignments([item]))


def read_rule_cases(path: Path) -> list[RuleCase]:
    cases = []
    for b in read_blocks(path, DIRECTIVES):
        case = RuleCase(path, b.line, b.comments, b.words[0], b.words[1:], b.sql, b.expected)
        _parse_options(case)
        cases.append(case)
    return cases


def write_rule_cases(path: Path, cases: list[RuleCase], outputs: dict[int, str]) -> None:
    blocks = []
    for case in cases:
        head = [*case.comments, " ".join([case.directive, *case.options])]
        blocks.append("\n".join(head + [case.sql, "----", outputs.get(case.line, case.expected)]))
    path.write_text("\n\n".join(blocks) + "\n")


def scaled(stats, rows: float):  # type: ignore[no-untyped-def]
    """A table's statistics as if it had ``rows`` rows, with the same value distributions."""
    factor = rows / stats.row_count if stats.row_count else 0.0
    columns = {}
    for name, column in stats.columns.items():
        buckets = tuple(dataclasses.replace(b, rows=b.rows * factor, distinct=min(b.distinct, max(b.rows * factor, 1.0)))
                        for b in column.histogram)
        # Scaled counts are made up, never counted: no uniqueness may be read from them.
        columns[name] = dataclasses.replace(column, distinct=min(column.distinct, rows), histogram=buckets,
                                            distinct_exact=False)
    groups = {k: min(v, rows) for k, v in stats.column_groups.items()}
    return dataclasses.replace(stats, row_count=rows, size_bytes=(stats.size_bytes or 0.0) * factor or None,
                               columns=columns, column_groups=groups, sample=None, sample_file=None)
