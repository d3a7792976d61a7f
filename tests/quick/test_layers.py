"""Layers point down: a module imports only from its own layer or those below it.

    ir <- estimate <- cost <- joinorder <- memo <- planner <- session/cli
    ir <- frontend, normalize (decorrelation is an IR rewrite) <- planner
    ir <- sqlgen <- exec

Checked on the import statements of the source files (including imports inside functions), so
a new upward import fails here with the module and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# module (file or package under cbo/) -> packages it must not import
FORBIDDEN = {
    "ir": ["cbo.frontend", "cbo.normalize", "cbo.estimate", "cbo.cost", "cbo.memo", "cbo.joinorder", "cbo.planner",
           "cbo.app", "cbo.sqlgen", "cbo.exec", "cbo.engines"],
    # scalar expressions sit below plans: a subquery, which holds a plan, lives with the plans
    "ir/expressions.py": ["cbo.ir.operators", "cbo.ir.dispatch", "cbo.ir.shape"],
    "normalize": ["cbo.frontend", "cbo.memo", "cbo.planner", "cbo.app"],
    "estimate": ["cbo.frontend", "cbo.memo", "cbo.cost", "cbo.planner", "cbo.app"],
    "cost": ["cbo.frontend", "cbo.memo", "cbo.planner", "cbo.app", "cbo.exec"],
    "memo": ["cbo.frontend", "cbo.planner", "cbo.app", "cbo.exec", "cbo.engines"],
    "joinorder": ["cbo.frontend", "cbo.memo", "cbo.planner", "cbo.app", "cbo.exec", "cbo.engines"],
    "sqlgen.py": ["cbo.frontend", "cbo.memo", "cbo.planner", "cbo.app"],
    "svg.py": ["cbo.ir", "cbo.memo", "cbo.app.explain", "cbo.app.session"],
    "physical": ["cbo.frontend", "cbo.estimate", "cbo.cost", "cbo.memo", "cbo.planner", "cbo.app", "cbo.exec",
                 "cbo.engines"],
    "app/demo.py": ["benchmarks"],
    "sources": ["cbo.app", "cbo.memo", "cbo.planner", "cbo.frontend", "cbo.normalize"],
    "app/session.py": ["cbo.memo.rules"],   # Spark's hint names belong to execution, not to the rules
}


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(module):
    target = ROOT / "cbo" / module
    files = [target] if target.suffix == ".py" else sorted(target.rglob("*.py"))
    wrong = []
    for path in files:
        for line, name in _imports(path):
            if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[module]):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    assert not wrong, "\n".join(wrong)


def test_a_planned_query_gets_its_own_executor_settings():
    # The session's Spark executor is shared; each plan gets a copy with its own join hints and
    # partition count, so planning or running one query never changes another's.
    from cbo.exec.spark_exec import SparkExecutor
    from cbo.ir import types as T
    from cbo.ir.expressions import Column, ColumnRef, compare
    from cbo.ir.operators import Join, Scan
    from cbo.physical.algorithm import Algorithm
    from cbo.physical.plan import PhysicalPlan

    shared = SparkExecutor.__new__(SparkExecutor)   # no Spark needed for the settings
    shared.operators, shared.shuffle_partitions, shared.views = {}, None, object()
    a, b = Column(1, "a", T.BIGINT, True), Column(2, "b", T.BIGINT, True)
    join = Join("inner", Scan("l", (a,), ("a",)), Scan("r", (b,), ("b",)), compare("eq", ColumnRef(a), ColumnRef(b)))
    scans = tuple(PhysicalPlan(Algorithm.SCAN, side) for side in join.children)
    first = shared.for_plan(PhysicalPlan(Algorithm.SORT_MERGE_JOIN, join, scans), 8)
    second = shared.for_plan(PhysicalPlan(Algorithm.BROADCAST_HASH_JOIN, join, scans), None)
    assert first.operators[id(join)].algorithm.spark_hint == "merge" and first.shuffle_partitions == 8
    assert second.operators[id(join)].algorithm.spark_hint == "broadcast" and second.shuffle_partitions is None
    assert shared.operators == {} and shared.shuffle_partitions is None
    assert first.views is shared.views   # the temporary views are made once per session
