"""From SQL text to the plan that runs: parse, bind, decorrelate, normalize, choose strategies.

Until the memo lands this is the plain planner: joins stay in the order the query wrote
them (after predicate pushdown turns comma joins into equi-joins) and every equi-join is a
hash join (Spark: shuffle hash), other joins nested loops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cbo.catalog import Catalog
from cbo.frontend.binder import Binder
from cbo.frontend.decorrelate import decorrelate
from cbo.frontend.parse import DEFAULT_DIALECT, parse
from cbo.ir.expressions import ColumnFactory
from cbo.ir.operators import Join, Plan, walk
from cbo.normalize import normalize
from cbo.schema import SchemaProvider


@dataclass(frozen=True)
class PlannedQuery:
    sql: str
    bound: Plan                    # as bound, subqueries still in expressions
    plan: Plan                     # the plan that runs
    names: tuple[str, ...]         # output column names
    join_strategies: dict[Join, str] = field(default_factory=dict)


def plain_join_strategies(plan: Plan) -> dict[Join, str]:
    strategies = {}
    for node in walk(plan):
        if isinstance(node, Join):
            strategies[node] = "shuffle_hash" if node.equi_keys else "nested_loop"
    return strategies


class Planner:
    def __init__(self, catalog: Catalog, dialect: str = DEFAULT_DIALECT, schemas: SchemaProvider | None = None):
        self.catalog = catalog
        self.dialect = dialect
        self.schemas = schemas or SchemaProvider(catalog)

    def plan(self, sql: str) -> PlannedQuery:
        columns = ColumnFactory()
        bound = Binder(self.catalog, self.schemas, columns).bind(parse(sql, self.dialect))
        plan = normalize(decorrelate(bound.plan, columns))
        return PlannedQuery(sql, bound.plan, plan, bound.names, plain_join_strategies(plan))
