"""The schemas the fuzzing families draw queries over, and tiny random tables of them whose rows
keep the schema's declared keys.

A schema is tables of typed columns with primary and foreign keys (``Schema``); ``SCHEMAS``
names the ones there are (TPC-H; a workload that defines its tables the same way is one entry
more). Rows are drawn by hypothesis (``table_data``), so a failing case shrinks its rows too:
each table holds a few rows, primary keys are unique and never NULL, and every foreign key value
is NULL or a key of a row of the table it references (cbo relies on declared keys: removing a
join to a unique key, say, is only right on rows that keep them). Other columns draw edge values
as well as ordinary ones: NULL, zero, negatives, the largest 32-bit integer, empty and non-ASCII
strings, far dates.

A case's rows are JSON (decimals and dates as text) so that a failure is one line of the
regression corpus.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from cbo.catalog_types import ForeignKey, TableKeys


class Kind(Enum):
    """A column's type, as the query generator sees it."""
    INT = "int"          # 64-bit integer
    SMALLINT = "int32"   # 32-bit integer (kept to modest values: arithmetic on it may overflow)
    DECIMAL = "decimal"  # decimal(15, 2)
    PRICE = "price"      # decimal(7, 2): TPC-DS's prices and amounts
    TEXT = "text"
    DATE = "date"

    @property
    def numeric(self) -> bool:
        return self in (Kind.INT, Kind.SMALLINT, Kind.DECIMAL, Kind.PRICE)

    @property
    def arrow(self) -> pa.DataType:
        return {Kind.INT: pa.int64(), Kind.SMALLINT: pa.int32(), Kind.DECIMAL: pa.decimal128(15, 2),
                Kind.PRICE: pa.decimal128(7, 2), Kind.TEXT: pa.string(), Kind.DATE: pa.date32()}[self]


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, Kind], ...]
    keys: TableKeys

    def kind(self, column: str) -> Kind:
        return dict(self.columns)[column]


@dataclass(frozen=True)
class Schema:
    name: str
    tables: tuple[Table, ...]          # parents before the tables whose foreign keys reference them

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    def write(self, directory: Path, data: dict[str, list[list[object]]] | None = None) -> Path:
        """Parquet files of every table (empty without ``data``: cbo's catalog reads only their
        columns) and the catalog declaring the keys; the catalog's path."""
        lines = ['[sources.lake]', 'type = "spark"']
        for table in self.tables:
            path = directory / f"{table.name}.parquet"
            pq.write_table(to_arrow(table, (data or {}).get(table.name, [])), path)
            lines += [f"[sources.lake.tables.{table.name}]", f'path = "{path.name}"']
            lines.append("primary_key = [" + ", ".join(f'"{c}"' for c in table.keys.primary_key) + "]")
            if table.keys.foreign_keys:
                lines.append("foreign_keys = [" + ", ".join(
                    "{ columns = [" + ", ".join(f'"{c}"' for c in fk.columns) + f'], references = "{fk.references}", '
                    "referenced_columns = [" + ", ".join(f'"{c}"' for c in fk.referenced_columns) + "] }"
                    for fk in table.keys.foreign_keys) + "]")
        catalog = directory / "catalog.toml"
        catalog.write_text("\n".join(lines) + "\n")
        return catalog


def _arrow_schema(table: Table) -> pa.Schema:
    return pa.schema([pa.field(name, kind.arrow, nullable=name not in table.keys.primary_key)
                      for name, kind in table.columns])


def empty_arrow(table: Table) -> pa.Table:
    return _arrow_schema(table).empty_table()


def _value(text: object, kind: Kind) -> object:
    if text is None:
        return None
    if kind in (Kind.DECIMAL, Kind.PRICE):
        return decimal.Decimal(str(text))
    if kind is Kind.DATE:
        return dt.date.fromisoformat(str(text))
    return text


def to_arrow(table: Table, rows: list[list[object]]) -> pa.Table:
    """A table's rows (as a case holds them: decimals and dates as text) as Arrow."""
    columns = list(zip(*rows)) if rows else [()] * len(table.columns)
    arrays = [pa.array([_value(v, kind) for v in values], kind.arrow)
              for (_, kind), values in zip(table.columns, columns)]
    return pa.Table.from_arrays(arrays, schema=_arrow_schema(table))


# -- values -------------------------------------------------------------------------------------------

EDGE_VALUES: dict[Kind, list[object]] = {
    Kind.INT: [0, 1, -1, 2, 3, 7, 42, -100, 2147483647, -2147483648, 10 ** 12],
    Kind.SMALLINT: [0, 1, -1, 2, 3, 7, 42, -100, 100000],
    Kind.DECIMAL: ["0.00", "0.01", "-1.50", "2.25", "99.99", "-1000.00", "1234567.89"],
    Kind.PRICE: ["0.00", "0.01", "-1.50", "2.25", "99.99", "-4321.09", "99999.99"],
    Kind.TEXT: ["", "a", "A", "abc", "ABC", " a", "a b", "é", "BUILDING", "R", "F", "O", "1-URGENT", "x%y", "a_b"],
    Kind.DATE: ["1970-01-01", "1992-01-01", "1994-06-30", "1995-03-15", "1998-12-01", "2000-02-29", "2024-12-31"],
}
KEY_VALUES = [1, 2, 3, 4, 5, 6, 0, -1]


def values(kind: Kind) -> st.SearchStrategy[object]:
    """A non-key column's value: NULL, or one of the kind's values (simplest first)."""
    return st.one_of(st.sampled_from(EDGE_VALUES[kind]), st.none())


@st.composite
def table_data(draw, schema: Schema, max_rows: int = 4):
    """Rows for every table of ``schema`` that keep its keys (see the module's docstring)."""
    data: dict[str, list[list[object]]] = {}
    for table in schema.tables:
        primary = table.keys.primary_key
        referenced: dict[str, list[tuple[object, ...]]] = {}   # FK column set -> keys it may take
        for fk in table.keys.foreign_keys:
            parent = schema.table(fk.references)
            positions = [[name for name, _ in parent.columns].index(c) for c in fk.referenced_columns]
            referenced[",".join(fk.columns)] = [tuple(row[p] for p in positions) for row in data[parent.name]]
        # a primary key that is a foreign key as a whole (a return's (item, ticket), the sale it
        # returns) takes keys of the parent's rows
        whole = next((fk for fk in table.keys.foreign_keys if sorted(fk.columns) == sorted(primary)), None)
        if whole is not None:
            choices = [tuple(k[list(whole.columns).index(c)] for c in primary)
                       for k in referenced[",".join(whole.columns)]]
            keys = draw(st.lists(st.sampled_from(choices), max_size=max_rows, unique=True)) if choices else []
        else:
            keys = draw(_keys(primary, referenced, max_rows))
        rows = []
        for key in keys:
            row: dict[str, object] = dict(zip(primary, key))
            for fk in table.keys.foreign_keys:
                if all(c in row for c in fk.columns):
                    continue
                choices = referenced[",".join(fk.columns)]
                existing = {c: row[c] for c in fk.columns if c in row}
                fitting = [k for k in choices if all(k[fk.columns.index(c)] == v for c, v in existing.items())]
                picked = draw(st.one_of(st.sampled_from(fitting), st.none()) if fitting else st.none())
                for i, c in enumerate(fk.columns):
                    if c in row:
                        continue
                    # a column two foreign keys share keeps the first one's value
                    row[c] = None if picked is None else picked[i]
            for name, kind in table.columns:
                if name not in row:
                    row[name] = draw(values(kind))
            rows.append([row[name] for name, _ in table.columns])
        data[table.name] = rows
    return data


def _keys(primary: tuple[str, ...], referenced: dict[str, list[tuple[object, ...]]], max_rows: int):
    """Unique primary keys: a key column that is also a foreign key takes the parent's keys (no
    rows when the parent has none); the rest small integers."""
    pk_sources: list[st.SearchStrategy[object]] = []
    for column in primary:
        parents = [keys for cols, keys in referenced.items() if cols.split(",") == [column]]
        pk_sources.append(st.sampled_from([k[0] for k in parents[0]]) if parents and parents[0]
                          else st.nothing() if parents else st.sampled_from(KEY_VALUES))
    if any(s.is_empty for s in pk_sources):
        return st.just([])
    return st.lists(st.tuples(*pk_sources), max_size=max_rows, unique=True)


# -- TPC-H ----------------------------------------------------------------------------------------------

def _columns(spec: str) -> tuple[tuple[str, Kind], ...]:
    kinds = {"i": Kind.INT, "s": Kind.SMALLINT, "d": Kind.DECIMAL, "p": Kind.PRICE, "t": Kind.TEXT, "D": Kind.DATE}
    return tuple((word.split(":")[0], kinds[word.split(":")[1]]) for word in spec.split())


def tpch() -> Schema:
    from cbo.workloads.tpch import KEYS

    specs = {
        "region": "r_regionkey:i r_name:t r_comment:t",
        "nation": "n_nationkey:i n_name:t n_regionkey:i n_comment:t",
        "part": "p_partkey:i p_name:t p_mfgr:t p_brand:t p_type:t p_size:s p_container:t p_retailprice:d p_comment:t",
        "supplier": "s_suppkey:i s_name:t s_address:t s_nationkey:i s_phone:t s_acctbal:d s_comment:t",
        "partsupp": "ps_partkey:i ps_suppkey:i ps_availqty:s ps_supplycost:d ps_comment:t",
        "customer": "c_custkey:i c_name:t c_address:t c_nationkey:i c_phone:t c_acctbal:d c_mktsegment:t c_comment:t",
        "orders": "o_orderkey:i o_custkey:i o_orderstatus:t o_totalprice:d o_orderdate:D o_orderpriority:t "
                  "o_clerk:t o_shippriority:s o_comment:t",
        "lineitem": "l_orderkey:i l_partkey:i l_suppkey:i l_linenumber:s l_quantity:d l_extendedprice:d "
                    "l_discount:d l_tax:d l_returnflag:t l_linestatus:t l_shipdate:D l_commitdate:D "
                    "l_receiptdate:D l_shipinstruct:t l_shipmode:t l_comment:t",
    }
    return Schema("tpch", tuple(Table(name, _columns(spec), KEYS[name]) for name, spec in specs.items()))


# -- TPC-DS ---------------------------------------------------------------------------------------------

def tpcds() -> Schema:
    """TPC-DS's store star: store_sales with its date, item, customer and store dimensions, and
    store_returns, whose (item, ticket) key is the sale it returns. A few columns of each, with
    TPC-DS's types: integer surrogate keys, decimal(7, 2) prices, dates, short strings. The keys
    are the workload's, kept where both ends are among these tables (customer's first sale date
    is one more way to date_dim)."""
    from cbo.workloads.tpcds import KEYS

    specs = {
        "date_dim": "d_date_sk:i d_date:D d_year:s d_moy:s d_day_name:t",
        "item": "i_item_sk:i i_item_id:t i_brand:t i_category:t i_current_price:p i_manufact_id:s",
        "customer": "c_customer_sk:i c_customer_id:t c_first_name:t c_last_name:t c_birth_year:s "
                    "c_first_sales_date_sk:i",
        "store": "s_store_sk:i s_store_id:t s_store_name:t s_state:t s_number_employees:s s_tax_percentage:p",
        "store_sales": "ss_sold_date_sk:i ss_item_sk:i ss_customer_sk:i ss_store_sk:i ss_ticket_number:i "
                       "ss_quantity:s ss_sales_price:p ss_ext_discount_amt:p ss_net_profit:p",
        "store_returns": "sr_returned_date_sk:i sr_item_sk:i sr_customer_sk:i sr_store_sk:i sr_ticket_number:i "
                         "sr_return_quantity:s sr_return_amt:p sr_net_loss:p",
    }
    tables = []
    for name, spec in specs.items():
        columns = _columns(spec)
        names = {c for c, _ in columns}
        keys = KEYS[name]
        foreign = tuple(fk for fk in keys.foreign_keys if fk.references in specs and set(fk.columns) <= names)
        if name == "customer":
            foreign += (ForeignKey(("c_first_sales_date_sk",), "date_dim", ("d_date_sk",)),)
        tables.append(Table(name, columns, TableKeys(keys.primary_key, foreign)))
    return Schema("tpcds", tuple(tables))


SCHEMAS = {"tpch": tpch, "tpcds": tpcds}
