"""What binding an expression needs from the query it sits in.

The query binder (``binder``) calls the binders of expressions, aggregation and window
functions; they reach back to it for three things only: new column ids, the SQL language the
statement is written in, and binding a subquery (an ``IN``, ``EXISTS`` or scalar subquery is a
query of its own). This protocol names those three, so that the lower binders depend on it and
the query binder sits above them all.
"""

from __future__ import annotations

from typing import Protocol

from sqlglot import exp

from cbo.frontend.languages import QueryDialect
from cbo.frontend.scope import Scope
from cbo.ir.expressions import ColumnFactory
from cbo.ir.operators import Plan


class QueryContext(Protocol):
    columns: ColumnFactory   # the statement's column ids
    dialect: str             # the dialect's name, for messages
    language: QueryDialect   # its traits, where dialects differ

    def bind_subquery(self, query: exp.Expr, outer: Scope) -> tuple[Plan, list[str]]:
        """The plan of a subquery bound inside ``outer``, and its output names."""
        ...
