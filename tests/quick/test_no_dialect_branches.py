"""Outside the connector package nothing branches on a source type: it asks the connector.

A source type's differences (its SQL, capabilities, costs, join order, reader options, metadata,
statistics, local server) live in its connector (``cbo.connectors``). This test reads the
source of ``cbo/`` and ``stats/`` and fails on code that decides by a connector's name: a name
(``"postgres"``, ``"mysql"``, ``"mariadb"``, ``"sqlite"``, ``"postgresql"``: every connector's
dialect, URL subprotocols and server command) compared with ``==``/``in``, used as a dict key or
to look a value up, passed as ``dialect=``, matched in a ``case``, taken as a default
(``dialect or "postgres"``) or tested as a URL prefix (``startswith("jdbc:mariadb:")``); or a
connector object compared by identity (``is POSTGRES``).
Names in strings that are data (a catalog written as TOML, a message) are not branches.
``benchmarks/`` is not read: it names the systems it compares by their names (the native
PostgreSQL baseline ``postgres``), and its pushdown harness sets up each real server by hand.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cbo.connectors import CONNECTORS

ROOT = Path(__file__).resolve().parents[2]
CONNECTOR_PACKAGE = ROOT / "cbo" / "connectors"
NAMES = frozenset(name for c in CONNECTORS for name in (c.dialect, *c.subprotocols, c.server_command) if name)
CONNECTOR_OBJECTS = frozenset(name for name in ("POSTGRES", "MARIADB", "SQLITE"))


def _names_a_connector(node: ast.AST) -> bool:
    """Whether ``node`` is a constant naming a connector, or a collection of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.lower()
        return text in NAMES or any(text.startswith(f"jdbc:{name}") for name in NAMES)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_connector(e) for e in node.elts)
    return False


def branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every decision by a connector's name or identity in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_a_connector(o) for o in operands):
                found.append((node.lineno, "compares with a connector's name"))
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and any(
                    isinstance(o, ast.Name) and o.id in CONNECTOR_OBJECTS for o in operands):
                found.append((node.lineno, "compares a connector by identity"))
        elif isinstance(node, ast.Dict):
            if any(k is not None and _names_a_connector(k) for k in node.keys):
                found.append((node.lineno, "keys a dict by a connector's name"))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _names_a_connector(node.slice):
            found.append((node.lineno, "looks up by a connector's name"))
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "dialect" and _names_a_connector(keyword.value):
                    found.append((node.lineno, "passes a connector's dialect by name"))
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if method in ("startswith", "endswith") and any(_names_a_connector(a) for a in node.args):
                found.append((node.lineno, "tests a URL for a connector's prefix"))
        elif isinstance(node, ast.MatchValue) and _names_a_connector(node.value):
            found.append((node.lineno, "matches a connector's name"))
        elif isinstance(node, ast.BoolOp) and any(_names_a_connector(v) for v in node.values):
            found.append((node.lineno, "falls back to a connector by name"))
    return found


def _sources() -> list[Path]:
    files = sorted((ROOT / "cbo").rglob("*.py")) + sorted((ROOT / "stats").rglob("*.py"))
    return [p for p in files if CONNECTOR_PACKAGE not in p.parents]


def test_nothing_outside_the_connectors_branches_on_a_dialect():
    wrong = []
    for path in _sources():
        for line, what in branches(ast.parse(path.read_text(), str(path))):
            wrong.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not wrong, "ask the source's connector (cbo.connectors) instead:\n" + "\n".join(wrong)


def test_the_check_finds_each_kind_of_branch():
    # Each form the check knows, as code once had them (the connectors' own code may).
    cases = {
        'if source.dialect == "postgres": pass': 1,
        'if dialect not in ("postgres", "mysql"): pass': 1,
        'CAPABILITIES = {"postgres": 1, "mysql": 2}': 1,
        'caps = CAPABILITIES["mysql"]': 1,
        'catalogs["postgres"] = path': 0,                            # data: naming what is stored
        'text = node.sql(dialect="mysql")': 1,
        'if url.startswith("jdbc:mariadb:"): pass': 1,
        'match kind:\n    case "sqlite":\n        pass': 1,
        'if source.connector is POSTGRES: pass': 1,
        'dialect = source.dialect or "postgres"': 1,
        'source = {"type": "jdbc", "dialect": "postgres"}': 0,      # data: a catalog entry
        'message = "cbo postgres start"': 0,
        'if engine == PostgresNative.name: pass': 0,
    }
    for code, expected in cases.items():
        assert len(branches(ast.parse(code))) == expected, code


def test_the_connector_package_is_where_the_names_are():
    # The names exist, and only the connector package decides by them: the check is not vacuous.
    assert {"postgres", "postgresql", "mysql", "mariadb", "sqlite"} <= NAMES
    inside = [p for p in sorted(CONNECTOR_PACKAGE.rglob("*.py")) if branches(ast.parse(p.read_text()))]
    assert inside, "the connectors decide by their own names somewhere (e.g. a URL's prefix)"
