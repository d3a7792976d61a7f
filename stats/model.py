"""The statistics model: what is known about a table and each of its columns.

Values (bounds, MCVs) are kept as JSON-friendly Python values tagged with the column's kind
(``number``, ``string``, ``date``, ``timestamp``, ``boolean``) so a file read back gives the
same Python values. As in PostgreSQL, the most common values and their frequencies are kept
apart from the histogram: the equi-depth histogram describes only the other non-NULL values,
and its buckets carry their bounds, row count and distinct count.

Serialized form: one JSON document per table with ``format_version``; a reader that meets
another version reports it and treats the statistics as missing. ``collection_version`` names
the method that produced the values (same format): statistics from an older method still load,
and ``cbo analyze`` collects them again (version 2: MCVs from a sample are noise-tested, see
``stats.histogram.choose_mcv``, and histogram buckets' distinct counts sum to the sketched
distinct count, ``with_distinct``; files without the field are version 1).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stats.sample import RowSample

FORMAT_VERSION = 1
COLLECTION_VERSION = 2
KINDS = ("number", "string", "date", "timestamp", "boolean")


def to_json_value(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "date":
        return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value)[:10]
    if kind == "timestamp":
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else str(value)
    if kind == "number":
        if isinstance(value, decimal.Decimal):
            return float(value) if value != value.to_integral_value() else int(value)
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return value
        return value if isinstance(value, (int, float)) else float(value)
    if kind == "boolean":
        return bool(value)
    return str(value)


def from_json_value(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "timestamp":
        return dt.datetime.fromisoformat(value)
    return value


@dataclass(frozen=True)
class Bucket:
    """Rows with values between ``lower`` and ``upper``, both inclusive.

    When a bucket's ``lower`` equals the previous bucket's ``upper`` (PostgreSQL's histograms
    share bounds) that value belongs to the previous bucket; see :func:`bucket_of`.
    """

    lower: Any
    upper: Any
    rows: float
    distinct: float


def in_bucket(value: Any, buckets: tuple[Bucket, ...], index: int) -> bool:
    """Whether ``value`` falls in ``buckets[index]`` under the shared-bound rule above."""
    bucket = buckets[index]
    if value > bucket.upper:
        return False
    if index > 0 and buckets[index - 1].upper == bucket.lower:
        return value > bucket.lower
    return value >= bucket.lower


@dataclass(frozen=True)
class ColumnStats:
    name: str
    kind: str
    null_fraction: float
    distinct: float                    # distinct non-NULL values
    min: Any = None
    max: Any = None
    avg_width: float = 0.0
    max_width: int = 0
    mcv: tuple[tuple[Any, float], ...] = ()   # (value, frequency as a share of all rows)
    histogram: tuple[Bucket, ...] = ()
    # ``distinct`` was counted over every row, not estimated (a sketch, a sample): only then may
    # distinct = non-NULL rows prove the column unique (``TableStats.unique_columns``).
    distinct_exact: bool = False

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body["min"] = to_json_value(self.min, self.kind)
        body["max"] = to_json_value(self.max, self.kind)
        body["mcv"] = [[to_json_value(v, self.kind), f] for v, f in self.mcv]
        body["histogram"] = [[to_json_value(b.lower, self.kind), to_json_value(b.upper, self.kind), b.rows, b.distinct]
                             for b in self.histogram]
        return body

    @staticmethod
    def from_json(body: dict[str, Any]) -> ColumnStats:
        kind = body["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown column kind {kind!r}")
        return ColumnStats(
            name=body["name"], kind=kind, null_fraction=float(body["null_fraction"]), distinct=float(body["distinct"]),
            min=from_json_value(body.get("min"), kind), max=from_json_value(body.get("max"), kind),
            avg_width=float(body.get("avg_width", 0)), max_width=int(body.get("max_width", 0)),
            distinct_exact=bool(body.get("distinct_exact", False)),
            mcv=tuple((from_json_value(v, kind), float(f)) for v, f in body.get("mcv", [])),
            histogram=tuple(Bucket(from_json_value(lo, kind), from_json_value(hi, kind), float(r), float(d))
                            for lo, hi, r, d in body.get("histogram", [])),
        )


class LazyColumns(Mapping[str, ColumnStats]):
    """Column statistics parsed from their JSON bodies on first access.

    Reading a store touches every table but an estimate needs few columns: parsing a
    column's buckets and MCVs only when it is asked for keeps reading the store fast.
    """

    def __init__(self, bodies: dict[str, dict[str, Any]]):
        self._bodies = bodies
        self._parsed: dict[str, ColumnStats] = {}

    def __getitem__(self, name: str) -> ColumnStats:
        if name not in self._parsed:
            self._parsed[name] = ColumnStats.from_json(self._bodies[name])
        return self._parsed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._bodies)

    def __len__(self) -> int:
        return len(self._bodies)

    def __repr__(self) -> str:
        return f"LazyColumns({list(self._bodies)})"

    def kinds(self) -> dict[str, str]:
        return {name: body["kind"] for name, body in self._bodies.items()}


def column_kinds(columns: Mapping[str, ColumnStats]) -> dict[str, str]:
    """Each column's kind, without parsing lazily held columns."""
    if isinstance(columns, LazyColumns):
        return columns.kinds()
    return {name: column.kind for name, column in columns.items()}


@dataclass(frozen=True)
class TableStats:
    table: str                         # as the catalog names it, e.g. "lake.lineitem"
    row_count: float
    size_bytes: float | None
    collected_at: str                  # ISO 8601, UTC
    fingerprint: str                   # of the data described; a different one means stale
    collector: str                     # "spark", "postgres", ...
    sampled_fraction: float = 1.0
    columns: Mapping[str, ColumnStats] = field(default_factory=dict)
    column_groups: dict[str, float] = field(default_factory=dict)  # "a,b" -> distinct (a, b) pairs
    # Whole rows drawn uniformly (stats.sample); stored in its own file, named in ``sample_file``.
    sample: RowSample | None = field(default=None, compare=False, repr=False)
    sample_file: str | None = None
    collection_version: int = COLLECTION_VERSION

    def column(self, name: str) -> ColumnStats:
        return self.columns[name]

    def unique_columns(self) -> list[str]:
        """Columns whose non-NULL values are all distinct, by an exact count: the distinct count
        equals the non-NULL row count, both counted over the whole table (a sampled table's
        counts are scaled estimates). True of the data described, so only while it is fresh."""
        if self.sampled_fraction < 1 or self.row_count < 1:
            return []
        found = []
        bodies = getattr(self.columns, "_bodies", None)   # LazyColumns: parse only flagged columns
        for name in self.columns:
            if bodies is not None and not bodies[name].get("distinct_exact"):
                continue
            column = self.columns[name]
            non_null = self.row_count * (1 - column.null_fraction)
            if column.distinct_exact and non_null >= 1 and abs(column.distinct - non_null) < 0.5:
                found.append(name)
        return found

    def to_json(self) -> dict[str, Any]:
        body = {"format_version": FORMAT_VERSION, "table": self.table, "row_count": self.row_count,
                "size_bytes": self.size_bytes, "collected_at": self.collected_at, "fingerprint": self.fingerprint,
                "collector": self.collector, "collection_version": self.collection_version,
                "sampled_fraction": self.sampled_fraction, "columns": [c.to_json() for c in self.columns.values()],
                "column_groups": self.column_groups}
        if self.sample_file is not None:
            body["sample_file"] = self.sample_file
        return body

    @staticmethod
    def from_json(body: dict[str, Any]) -> TableStats:
        """The statistics of a stored document; a ValueError naming the first field that is of
        the wrong shape or out of range (``validate``)."""
        validate(body)
        bodies = {c["name"]: c for c in body["columns"]}
        return TableStats(table=body["table"], row_count=float(body["row_count"]), size_bytes=body.get("size_bytes"),
                          collected_at=body["collected_at"], fingerprint=body["fingerprint"],
                          collector=body["collector"], sampled_fraction=float(body.get("sampled_fraction", 1.0)),
                          columns=LazyColumns(bodies),
                          column_groups={k: float(v) for k, v in body.get("column_groups", {}).items()},
                          sample_file=body.get("sample_file"),
                          collection_version=int(body.get("collection_version", 1)))


def validate(body: Any) -> None:
    """Check a stored document before anything reads it: its shape (an object with the fields
    and types the model has), and that every number is one the model can mean (finite counts
    that are not negative, fractions in [0, 1]). Columns' MCV values and bucket bounds are
    checked for their kind's JSON type; parsing dates waits until a column is read. Raises a
    ValueError naming the first field that is wrong."""
    if not isinstance(body, dict):
        raise ValueError(f"not a JSON object but {type(body).__name__}")
    version = body.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(f"format version {version}, expected {FORMAT_VERSION}")
    for key, kind in (("table", str), ("collected_at", str), ("fingerprint", str), ("collector", str),
                      ("columns", list)):
        if not isinstance(body.get(key), kind):
            raise ValueError(f"{key} is missing or not a {kind.__name__}")
    _count(body, "row_count")
    if body.get("size_bytes") is not None:
        _count(body, "size_bytes")
    _fraction(body, "sampled_fraction", 1.0, positive=True)
    if not isinstance(body.get("column_groups", {}), dict):
        raise ValueError("column_groups is not an object")
    for name in body.get("column_groups", {}):
        _count(body["column_groups"], name, f"column_groups[{name!r}]")
    if body.get("sample_file") is not None and not isinstance(body["sample_file"], str):
        raise ValueError("sample_file is not a file name")
    names = set()
    for column in body["columns"]:
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            raise ValueError("a column is not an object with a name")
        name = column["name"]
        if name in names:
            raise ValueError(f"column {name!r} appears twice")
        names.add(name)
        _validate_column(column)


def _validate_column(column: dict[str, Any]) -> None:
    name, kind = column["name"], column.get("kind")
    where = f"column {name!r}"
    if kind not in KINDS:
        raise ValueError(f"{where}: unknown column kind {kind!r}")
    _fraction(column, "null_fraction", where=f"{where}: null_fraction")
    _count(column, "distinct", f"{where}: distinct")
    _count(column, "avg_width", f"{where}: avg_width", default=0)
    _count(column, "max_width", f"{where}: max_width", default=0)
    for key in ("min", "max"):
        _check_value(column.get(key), kind, f"{where}: {key}")
    mcv = column.get("mcv", [])
    if not isinstance(mcv, list):
        raise ValueError(f"{where}: mcv is not a list")
    total = 0.0
    for entry in mcv:
        if not isinstance(entry, list) or len(entry) != 2:
            raise ValueError(f"{where}: an MCV is not a [value, frequency] pair")
        _check_value(entry[0], kind, f"{where}: an MCV value")
        total += _fraction({"f": entry[1]}, "f", where=f"{where}: an MCV frequency")
    if total > 1.0 + 1e-6:
        raise ValueError(f"{where}: MCV frequencies add up to {total:.4g}, more than every row")
    histogram = column.get("histogram", [])
    if not isinstance(histogram, list):
        raise ValueError(f"{where}: histogram is not a list")
    for bucket in histogram:
        if not isinstance(bucket, list) or len(bucket) != 4:
            raise ValueError(f"{where}: a histogram bucket is not [lower, upper, rows, distinct]")
        _check_value(bucket[0], kind, f"{where}: a bucket bound")
        _check_value(bucket[1], kind, f"{where}: a bucket bound")
        _count({"n": bucket[2]}, "n", f"{where}: a bucket's rows")
        _count({"n": bucket[3]}, "n", f"{where}: a bucket's distinct count")


_JSON_TYPES: dict[str, tuple[type, ...]] = {"number": (int, float), "string": (str,), "date": (str,),
                                            "timestamp": (str,), "boolean": (bool,)}


def _check_value(value: Any, kind: str, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, _JSON_TYPES[kind]) or kind == "number" and isinstance(value, bool):
        raise ValueError(f"{where} {value!r} is not a {kind}")
    if kind == "number" and isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} is {value}")


def _count(body: dict[str, Any], key: str, where: str | None = None, default: Any = None) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where or key} is {value!r}: not a count (a finite number, not negative)")
    return float(value)


def _fraction(body: dict[str, Any], key: str, default: Any = None, positive: bool = False,
              where: str | None = None) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not (0 < value <= 1 if positive else 0 <= value <= 1):
        interval = "(0, 1]" if positive else "[0, 1]"
        raise ValueError(f"{where or key} is {value!r}: not a fraction in {interval}")
    return float(value)


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
