"""The SQL languages cbo reads a query in, by what sets them apart.

A query is written in one dialect (``--dialect``: Trino's by default), and cbo gives it that
dialect's meaning whatever engine later runs the plan. The differences the binder and the
parser must know are traits here, so that the frontend asks a trait ("does ``int / int``
truncate?"), never a dialect's name. These are *languages*, not sources: a PostgreSQL source's
differences live in its connector (``cbo.connectors``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AdjacentStrings(enum.Enum):
    """Whether two string literals in a row are one string."""

    JOINED = "joined"                # always (Spark)
    LINE_BREAK = "line break"        # when the space between holds a line break (the SQL standard)
    REFUSED = "refused"              # never (Trino's grammar has no such rule)


class RowComparison(enum.Enum):
    """What ``(a, b) = (c, d)`` means."""

    STANDARD = "standard"    # SQL's: ``a = c AND b = d`` in three-valued logic (Trino, PostgreSQL, SQLite)
    STRUCT = "struct"        # the rows are structs, equal field by field with NULL equal to NULL:
                             # ``a IS NOT DISTINCT FROM c AND ...`` (DuckDB, Spark)


@dataclass(frozen=True)
class QueryDialect:
    """``name``: sqlglot's; ``title``: what messages call it. ``integer_division``: ``int / int``
    truncates to an integer (else it is fractional). ``ieee_double_division``: ``/`` and ``%``
    with a DOUBLE operand follow IEEE 754 (a zero divisor gives ±Infinity or NaN) rather than
    raising. ``ieee_division``: every ``/``
    is a division in doubles that never raises (DuckDB's). ``double_modulus``: ``%`` takes
    doubles. ``unique_from_names``: a name used twice in one FROM clause is an error.
    ``date_plus_days``: ``date + integer`` adds days. ``trailing_comma``: a comma may end the
    select list. ``fetch_first``: ``FETCH FIRST n ROWS ONLY`` is in the language.
    ``partial_column_aliases``: a relation's column alias list may be shorter than its columns
    (the rest keep their names); else its length must be the number of columns.
    ``row_comparison``: how ``(a, b) = (c, d)`` compares."""

    name: str
    title: str
    integer_division: bool = False
    ieee_double_division: bool = False
    ieee_division: bool = False
    double_modulus: bool = True
    unique_from_names: bool = False
    date_plus_days: bool = False
    trailing_comma: bool = False
    fetch_first: bool = True
    partial_column_aliases: bool = False
    row_comparison: RowComparison = RowComparison.STANDARD
    adjacent_strings: AdjacentStrings = AdjacentStrings.LINE_BREAK


TRINO = QueryDialect("trino", "Trino", integer_division=True, ieee_double_division=True,
                     adjacent_strings=AdjacentStrings.REFUSED)
PRESTO = QueryDialect("presto", "Presto", integer_division=True, ieee_double_division=True,
                      adjacent_strings=AdjacentStrings.REFUSED)
SPARK = QueryDialect("spark", "Spark", date_plus_days=True, fetch_first=False,
                     adjacent_strings=AdjacentStrings.JOINED, row_comparison=RowComparison.STRUCT)
DUCKDB = QueryDialect("duckdb", "DuckDB", ieee_double_division=True, ieee_division=True,
                      date_plus_days=True, trailing_comma=True, partial_column_aliases=True,
                      row_comparison=RowComparison.STRUCT)
POSTGRES = QueryDialect("postgres", "PostgreSQL", integer_division=True, double_modulus=False,
                        unique_from_names=True, date_plus_days=True, partial_column_aliases=True)

QUERY_DIALECTS = {d.name: d for d in (TRINO, PRESTO, SPARK, DUCKDB, POSTGRES)}
DEFAULT = TRINO
