"""SQLite's sqllogictest format: the records of a ``.test`` file, and how a result is written
and compared (``sqllogictest.c`` and ``slt_sqlite.c`` of the SQLite project).

A file is a sequence of records separated by blank lines:

* ``statement ok`` / ``statement error``, then the SQL;
* ``query <types> <sort> [label]``, then the SQL, then ``----`` and the expected result: one
  value a line, or ``N values hashing to <md5>`` when there are more values than the file's
  ``hash-threshold``;
* ``skipif <engine>`` / ``onlyif <engine>`` before a record, ``halt``, ``hash-threshold N``.

A result is a flat list of values, each written by its column's type letter: ``I`` an integer
(a real is truncated toward zero, text read as its leading number), ``R`` a real with three
decimals, ``T`` text (an empty string is ``(empty)``, a control character ``@``); NULL is
``NULL`` whatever the type. ``rowsort`` sorts the rows and ``valuesort`` the values, both by
the written text; ``nosort`` keeps the engine's order (the query has an ORDER BY).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any


class SortMode(Enum):
    NOSORT = "nosort"
    ROWSORT = "rowsort"
    VALUESORT = "valuesort"


@dataclass(frozen=True)
class Statement:
    sql: str
    ok: bool            # ``statement ok`` (else ``statement error``: the statement must fail)
    line: int


@dataclass(frozen=True)
class Query:
    sql: str
    types: str          # one letter per column: I, R or T
    sort: SortMode
    label: str | None   # queries sharing a label must give the same result
    expected: tuple[str, ...] | None   # the values, or None when only the hash is given
    expected_count: int  # how many values
    expected_hash: str | None   # md5 of the values (given, or computed from the values)
    line: int


Record = Statement | Query


@dataclass(frozen=True)
class Halt:
    line: int


def _conditions_allow(conditions: list[tuple[str, str]], engine: str) -> bool:
    for kind, name in conditions:
        if kind == "skipif" and name == engine:
            return False
        if kind == "onlyif" and name != engine:
            return False
    return True


_HASHED = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")


def parse_records(text: str, engine: str = "postgresql") -> Iterator[Record | Halt | int]:
    """The records of a file that apply to ``engine`` (``skipif``/``onlyif`` honoured), in
    order; an int is a new ``hash-threshold``; a Halt ends the file for this engine."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not lines[index].strip() or lines[index].startswith("#"):
            index += 1
            continue
        start = index
        block: list[str] = []
        while index < len(lines) and lines[index].strip():
            block.append(lines[index].rstrip("\r"))
            index += 1
        conditions = []
        while block and block[0].split()[0] in ("skipif", "onlyif"):
            words = block.pop(0).split()
            conditions.append((words[0], words[1] if len(words) > 1 else ""))
            start += 1
        block = [b for b in block if not b.startswith("#")]
        if not block:
            continue
        words = block[0].split()
        allowed = _conditions_allow(conditions, engine)
        if words[0] == "halt":
            if allowed:
                yield Halt(start + 1)
                return
        elif words[0] == "hash-threshold":
            yield int(words[1])
        elif words[0] == "statement":
            if allowed:
                yield Statement("\n".join(block[1:]), words[1] == "ok", start + 1)
        elif words[0] == "query":
            if allowed:
                yield _query(words, block[1:], start + 1)
        else:
            raise ValueError(f"line {start + 1}: unknown record {words[0]!r}")


def _query(words: list[str], body: list[str], line: int) -> Query:
    types = words[1]
    sort = SortMode(words[2]) if len(words) > 2 else SortMode.NOSORT
    label = words[3] if len(words) > 3 else None
    if "----" in body:
        split = body.index("----")
        sql, result = body[:split], body[split + 1:]
    else:
        sql, result = body, []
    hashed = _HASHED.match(result[0]) if len(result) == 1 else None
    if hashed:
        return Query("\n".join(sql), types, sort, label, None, int(hashed.group(1)), hashed.group(2), line)
    values = tuple(result)
    return Query("\n".join(sql), types, sort, label, values, len(values), result_hash(values), line)


def result_hash(values: Sequence[str]) -> str:
    """The md5 sqllogictest gives a result: each value followed by a newline."""
    md5 = hashlib.md5()
    for value in values:
        md5.update(value.encode())
        md5.update(b"\n")
    return md5.hexdigest()


# -- writing values as sqllogictest does -----------------------------------------------------------

_LEADING_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _leading_number(text: str) -> float:
    found = _LEADING_NUMBER.match(text)
    return float(found.group(0)) if found else 0.0


def _as_int(value: Any) -> int:
    """SQLite's ``sqlite3_column_int``: toward zero, saturating at 64 bits, then the low 32 bits."""
    number: float | int | decimal.Decimal
    if isinstance(value, str):
        number = _leading_number(value)
    elif isinstance(value, (dt.date, dt.datetime)):
        number = _leading_number(value.isoformat())
    elif isinstance(value, (int, decimal.Decimal)):
        number = value
    else:
        number = float(value)
    if isinstance(number, float):
        if math.isnan(number):
            return 0
        number = max(min(number, 9.223372036854775e18), -9.223372036854775e18)
    whole = int(number) & 0xFFFFFFFF
    return whole - (1 << 32) if whole >= 1 << 31 else whole


def _real_text(value: float) -> str:
    """SQLite's text of a real (``%!.15g``: at least one decimal)."""
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    text = f"{value:.15g}"
    if "e" not in text and "." not in text:
        text += ".0"
    return text


def format_value(value: Any, letter: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        value = int(value)
    if letter == "I":
        return str(_as_int(value))
    if letter == "R":
        if isinstance(value, str):
            number = _leading_number(value)
        elif isinstance(value, (dt.date, dt.datetime)):
            number = _leading_number(value.isoformat())
        else:
            number = float(value)
        return f"{number:.3f}"
    if isinstance(value, float):
        text = _real_text(value)
    elif isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        text = str(int(value)) if isinstance(exponent, int) and exponent >= 0 else _real_text(float(value))
    elif isinstance(value, (dt.date, dt.datetime)):
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    else:
        text = str(value)
    if text == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in text)


def format_result(rows: Sequence[Sequence[Any]], types: str, sort: SortMode) -> list[str]:
    """The values of ``rows`` as the sqllogictest runner writes and sorts them (``rowsort``
    compares rows column by column by their text, as ``strcmp`` does)."""
    written = [[format_value(v, types[i] if i < len(types) else "T") for i, v in enumerate(row)] for row in rows]
    if sort is SortMode.ROWSORT:
        written.sort(key=lambda row: [v.encode() for v in row])
    values = [v for row in written for v in row]
    if sort is SortMode.VALUESORT:
        values.sort(key=lambda v: v.encode())
    return values


def matches(query: Query, values: Sequence[str]) -> bool:
    """Whether written and sorted ``values`` are the file's expected result."""
    if len(values) != query.expected_count:
        return False
    if query.expected is not None:
        return tuple(values) == query.expected
    return result_hash(values) == query.expected_hash


def read_file(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")
