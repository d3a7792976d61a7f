"""Query hints: table pushdown's ``/* #distinct@ tab = col1,col2 # */``, a unique key the user vouches for.

Table pushdown (``cbo.memo.rules.table_pushdown``) needs the joined table's columns to be
unique, and Presto's connectors could not say so; the design lets the query say it in a comment::

    /* #distinct@ tab1 = col1,col2#*/

with the regex (Java)::

    ^.*\\/*\\s*#distinct\\@*\\s*(\\p{Alnum}+|\\s*=\\s*(\\p{Alnum}+)(\\s*,\\s*\\p{Alnum}+)*)\\s*#\\s*\\/*.*$

Taken as the design means it, not letter for letter, in two places, both stated here:

* the regex's alternation binds loosest, so read literally it accepts ``#distinct@ tab#`` or
  ``#distinct@ = col1#`` but not the design's own example ``tab1 = col1,col2``: here the table,
  ``=`` and the column list are one sequence, as the example writes them;
* ``\\p{Alnum}`` has no underscore, so it would refuse every TPC-H column (``p_partkey``): names
  here are SQL identifiers (letters, digits, ``_``), and the table may be qualified (``lake.part``).

The rest is the design's: ``@`` optional (``\\@*``), blanks allowed around every part, the closing
``#`` required, case as written (``#distinct``; other cases are reported, not ignored).
Placement: the regex is anchored by ``^.*`` and ``.*$``, so the hint may sit anywhere in the
query; here it is looked for in every comment (``/* */`` or ``--``) wherever it is, and never
inside a string literal. ``tab`` is a table of the catalog read by the query, by its name or an
alias the query gives it; the key holds for the table's data, so it applies to every reference.

A hint that cannot be used (bad syntax, a table the query does not read, a column the table
does not have) is a warning, one line, and the query is planned without it: never an error,
never silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from cbo.errors import CatalogError
from cbo.sources.catalog import Catalog
from cbo.sources.schema import SchemaProvider

SYNTAX = "/* #distinct@ table = col1,col2 # */"
# Any mention of the hint's marker, in any case: a comment holding one must be a well-formed hint.
_MARKER = re.compile(r"#\s*distinct", re.IGNORECASE)
_NAME = r"[A-Za-z0-9_]+"
_HINT = re.compile(rf"#distinct@*\s*(?P<table>{_NAME}(?:\.{_NAME})*)\s*=\s*(?P<columns>{_NAME}(?:\s*,\s*{_NAME})*)\s*#")


@dataclass(frozen=True)
class Hint:
    """``table`` (as written) has a unique key on ``columns`` (as written)."""

    table: str
    columns: tuple[str, ...]
    text: str          # the hint as written, for messages

    def __str__(self) -> str:
        return f"/* {self.text} */"


@dataclass
class Hints:
    """The hints of a query resolved against its tables: unique keys by the catalog's qualified
    table name (column names as the table spells them), and the warnings of unusable ones."""

    keys: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def keys_of(self, table: str) -> list[tuple[str, ...]]:
        return self.keys.get(table, [])


def read_hints(texts: Iterable[str]) -> tuple[list[Hint], list[str]]:
    """The hints written in ``texts`` (comments), and a warning for each mention of
    ``#distinct`` that is not a well-formed hint."""
    hints, warnings = [], []
    for text in texts:
        for marker in _MARKER.finditer(text):
            found = _HINT.match(text, marker.start())
            if found is None:
                written = text[marker.start():].strip()
                closing = written.find("#", 1)
                written = written[:closing + 1] if closing > 0 else written
                warnings.append(f"hint ignored: {written!r} is not {SYNTAX}")
                continue
            columns = tuple(c.strip() for c in found.group("columns").split(","))
            hints.append(Hint(found.group("table"), columns, " ".join(found.group(0).split())))
    return hints, warnings


def resolve(statement: exp.Expr, comments: Iterable[str], catalog: Catalog, schemas: SchemaProvider) -> Hints:
    """The query's hints (written in its ``comments``) as unique keys of the catalog tables it
    reads."""
    found, warnings = read_hints(comments)
    result = Hints(warnings=warnings)
    if not found:
        return result
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    # Every name the query gives a table: its alias, its name, its qualified name.
    named: dict[str, str] = {}
    for node in statement.find_all(exp.Table):
        if not node.db and node.name.lower() in ctes:
            continue
        full = f"{node.db}.{node.name}" if node.db else node.name
        try:
            table = catalog.table(full)
        except CatalogError:
            continue   # the binder reports it
        for name in (node.alias, node.name, full, table.qualified_name):
            if name:
                named.setdefault(name.lower(), table.qualified_name)
    aliases = {a.name.lower() for a in statement.find_all(exp.TableAlias) if a.name}
    for hint in found:
        qualified = named.get(hint.table.lower())
        if qualified is None:
            if hint.table.lower() in ctes or hint.table.lower() in aliases:
                why = f"{hint.table} is not a table of the catalog (a CTE or a subquery)"
            else:
                why = f"the query reads no table named {hint.table}"
            result.warnings.append(f"hint {hint} ignored: {why}")
            continue
        columns = {info.name.lower(): info.name for info in schemas.columns(catalog.table(qualified))}
        missing = [c for c in hint.columns if c.lower() not in columns]
        if missing:
            result.warnings.append(f"hint {hint} ignored: {qualified} has no column "
                                   f"{', '.join(missing)}")
            continue
        key = tuple(dict.fromkeys(columns[c.lower()] for c in hint.columns))
        if key not in result.keys.setdefault(qualified, []):
            result.keys[qualified].append(key)
    return result
