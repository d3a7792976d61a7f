"""Layers point down: each package imports only from the packages listed for it, and no import
cycle joins two packages, or two modules of one.

The layers, bottom to top (a package may import those below it, never those above)::

    errors, paths, settings, limits             what everything shares
    ir                                          the plan IR and its types
    jdbc_url, catalog_types                     a catalog's values: sources, tables, keys
    sqlgen                                      plans as SQL (a dialect's traits, SqlDialect)
    stats                                       statistics' model and store (imports no cbo)
    connectors                                  one object per source type (cbo.connectors)
    estimate, normalize, frontend* ...          the optimizer (below: their own lists)
    cost, physical, memo, joinorder
    engines                                     Spark, DuckDB: sessions, reading a table
    sources                                     the catalog file, schemas, keys, statistics
    exec                                        running a physical plan on Spark
    planner, workloads, app, cbo                the user's entry points
    benchmarks                                  anything

Engines sit below sources: the catalog's schemas and statistics are read through them (a Spark
table's columns, a Spark collection), while no engine needs a catalog file. Progress reaches an
engine as a callback (``spark_session(step=...)``), never by importing the app.

Checked on the import statements of the source files (including imports inside functions and
under ``TYPE_CHECKING``), so a new upward import or a cycle fails here with the module and the
line. An import inside a function is no way around a cycle: it counts like any other. When two
modules need each other, what both need belongs in a third module below them (a value type, a
``Protocol`` naming what the lower one asks of the upper one), or the caller passes it in.

An import is read as Python runs it: ``from p import m`` imports the module ``p.m`` when there is
one (else the names of ``p``'s ``__init__``), and importing ``p.q.m`` from outside ``p`` first
runs the ``__init__`` of ``p`` and of ``p.q``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cbo", "stats", "benchmarks")

BOTTOM = {"cbo.errors"}
# unit (a package or a module directly under cbo/) -> the units it may import
ALLOWED: dict[str, set[str]] = {
    "cbo.errors": set(),
    "cbo.limits": BOTTOM,
    "cbo.paths": BOTTOM,
    "cbo.settings": BOTTOM,
    "cbo.ir": BOTTOM,
    "cbo.jdbc_url": BOTTOM,
    "cbo.catalog_types": BOTTOM | {"cbo.ir", "cbo.jdbc_url"},
    "cbo.sqlgen": {"cbo.ir", "cbo.limits"},
    "cbo.svg": set(),
    "cbo.answers": set(),
    "stats": set(),
    "cbo.connectors": BOTTOM | {"cbo.paths", "cbo.ir", "cbo.jdbc_url", "cbo.catalog_types", "cbo.sqlgen", "stats"},
    # the optimizer's packages, as they import today (other work reshapes them)
    "cbo.estimate": BOTTOM | {"cbo.ir", "cbo.sqlgen", "stats"},
    "cbo.normalize": BOTTOM | {"cbo.ir"},
    "cbo.frontend": BOTTOM | {"cbo.limits", "cbo.ir", "cbo.sources"},
    "cbo.cost": BOTTOM | {"cbo.paths", "cbo.ir", "cbo.connectors", "cbo.physical"},
    "cbo.physical": {"cbo.ir"},
    "cbo.joinorder": {"cbo.ir"},
    "cbo.memo": BOTTOM | {"cbo.ir", "cbo.settings", "cbo.svg", "cbo.connectors", "cbo.normalize", "cbo.estimate",
                          "cbo.cost", "cbo.physical", "cbo.joinorder"},
    "cbo.engines": BOTTOM | {"cbo.limits", "cbo.paths", "cbo.catalog_types", "cbo.connectors", "cbo.cost"},
    "cbo.sources": BOTTOM | {"cbo.paths", "cbo.ir", "cbo.catalog_types", "cbo.connectors", "cbo.engines", "stats"},
    "cbo.exec": BOTTOM | {"cbo.settings", "cbo.ir", "cbo.catalog_types", "cbo.connectors", "cbo.sqlgen", "cbo.physical",
                          "cbo.engines"},
    # P-error: a plan costed again with true rows (the cost model over the physical plan)
    "cbo.perror": BOTTOM | {"cbo.ir", "cbo.cost", "cbo.physical"},
    "cbo.planner": BOTTOM | {"cbo.limits", "cbo.ir", "cbo.settings", "cbo.catalog_types", "cbo.connectors", "cbo.sources",
                             "cbo.frontend", "cbo.normalize", "cbo.estimate", "cbo.cost", "cbo.physical",
                             "cbo.memo", "cbo.engines", "cbo.perror"},
    # the shipped cardinality plug-ins: they answer the estimator's protocol from a source or samples
    "cbo.plugins": BOTTOM | {"cbo.ir", "cbo.sqlgen", "cbo.estimate", "cbo.catalog_types", "cbo.connectors",
                             "cbo.sources", "stats"},
    "cbo.workloads": BOTTOM | {"cbo.paths", "cbo.catalog_types", "cbo.connectors"},
    "cbo.app": BOTTOM | {"cbo.limits", "cbo.paths", "cbo.settings", "cbo.ir", "cbo.answers", "cbo.svg", "cbo.sqlgen",
                         "cbo.catalog_types", "cbo.connectors", "cbo.sources", "cbo.engines", "cbo.frontend",
                         "cbo.estimate", "cbo.cost", "cbo.physical", "cbo.memo", "cbo.exec", "cbo.planner",
                         "cbo.workloads", "stats"},
    "cbo": BOTTOM | {"cbo.app", "cbo.sources"},
    "cbo.__main__": {"cbo.app"},
    "benchmarks": {"*"},
}

# Finer rules inside a layer: module (path under cbo/) -> modules it must not import.
FORBIDDEN = {
    "svg.py": ["cbo.ir", "cbo.memo", "cbo.app.explain", "cbo.app.session"],
    # scalar expressions sit below plans: a subquery, which holds a plan, lives with the plans
    "ir/expressions.py": ["cbo.ir.operators", "cbo.ir.dispatch", "cbo.ir.shape"],
    "app/demo.py": ["benchmarks"],
    "app/workload": ["benchmarks"],   # the benchmarks use the runner, never the reverse
    "app/session.py": ["cbo.memo.rules"],   # Spark's hint names belong to execution, not to the rules
}

def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[0] if parts[0] != "cbo" or len(parts) == 1 else f"cbo.{parts[1]}"


def _statements(path: Path) -> list[ast.Import | ast.ImportFrom]:
    return [node for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and node.module and node.level == 0]


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every name an import statement of ``path`` mentions (``from a import b``: ``a`` and ``a.b``)."""
    found = []
    for node in _statements(path):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        else:
            found.append((node.lineno, str(node.module)))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _resolve(name: str) -> str | None:
    """The module of ours an imported name is (or lies in), None for another library's."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in MODULES:
            return ".".join(parts)
        parts.pop()
    return None


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of ours that running the import ``node`` in ``module`` needs initialised: each
    module it names (``from p import m``: ``p.m`` if that is a module, else ``p``), and the
    packages above that one, whose ``__init__`` runs first unless ``module`` lies inside them."""
    if isinstance(node, ast.Import):
        named = {_resolve(alias.name) for alias in node.names}
    else:
        named = {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES
                 else _resolve(str(node.module)) for alias in node.names}
    found = set()
    for target in named - {None}:
        assert target is not None
        parts = target.split(".")
        found |= {".".join(parts[:n]) for n in range(1, len(parts))
                  if ".".join(parts[:n]) in MODULES and not (module + ".").startswith(".".join(parts[:n]) + ".")}
        found.add(target)
    return found - {module}


@cache
def _edges() -> dict[str, dict[str, list[str]]]:
    """module -> imported module of ours -> where (file:line)."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, path in MODULES.items():
        for node in _statements(path):
            for target in _targets(module, node):
                edges[module][target].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_is_listed():
    units = {unit(m) for m in MODULES}
    assert units <= set(ALLOWED), f"list these in ALLOWED (what each may import): {sorted(units - set(ALLOWED))}"


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_a_package_imports_only_what_it_is_allowed(name):
    allowed = ALLOWED[name]
    wrong = []
    for module, targets in sorted(_edges().items()):
        if unit(module) != name or "*" in allowed:
            continue
        for target, where in sorted(targets.items()):
            if unit(target) != name and unit(target) not in allowed:
                wrong += [f"{w}: {module} imports {target}" for w in where]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_finer_rules_within_a_layer(module):
    root = ROOT / "cbo" / module
    paths = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    wrong = [f"{path.relative_to(ROOT)}:{line}: imports {name}" for path in paths for line, name in _imports(path)
             if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[module])]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    edges = _edges()
    by_unit: dict[str, set[str]] = defaultdict(set)
    by_module: dict[str, set[str]] = defaultdict(set)
    for module, targets in edges.items():
        for target in targets:
            if unit(module) != unit(target):
                by_unit[unit(module)].add(unit(target))
            else:
                by_module[module].add(target)
    cycles = [_cycle_imports(cycle, unit) for cycle in _cycles(by_unit)]
    cycles += [_cycle_imports(cycle, lambda module: module) for cycle in _cycles(by_module)]
    assert not cycles, "import cycles (the imports among each one's members):\n" + "\n\n".join(cycles)


def _cycle_imports(cycle: set[str], member: Callable[[str], str]) -> str:
    """The imports between the members of ``cycle`` (units or modules: ``member`` says which a
    module is), one line per pair of members, with the first place that imports."""
    first: dict[tuple[str, str], str] = {}
    for module, targets in sorted(_edges().items()):
        for target, places in sorted(targets.items()):
            pair = (member(module), member(target))
            if pair[0] in cycle and pair[1] in cycle and pair[0] != pair[1]:
                first.setdefault(pair, f"{places[0]}: {module} imports {target}")
    return "\n".join(f"  {pair[0]} -> {pair[1]} ({where})" for pair, where in sorted(first.items()))


def test_the_checks_see_a_cycle_and_an_upward_import():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert unit("cbo.connectors.postgres.client") == "cbo.connectors" and unit("stats.model") == "stats"
    assert "cbo.engines" not in ALLOWED["cbo.connectors"] and "cbo.app" not in ALLOWED["cbo.engines"]


def test_an_import_is_read_as_python_runs_it():
    def targets(module, statement):
        return _targets(module, ast.parse(statement).body[0])

    # a submodule from inside its package: the package's __init__ is already running
    assert targets("cbo.estimate.filters", "from cbo.estimate import defaults") == {"cbo.estimate.defaults"}
    # a name the package's __init__ defines: that __init__ is needed, even from inside
    assert targets("cbo.estimate.filters", "from cbo.estimate import Estimator") == {"cbo.estimate"}
    # from outside: the packages' __init__ run first
    assert targets("cbo.planner", "from cbo.estimate.filters import estimate_filter") == \
        {"cbo.estimate", "cbo.estimate.filters"}
    assert targets("cbo.app.cli", "import cbo.sources.catalog") == {"cbo.sources", "cbo.sources.catalog"}
    assert targets("cbo.planner", "import numpy") == set()


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
