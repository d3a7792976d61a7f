"""The existential family:
``SELECT * FROM customer WHERE <outer filter> AND c_custkey IN (<filtering side>)``.

The outer filter keeps one customer (the seed's own query, by name), or a share of them
(0.1 %, 1 %, 20 %, all) by account balance, which is uniform over [-999.99, 9999.99] in
TPC-H and independent of the key, so no engine can carry it over to the filtering side. The
filtering side has duplicates (``o_custkey`` of orders: about ten per customer), duplicates
and a filter (orders above a total price, about 10 % of them), or none (``c_custkey`` of a
market segment of customer: unique, a fifth of the customers).
"""

from __future__ import annotations

from dataclasses import dataclass

# (label, SQL condition on customer, share of customers it keeps: None for one row).
OUTER = (("one row", "c_name = 'Customer#000000007'", None),
         ("0.1 %", "c_acctbal < -999.99 + 10999.98 * 0.001", 0.001),
         ("1 %", "c_acctbal < -999.99 + 10999.98 * 0.01", 0.01),
         ("20 %", "c_acctbal < -999.99 + 10999.98 * 0.2", 0.2),
         ("100 %", "", 1.0))

FILTERING = (("orders (duplicates)", "select o_custkey from orders"),
             ("orders, filtered (duplicates)", "select o_custkey from orders where o_totalprice > 250000"),
             ("customer segment (no duplicates)",
              "select c2.c_custkey from customer c2 where c2.c_mktsegment = 'BUILDING'"))


@dataclass(frozen=True)
class Case:
    outer: str
    filtering: str
    sql: str

    @property
    def name(self) -> str:
        return f"{self.outer} / {self.filtering}"


def cases() -> list[Case]:
    found = []
    for outer_label, condition, _ in OUTER:
        for filtering_label, subquery in FILTERING:
            where = f"{condition} and " if condition else ""
            sql = f"select * from customer where {where}c_custkey in ({subquery})"
            found.append(Case(outer_label, filtering_label, sql))
    return found
