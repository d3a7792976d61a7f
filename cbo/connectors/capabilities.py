"""What a JDBC source evaluates: per connector, and per source as its catalog entry overrides it.

The connector rules (``cbo.memo.rules.jdbc_pushdown``) push an operator or an expression into a
source only when its capabilities name it. Each connector declares its dialect's
(``Connector.capabilities``); a catalog's source may take capabilities away or add them
(``[sources.NAME.pushdown]``, ``disable = [...]`` / ``enable = [...]``), e.g. a server whose
collation makes ``like`` compare otherwise than Spark, or an old version without FULL JOIN. The
names (``NAMES``):

* operators: ``join`` (every join), ``aggregate`` (GROUP BY, DISTINCT), ``limit`` (LIMIT and
  ORDER BY ... LIMIT), ``window`` (window functions: PostgreSQL's are SQL's, with ROWS and
  RANGE frames and each key's NULL order as cbo writes it; MariaDB has no NULLS FIRST/LAST and
  SQLite is not checked against Spark for them, so their windows stay in Spark unless a catalog
  enables them), ``grouping_sets`` (ROLLUP, CUBE, GROUPING SETS and GROUPING(): PostgreSQL
  9.5+; MariaDB has only ``WITH ROLLUP`` and no GROUPING(), SQLite neither);
* join kinds: ``inner_join``, ``left_join``, ``right_join``, ``full_join``, ``semi_join``,
  ``anti_join``, ``null_aware_anti_join`` (NOT IN);
* functions by cbo's name (``like``, ``substring``, ``extract_year``, ``divide`` ...), special
  forms (``case``, ``cast``, ``in``, ``between``, ``coalesce``, ``is_null``, ``and``, ``or``,
  ``not``), aggregates (``count_star``, ``count``, ``sum``, ``avg``, ``min``, ``max``,
  ``any_value``, and the second moments ``var_samp``, ``var_pop``, ``stddev_samp``,
  ``stddev_pop``).

``enable`` adds only names cbo can push to some source (``FUNCTIONS``, ``FORMS``,
``AGGREGATES``): it tells cbo that this server evaluates it as Spark does, which cbo cannot check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Capabilities:
    """What a dialect evaluates exactly as Spark does (anything else stays in Spark)."""

    join_kinds: frozenset[str]
    functions: frozenset[str]
    forms: frozenset[str]
    aggregates: frozenset[str]
    boolean_output: bool   # whether a boolean column reads back as a boolean (MariaDB: a number)
    operators: frozenset[str] = frozenset({"join", "aggregate", "limit"})
    # An aggregation repeated in one query (equal shapes, ``cbo.ir.shape``) is computed once, as a
    # materialized common table expression (PostgreSQL 12+: ``WITH ... AS MATERIALIZED``); the
    # remote cost then charges it once. MariaDB decides itself whether to merge a CTE into each
    # reference, so it is rendered (and charged) once per occurrence there.
    shares_repeated: bool = False
    # Decimals held as binary floating point (SQLite's REAL): a decimal of at most
    # ``FLOAT_DECIMAL_DIGITS`` digits is stored, compared and read back exactly (a double keeps 15
    # significant decimal digits), but a sum, an average or arithmetic over decimals would be
    # rounded, and a wider decimal is not held exactly: those stay in Spark.
    float_decimals: bool = False


# A double holds every decimal of at most 15 significant digits exactly (DBL_DIG).
FLOAT_DECIMAL_DIGITS = 15

OPERATORS = ("join", "aggregate", "limit", "window", "grouping_sets")
JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti", "null_aware_anti")
# Every name cbo can render for some source (``cbo.sqlgen``); a connector's are among them.
COMMON_FUNCTIONS = frozenset({"eq", "neq", "lt", "lte", "gt", "gte", "add", "subtract", "multiply", "divide",
                              "modulus", "is_not_distinct_from", "negate", "like", "substring", "upper",
                              "lower", "trim", "abs", "extract_year", "extract_month", "extract_day",
                              "date_add", "date_sub", "add_days", "sqrt"})
COMMON_FORMS = frozenset({"AND", "OR", "NOT", "IN", "BETWEEN", "IS_NULL", "COALESCE", "CASE"})
COMMON_AGGREGATES = frozenset({"count_star", "count", "sum", "avg", "min", "max"})
# the second moments: PostgreSQL and MariaDB name them so and give NULL for one value's sample forms
MOMENTS = frozenset({"var_samp", "var_pop", "stddev_samp", "stddev_pop"})
FUNCTIONS = COMMON_FUNCTIONS | {"length", "concat"}
FORMS = COMMON_FORMS | {"CAST"}
AGGREGATES = COMMON_AGGREGATES | MOMENTS | {"any_value"}
# every name an override may give, each meaning one capability
NAMES: tuple[str, ...] = tuple(sorted({*OPERATORS, *(f"{k}_join" for k in JOIN_KINDS), *FUNCTIONS,
                                       *(f.lower() for f in FORMS), *AGGREGATES}))


def unknown_names(names: Iterable[str]) -> list[str]:
    """The names that are no capability (``NAMES``), in the order given."""
    known = set(NAMES)
    return [n for n in names if n not in known]


def with_overrides(caps: Capabilities, disable: Iterable[str] = (), enable: Iterable[str] = ()) -> Capabilities:
    """``caps`` with the names of ``enable`` added and those of ``disable`` taken away (the
    catalog validated the names; an unknown one raises ValueError here)."""
    disable, enable = tuple(disable), tuple(enable)
    wrong = unknown_names(disable + enable)
    if wrong:
        raise ValueError(f"unknown capability {wrong[0]!r}")
    sets = {"join_kinds": set(caps.join_kinds), "functions": set(caps.functions), "forms": set(caps.forms),
            "aggregates": set(caps.aggregates), "operators": set(caps.operators)}
    for names, add in ((enable, True), (disable, False)):
        for name in names:
            if name in OPERATORS:
                target, value = "operators", name
            elif name.endswith("_join") and name[:-len("_join")] in JOIN_KINDS:
                target, value = "join_kinds", name[:-len("_join")]
            elif name.upper() in FORMS:
                target, value = "forms", name.upper()
            elif name in AGGREGATES:
                target, value = "aggregates", name
            else:
                target, value = "functions", name
            (sets[target].add if add else sets[target].discard)(value)
    return replace(caps, join_kinds=frozenset(sets["join_kinds"]), functions=frozenset(sets["functions"]),
                   forms=frozenset(sets["forms"]), aggregates=frozenset(sets["aggregates"]),
                   operators=frozenset(sets["operators"]))
