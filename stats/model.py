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
        version = body.get("format_version")
        if version != FORMAT_VERSION:
            raise ValueError(f"format version {version}, expected {FORMAT_VERSION}")
        bodies = {c["name"]: c for c in body["columns"]}
        for column in bodies.values():
            if column.get("kind") not in KINDS:
                raise ValueError(f"unknown column kind {column.get('kind')!r}")
        return TableStats(table=body["table"], row_count=float(body["row_count"]), size_bytes=body.get("size_bytes"),
                          collected_at=body["collected_at"], fingerprint=body["fingerprint"],
                          collector=body["collector"], sampled_fraction=float(body.get("sampled_fraction", 1.0)),
                          columns=LazyColumns(bodies),
                          column_groups={k: float(v) for k, v in body.get("column_groups", {}).items()},
                          sample_file=body.get("sample_file"),
                          collection_version=int(body.get("collection_version", 1)))


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
