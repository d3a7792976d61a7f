"""Printing query results: an aligned table, CSV (header row, one line per row) or JSON.

JSON has no numbers for infinity and NaN (``1e0 / 0`` in DuckDB's dialect): they are written as
the strings ``"Infinity"``, ``"-Infinity"`` and ``"NaN"``, so every JSON parser reads the output
(a bare ``Infinity`` is Python's extension, which strict parsers reject); NULL is ``null``.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import math
from collections.abc import Sequence
from typing import Any, TextIO


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite(value)
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        return non_finite(float(value))
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() or abs(value) < 1e15 else str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def non_finite(value: float) -> str:
    """How JSON output writes an infinite or NaN number."""
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def json_safe(value: Any) -> Any:
    """``value`` (nested dicts, lists, tuples) with its infinite and NaN floats as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def write_result(names: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, out: TextIO) -> None:
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if v is None else _text(v) for v in row])
        return
    if fmt == "json":
        json.dump({"columns": list(names), "rows": [[_plain(v) for v in row] for row in rows]}, out, indent=1,
                  allow_nan=False)
        out.write("\n")
        return
    cells = [[_text(v) for v in row] for row in rows]
    widths = [max([len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)]
    numeric = [all(isinstance(row[i], (int, float, decimal.Decimal)) or row[i] is None for row in rows)
               for i in range(len(names))]

    def line(values: Sequence[str]) -> str:
        return " | ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out.write(line(list(names)) + "\n")
    out.write("-+-".join("-" * w for w in widths) + "\n")
    for row in cells:
        out.write(line(row) + "\n")
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")
