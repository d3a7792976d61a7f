"""SQL data types of the plan IR and the rules that combine them.

A small, engine-neutral set: enough to type TPC-H-style SQL, to render casts in any dialect,
and to give the estimator column widths. Arithmetic result types follow the SQL standard's
spirit (decimal precision grows, integers widen to BIGINT) without copying one engine's rules:
the engines compute the values; the IR's types describe them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class DataType:
    name: str                 # boolean, integer, bigint, decimal, double, varchar, date, timestamp, interval, null
    precision: int | None = None
    scale: int | None = None

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return self.name

    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC

    @property
    def is_integer(self) -> bool:
        return self.name in ("integer", "bigint")

    @property
    def is_temporal(self) -> bool:
        return self.name in ("date", "timestamp")

    def to_sqlglot(self) -> exp.DataType:
        if self.name == "decimal":
            return exp.DataType.build(f"DECIMAL({self.precision}, {self.scale})")
        return exp.DataType.build(SQLGLOT_NAMES.get(self.name, self.name.upper()))


BOOLEAN = DataType("boolean")
INTEGER = DataType("integer")
BIGINT = DataType("bigint")
DOUBLE = DataType("double")
VARCHAR = DataType("varchar")
DATE = DataType("date")
TIMESTAMP = DataType("timestamp")
INTERVAL = DataType("interval")
NULL = DataType("null")  # the type of a bare NULL literal: becomes whatever it meets

NUMERIC = ("integer", "bigint", "decimal", "double")
SQLGLOT_NAMES = {"integer": "INT", "bigint": "BIGINT", "double": "DOUBLE", "varchar": "VARCHAR", "boolean": "BOOLEAN",
                 "date": "DATE", "timestamp": "TIMESTAMP", "null": "NULL"}
MAX_DECIMAL_PRECISION = 38


def decimal(precision: int, scale: int) -> DataType:
    precision = min(max(precision, 1), MAX_DECIMAL_PRECISION)
    return DataType("decimal", precision, min(scale, precision))


def from_sqlglot(node: exp.DataType) -> DataType:
    """The IR type of a sqlglot type (as written in CAST or reported by a source)."""
    kind = node.this
    T = exp.DataType.Type
    if kind in (T.TINYINT, T.SMALLINT, T.INT, T.UTINYINT, T.USMALLINT):
        return INTEGER
    if kind in (T.BIGINT, T.UINT, T.UBIGINT):
        return BIGINT
    if kind in (T.DECIMAL,):
        params = [int(p.this.this) for p in node.expressions] if node.expressions else []
        precision = params[0] if params else 38
        return decimal(precision, params[1] if len(params) > 1 else 0)
    if kind in (T.FLOAT, T.DOUBLE):
        return DOUBLE
    if kind in (T.VARCHAR, T.CHAR, T.TEXT, T.NCHAR, T.NVARCHAR):
        return VARCHAR
    if kind == T.BOOLEAN:
        return BOOLEAN
    if kind == T.DATE:
        return DATE
    if kind in (T.TIMESTAMP, T.DATETIME, T.TIMESTAMPTZ, T.TIMESTAMPNTZ, T.TIMESTAMPLTZ):
        return TIMESTAMP
    raise ValueError(f"unsupported type {node.sql()}")


def from_arrow(arrow_type) -> DataType:
    """The IR type of an Arrow type (Parquet schemas)."""
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return BOOLEAN
    if pa.types.is_integer(arrow_type):
        return BIGINT if arrow_type.bit_width > 32 else INTEGER
    if pa.types.is_decimal(arrow_type):
        return decimal(arrow_type.precision, arrow_type.scale)
    if pa.types.is_floating(arrow_type):
        return DOUBLE
    if pa.types.is_date(arrow_type):
        return DATE
    if pa.types.is_timestamp(arrow_type):
        return TIMESTAMP
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_string_view(arrow_type):
        return VARCHAR
    raise ValueError(f"unsupported column type {arrow_type}")


def common_type(a: DataType, b: DataType) -> DataType | None:
    """The type both values convert to for comparison, CASE or UNION; None when incompatible."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if a.is_numeric and b.is_numeric:
        if DOUBLE in (a, b):
            return DOUBLE
        if a.name == "decimal" or b.name == "decimal":
            da, db = _as_decimal(a), _as_decimal(b)
            scale = max(da.scale or 0, db.scale or 0)
            whole = max((da.precision or 0) - (da.scale or 0), (db.precision or 0) - (db.scale or 0))
            return decimal(whole + scale, scale)
        return BIGINT
    if {a.name, b.name} == {"date", "timestamp"}:
        return TIMESTAMP
    if a.name == "varchar" and b.is_temporal:
        return b  # 'YYYY-MM-DD' compared with a date
    if b.name == "varchar" and a.is_temporal:
        return a
    return None


def _as_decimal(t: DataType) -> DataType:
    if t.name == "decimal":
        return t
    if t.name == "integer":
        return decimal(10, 0)
    return decimal(19, 0)


def arithmetic_type(op: str, a: DataType, b: DataType) -> DataType | None:
    """Result type of ``a op b`` for op in + - * / %; None when the operands do not allow it."""
    if a == NULL or b == NULL:
        other = b if a == NULL else a
        return other if other.is_numeric else (other if other.is_temporal else NULL)
    if a.is_temporal and b == INTERVAL and op in "+-":
        return a
    if a == INTERVAL and b.is_temporal and op == "+":
        return b
    if a == DATE and b == DATE and op == "-":
        return INTEGER
    if not (a.is_numeric and b.is_numeric):
        return None
    if DOUBLE in (a, b):
        return DOUBLE
    if a.name != "decimal" and b.name != "decimal":
        return DOUBLE if op == "/" else BIGINT
    da, db = _as_decimal(a), _as_decimal(b)
    p1, s1, p2, s2 = da.precision or 0, da.scale or 0, db.precision or 0, db.scale or 0
    if op in "+-":
        scale = max(s1, s2)
        return decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return decimal(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(6, s1 + p2 + 1)
        return decimal(p1 - s1 + s2 + scale, scale)
    return decimal(min(p1 - s1, p2 - s2) + max(s1, s2), max(s1, s2))


def width_bytes(t: DataType) -> int:
    """A typical width in bytes, for size estimates when statistics are missing."""
    return {"boolean": 1, "integer": 4, "bigint": 8, "double": 8, "date": 4, "timestamp": 8,
            "decimal": 16, "varchar": 24, "interval": 16, "null": 1}.get(t.name, 8)
