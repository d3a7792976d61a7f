"""The type gates stay where they are: ruff and mypy over all of cbo/ and stats/, strict equality
on (so a kind compared with a name outside its type fails), few ``# type: ignore`` comments,
and the name tables outside cbo.ir.kinds naming only names its types allow.

ruff and mypy themselves run in ``./run test`` (CI); these checks are cheap and say, with the
file and line, what slipped when a change narrows the gate or spreads ignores again.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from cbo.connectors import capabilities
from cbo.ir import kinds
from cbo.ir.moments import MOMENTS
from cbo.physical.properties import DISTRIBUTIONS

ROOT = Path(__file__).resolve().parents[2]

# Each of the few left says why on its line; a new one needs a reason better than a cast.
MAX_TYPE_IGNORES = 20


def _gated() -> list[str]:
    for line in (ROOT / "run").read_text().splitlines():
        found = re.fullmatch(r'GATED="([^"]*)"', line.strip())
        if found:
            return shlex.split(found.group(1))
    raise AssertionError("run defines no GATED list")


def test_the_gate_covers_all_of_cbo_and_stats():
    gated = {p.rstrip("/") for p in _gated()}
    assert {"cbo", "stats"} <= gated, f"./run gates {sorted(gated)}; ruff and mypy must cover cbo/ and stats/ whole"


def test_mypy_checks_equality_strictly():
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy.get("strict_equality") is True
    assert mypy.get("warn_unused_ignores") is True


def test_few_type_ignores_in_cbo():
    found = [f"{path.relative_to(ROOT)}:{number}"
             for path in sorted((ROOT / "cbo").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if "# type: ignore" in line]
    assert len(found) < MAX_TYPE_IGNORES, f"{len(found)} type: ignore comments in cbo/:\n" + "\n".join(found)


def test_capability_tables_name_only_known_kinds_and_functions():
    assert set(capabilities.JOIN_KINDS) <= set(kinds.JOIN_KINDS)
    assert capabilities.FUNCTIONS <= set(kinds.FUNCTION_NAMES), capabilities.FUNCTIONS - set(kinds.FUNCTION_NAMES)
    assert capabilities.FORMS <= set(kinds.FORM_NAMES), capabilities.FORMS - set(kinds.FORM_NAMES)
    assert capabilities.AGGREGATES <= set(kinds.AGGREGATE_NAMES), capabilities.AGGREGATES - set(kinds.AGGREGATE_NAMES)
    assert set(MOMENTS) <= set(kinds.AGGREGATE_NAMES)


def test_kind_tuples_list_each_value_once():
    for values in (kinds.JOIN_KINDS, kinds.SET_OP_KINDS, kinds.SUBQUERY_KINDS, kinds.FUNCTION_NAMES,
                   kinds.FORM_NAMES, kinds.AGGREGATE_NAMES, DISTRIBUTIONS):
        assert values and len(set(values)) == len(values), values
        assert all(isinstance(v, str) for v in values)
