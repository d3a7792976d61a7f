"""Printing query results: an aligned table, CSV (header row, one line per row) or JSON."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
from collections.abc import Sequence
from typing import Any, TextIO


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value) if value == value.to_integral_value() or abs(value) < 1e15 else str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
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
        json.dump({"columns": list(names), "rows": [[_plain(v) for v in row] for row in rows]}, out, indent=1)
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
