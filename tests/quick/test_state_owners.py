"""State has an owner: no planning state at module scope, and what an estimator, an estimation
or a search keeps lives exactly as long as it does.

* No module under ``cbo/`` changes a dictionary, list or set it holds at module scope (a cache
  there outlives every estimator and search, and must be capped and checked for reused ids by
  hand), apart from the few process-wide registries listed below with their reason.
* Two estimators over the same statistics share nothing they derive: each converts the
  statistics and indexes the samples for itself.
* What an estimation context or a search derived is dropped with it: nothing else holds the
  estimates it made.
"""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

from cbo.estimate import Estimator
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, Join, walk
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num
from tests.quick.test_join_sets import _skewed_users

ROOT = Path(__file__).resolve().parents[2]

# Module-level containers that are not planning state, and why they may change.
REGISTRIES = {
    ("cbo/memo/rules/base.py", "_CONNECTOR_RULES"): "the rules each connector module registers at import",
    ("cbo/connectors/mariadb/server.py", "_CHILDREN"): "the server processes this process started, stopped at exit",
}

_CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "WeakKeyDictionary",
               "WeakValueDictionary", "WeakSet", "Counter"}
_MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
             "discard", "appendleft", "sort", "reverse"}


def _is_container(node: ast.expr) -> bool:
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        return name in _CONTAINERS
    return False


def _module_containers(tree: ast.Module) -> set[str]:
    found = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and _is_container(statement.value):
            found |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None and _is_container(statement.value) \
                and isinstance(statement.target, ast.Name):
            found.add(statement.target.id)
    return found


def _named(node: ast.expr) -> str | None:
    """The module-level name ``node`` reads (``_X`` or ``module._X``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _changed(tree: ast.Module) -> set[str]:
    """Names whose containers some function changes, or which a function rebinds (``global``)."""
    found: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                found |= set(node.names)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Subscript) and (name := _named(target.value)) is not None:
                        found.add(name)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in _MUTATORS and (name := _named(node.func.value)) is not None:
                found.add(name)
    return found


def test_no_module_keeps_state_that_changes():
    trees = {path: ast.parse(path.read_text(), str(path)) for path in sorted((ROOT / "cbo").rglob("*.py"))}
    changed = set().union(*[_changed(tree) for tree in trees.values()])
    wrong = []
    for path, tree in trees.items():
        module = str(path.relative_to(ROOT))
        for name in sorted(_module_containers(tree) & changed):
            if (module, name) not in REGISTRIES:
                wrong.append(f"{module}: {name} is changed after import (state without an owner?)")
        for statement in tree.body:
            if isinstance(statement, ast.Global):
                wrong.append(f"{module}:{statement.lineno}: global")
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_a_module_level_cache():
    tree = ast.parse("_SEEN = {}\n\ndef f(x):\n    _SEEN[id(x)] = x\n\n_FIXED = {'a': 1}\n\n"
                     "def g(k):\n    return _FIXED.get(k)\n")
    assert _module_containers(tree) & _changed(tree) == {"_SEEN"}


def _stats(seed: int = 7):  # type: ignore[no-untyped-def]
    data = _skewed_users(seed)
    return {f"s.{t}": table_stats(f"s.{t}", cols, sample_size=2_000) for t, cols in data.items()}


def _plans():  # type: ignore[no-untyped-def]
    """Joins of filtered and unfiltered leaves, some foreign keys meeting at users.Id."""
    data = _skewed_users(7)
    factory = ColumnFactory()
    s = {t: make_scan(factory, f"s.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    users, posts, badges = s["users"], s["posts"], s["badges"]
    heavy = Filter(users, compare("gt", col(users, "Reputation"), num(300)))
    scored = Filter(posts, compare("gte", col(posts, "Score"), num(12)))
    owners = compare("eq", col(posts, "OwnerUserId"), col(users, "Id"))
    holders = compare("eq", col(badges, "UserId"), col(users, "Id"))
    return [Join("inner", Join("inner", scored, heavy, owners), badges, holders),
            Join("inner", posts, badges, compare("eq", col(posts, "OwnerUserId"), col(badges, "UserId")))]


def _summary(found) -> tuple:  # type: ignore[no-untyped-def]
    return found.rows, tuple(sorted(found.notes))


def test_two_estimators_over_the_same_statistics_share_nothing_they_derive():
    stats = _stats()
    first, second = Estimator(stats), Estimator(stats)
    for plan in _plans():
        assert _summary(first.estimate(plan)) == _summary(second.estimate(plan))
    assert first._base and first._samples
    assert first._base.keys() == second._base.keys() and first._samples.keys() == second._samples.keys()
    for key, column in first._base.items():
        other = second._base[key]
        assert column is not other and column.derived is not other.derived
    for table, sample in first._samples.items():
        other = second._samples[table]
        assert sample is not other and sample.rows is other.rows   # (the statistics' own sample, read)
        kept, other_kept = sample._kept, other._kept
        assert kept.keys() == other_kept.keys()
        assert all(kept[k] is not other_kept[k] for k in kept if not isinstance(kept[k], (int, float, type(None))))


def test_what_an_estimation_derived_goes_with_it():
    estimator = Estimator(_stats())
    context = estimator.context()
    plan = _plans()[0]
    found = context.estimate(plan)
    estimates = [weakref.ref(context.estimate(node)) for node in walk(plan)]
    assert found.join_set is not None
    del found, context
    gc.collect()
    assert all(ref() is None for ref in estimates)
    assert _summary(estimator.estimate(plan)) == _summary(Estimator(_stats()).estimate(plan))


def test_what_a_search_derived_goes_with_it():
    from cbo.memo.search import Optimizer

    estimator = Estimator(_stats())
    result = Optimizer(estimator).optimize(_plans()[0])
    groups = [weakref.ref(g) for g in result.memo]
    estimates = [weakref.ref(g.estimate) for g in result.memo]
    memo = weakref.ref(result.memo)
    del result
    gc.collect()
    assert memo() is None and all(ref() is None for ref in groups + estimates)
