"""Random valid queries over a schema, in the spirit of SQLsmith: a hypothesis strategy that
builds a query top-down, keeping a scope of the columns each clause may read and the kind of
every expression, so that what it writes binds and runs.

What a query may hold: joins of every kind (inner, left, right, full, cross, comma) on key
pairs or other columns, derived tables; subqueries of every form (IN and NOT IN, EXISTS and NOT
EXISTS, correlated or not, scalar subqueries, ANY and ALL); set operations with and without ALL;
GROUP BY with HAVING, DISTINCT; ORDER BY over every output column (so a LIMIT's rows are
determined) with NULLS FIRST/LAST, LIMIT and OFFSET; expressions with NULL, CASE, COALESCE,
NULLIF, casts, string functions, date parts and edge literals (empty strings, zero, negatives,
large numbers, far dates).

Left out on purpose, because engines may answer them differently and both be right: a division
by anything but a non-zero constant (whether an error is raised depends on which rows an engine
evaluates it for), LIMIT without a total order, aggregates whose result depends on row order,
arithmetic that can overflow.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from benchmarks.equivalence.schemas import Kind, Schema

NUMERIC = (Kind.INT, Kind.SMALLINT, Kind.DECIMAL, Kind.PRICE)
COMMON = ["case", "case", "coalesce", "coalesce", "scalar", "scalar"]


@dataclass(frozen=True)
class Column:
    ref: str       # how the query names it: alias.column
    kind: Kind


@dataclass(frozen=True)
class Scope:
    columns: tuple[Column, ...]
    outer: tuple[Column, ...] = ()     # columns of enclosing queries (for correlation)

    def of(self, *kinds: Kind) -> list[Column]:
        return [c for c in self.columns if c.kind in kinds]


LITERALS: dict[Kind, list[str]] = {
    Kind.INT: ["0", "1", "-1", "2", "3", "42", "2147483647", "-100", "NULL"],
    Kind.SMALLINT: ["0", "1", "2", "7", "-1", "NULL"],
    Kind.DECIMAL: ["0.00", "1.50", "-2.25", "99.99", "0.01", "NULL"],
    Kind.PRICE: ["0.00", "19.99", "-1.50", "99999.99", "0.01", "NULL"],
    Kind.TEXT: ["''", "'a'", "'A'", "'abc'", "'BUILDING'", "'R'", "' a'", "'é'", "NULL"],
    Kind.DATE: ["DATE '1995-03-15'", "DATE '1970-01-01'", "DATE '1998-12-01'", "DATE '2000-02-29'", "NULL"],
}
LIKE_PATTERNS = ["'a%'", "'%b%'", "'_'", "''", "'%'", "'A%C'", "'x\\%y'"]


class Generator:
    """One query's drawing: ``draw`` is hypothesis's, ``schema`` the tables, ``depth`` the
    nesting left for subqueries."""

    def __init__(self, draw, schema: Schema):
        self.draw, self.schema = draw, schema
        self.aliases = 0

    def alias(self) -> str:
        self.aliases += 1
        return f"a{self.aliases}"

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def output_kinds(self) -> list[Kind]:
        return [self.pick([Kind.INT, Kind.DECIMAL, Kind.TEXT, Kind.DATE]) for _ in range(self.draw(st.integers(1, 3)))]

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent

    # -- expressions ------------------------------------------------------------------------------

    def literal(self, kind: Kind) -> str:
        return self.pick(LITERALS[kind])

    def column(self, scope: Scope, kinds: tuple[Kind, ...], outer: bool = False) -> str | None:
        found = [c for c in (scope.outer if outer else scope.columns) if c.kind in kinds]
        return self.pick(found).ref if found else None

    def expr(self, scope: Scope, kind: Kind, depth: int = 2) -> str:
        """An expression of ``kind`` (numeric kinds mix) over the scope's columns."""
        kinds = NUMERIC if kind.numeric else (kind,)
        leaf = self.column(scope, kinds)
        if depth <= 0 or self.chance(45):
            if leaf is not None and self.chance(80):
                return leaf
            return self.literal(kind)
        # weighted; NULLIF rare: a query holds many expressions, and each NULLIF is a refusal
        # while cbo does not support it
        choice = "nullif" if self.chance(2) else self.pick(["arith"] * 4 + ["neg", "cast", "cast", "func", "func", "func"] + COMMON
                           if kind.numeric else ["cast", "func", "func", "func"] + COMMON)
        if choice == "arith":
            op = self.pick(["+", "-", "*", "/", "%"])
            left = self.expr(scope, kind, depth - 1)
            if op in ("/", "%"):
                return f"({left} {op} {self.pick(['2', '-3', '7', '0.5'])})"
            if op == "*":
                return f"({left} * {self.pick(['2', '-1', '3', '0.1'])})"
            return f"({left} {op} {self.expr(scope, kind, depth - 1)})"
        if choice == "neg":
            return f"(- {self.expr(scope, kind, depth - 1)})"
        if choice == "case":
            whens = " ".join(f"WHEN {self.predicate(scope, depth - 1, subqueries=False)} "
                             f"THEN {self.expr(scope, kind, depth - 1)}" for _ in range(self.draw(st.integers(1, 2))))
            otherwise = f" ELSE {self.expr(scope, kind, depth - 1)}" if self.chance(70) else ""
            return f"CASE {whens}{otherwise} END"
        if choice == "coalesce":
            return f"COALESCE({self.expr(scope, kind, depth - 1)}, {self.expr(scope, kind, depth - 1)})"
        if choice == "nullif":
            return f"NULLIF({self.expr(scope, kind, depth - 1)}, {self.expr(scope, kind, depth - 1)})"
        if choice == "cast":
            if kind.numeric:
                source = self.expr(scope, self.pick(list(NUMERIC)), depth - 1)
                return f"CAST({source} AS {self.pick(['BIGINT', 'DECIMAL(18, 2)', 'DOUBLE'])})"
            if kind is Kind.TEXT:
                return f"CAST({self.expr(scope, self.pick([Kind.INT, Kind.DATE]), depth - 1)} AS VARCHAR)"
            return f"CAST({self.expr(scope, Kind.DATE, depth - 1)} AS DATE)"
        if choice == "scalar" and depth >= 2:
            return self.scalar_subquery(scope, kind, depth)
        # functions
        if kind.numeric:
            text = self.column(scope, (Kind.TEXT,))
            date = self.column(scope, (Kind.DATE,))
            options = ["abs", "round"] + (["length"] if text else []) + (["year"] if date else [])
            f = self.pick(options)
            if f == "abs":
                return f"abs({self.expr(scope, kind, depth - 1)})"
            if f == "round":
                return f"round({self.expr(scope, Kind.DECIMAL, depth - 1)}, {self.pick(['0', '1', '2'])})"
            if f == "length":
                return f"length({self.expr(scope, Kind.TEXT, depth - 1)})"
            return f"extract(year FROM {self.expr(scope, Kind.DATE, depth - 1)})"
        if kind is Kind.TEXT:
            f = self.pick(["upper", "lower", "substring", "concat", "trim"])
            inner = self.expr(scope, Kind.TEXT, depth - 1)
            if f == "substring":
                return f"substring({inner}, {self.pick(['1', '2', '0'])}, {self.pick(['1', '2', '5'])})"
            if f == "concat":
                return f"({inner} || {self.expr(scope, Kind.TEXT, depth - 1)})"
            return f"{f}({inner})"
        return self.expr(scope, Kind.DATE, depth - 1)

    def comparable(self, scope: Scope, depth: int) -> tuple[str, str, Kind]:
        kind = self.pick([Kind.INT, Kind.DECIMAL, Kind.TEXT, Kind.DATE, Kind.SMALLINT])
        if not scope.of(*(NUMERIC if kind.numeric else (kind,))) and self.chance(80):
            kind = self.pick([c.kind for c in scope.columns]) if scope.columns else kind
        return self.expr(scope, kind, depth), self.expr(scope, kind, depth - 1), kind

    def predicate(self, scope: Scope, depth: int = 2, subqueries: bool = True) -> str:
        forms = ["cmp", "cmp", "null", "between", "in_list", "like", "distinct_from"]
        if depth > 0:
            forms += ["and", "or", "not"]
        if subqueries and depth > 0:
            forms += ["exists", "in_subquery", "scalar_cmp", "quantified"]
        form = self.pick(forms)
        if form == "cmp":
            left, right, _ = self.comparable(scope, depth)
            return f"{left} {self.pick(['=', '<>', '<', '<=', '>', '>='])} {right}"
        if form == "distinct_from":
            left, right, _ = self.comparable(scope, depth)
            return f"{left} IS {self.pick(['', 'NOT '])}DISTINCT FROM {right}"
        if form == "null":
            kind = self.pick([c.kind for c in scope.columns]) if scope.columns else Kind.INT
            return f"{self.expr(scope, kind, depth - 1)} IS {self.pick(['', 'NOT '])}NULL"
        if form == "between":
            left, low, kind = self.comparable(scope, depth - 1)
            return f"{left} {self.pick(['', 'NOT '])}BETWEEN {low} AND {self.expr(scope, kind, 0)}"
        if form == "in_list":
            left, _, kind = self.comparable(scope, depth - 1)
            items = ", ".join(self.literal(kind) for _ in range(self.draw(st.integers(1, 4))))
            return f"{left} {self.pick(['', 'NOT '])}IN ({items})"
        if form == "like":
            text = self.expr(scope, Kind.TEXT, depth - 1)
            return f"{text} {self.pick(['', 'NOT '])}LIKE {self.pick(LIKE_PATTERNS)}"
        if form in ("and", "or"):
            return f"({self.predicate(scope, depth - 1, subqueries)}) {form.upper()} " \
                   f"({self.predicate(scope, depth - 1, subqueries)})"
        if form == "not":
            return f"NOT ({self.predicate(scope, depth - 1, subqueries)})"
        if form == "exists":
            inner = self.select(Scope((), scope.columns + scope.outer), None, depth - 1, correlate=True)
            return f"{self.pick(['', 'NOT '])}EXISTS ({inner})"
        if form == "in_subquery":
            kind = self.pick([c.kind for c in scope.columns]) if scope.columns else Kind.INT
            left = self.expr(scope, kind, depth - 1)
            inner = self.select(Scope((), scope.columns + scope.outer), [kind], depth - 1, correlate=self.chance(50))
            return f"{left} {self.pick(['', 'NOT '])}IN ({inner})"
        if form == "quantified":
            kind = self.pick([c.kind for c in scope.columns]) if scope.columns else Kind.INT
            left = self.expr(scope, kind, depth - 1)
            inner = self.select(Scope((), scope.columns + scope.outer), [kind], depth - 1, correlate=self.chance(50))
            return f"{left} {self.pick(['=', '<>', '<', '>='])} {self.pick(['ANY', 'ALL'])} ({inner})"
        kind = self.pick([c.kind for c in scope.columns]) if scope.columns else Kind.INT
        return f"{self.expr(scope, kind, depth - 1)} {self.pick(['=', '<', '>='])} " \
               f"{self.scalar_subquery(scope, kind, depth)}"

    def scalar_subquery(self, scope: Scope, kind: Kind, depth: int) -> str:
        """A subquery of one row: an aggregate without GROUP BY (correlated or not)."""
        table = self.pick(self.schema.tables)
        alias = self.alias()
        inner = Scope(tuple(Column(f"{alias}.{n}", k) for n, k in table.columns), scope.columns + scope.outer)
        kinds = NUMERIC if kind.numeric else (kind,)
        candidates = inner.of(*kinds)
        if kind.numeric and (not candidates or self.chance(30)):
            value = "count(*)"
        elif candidates:
            function = self.pick(["min", "max"] + (["sum", "avg"] if kind.numeric else []))
            value = f"{function}({self.pick(candidates).ref})"
        else:
            value = f"max({self.literal(kind)})" if kind is not Kind.DATE else "max(DATE '1995-03-15')"
        where = f" WHERE {self.correlation(inner, depth - 1)}" if self.chance(70) else ""
        return f"(SELECT {value} FROM {table.name} AS {alias}{where})"

    def correlation(self, scope: Scope, depth: int) -> str:
        """A predicate tying an inner column to an outer one (or a local one when none fits)."""
        inner = self.pick(list(scope.columns))
        outer = [c for c in scope.outer if (c.kind.numeric and inner.kind.numeric) or c.kind is inner.kind]
        if outer and self.chance(85):
            condition = f"{inner.ref} {self.pick(['=', '=', '<>', '<', '>='])} {self.pick(outer).ref}"
        else:
            condition = self.predicate(Scope(scope.columns), max(depth - 1, 0), subqueries=False)
        if self.chance(30):
            condition += f" AND {self.predicate(Scope(scope.columns), 0, subqueries=False)}"
        return condition

    # -- FROM ---------------------------------------------------------------------------------------

    def relation(self, outer: tuple[Column, ...], depth: int) -> tuple[str, list[Column], str]:
        """A FROM item: its text, its columns and the table it reads (empty for a derived table)."""
        alias = self.alias()
        if depth > 0 and self.chance(15):
            kinds = self.output_kinds()
            inner = self.select(Scope((), ()), kinds, depth - 1)
            names = [f"c{i}" for i in range(len(kinds))]
            return (f"({inner}) AS {alias}({', '.join(names)})",
                    [Column(f"{alias}.{n}", k) for n, k in zip(names, kinds)], "")
        table = self.pick(self.schema.tables)
        return f"{table.name} AS {alias}", [Column(f"{alias}.{n}", k) for n, k in table.columns], table.name

    def join_condition(self, left: list[tuple[list[Column], str]], right: list[Column], right_table: str,
                       depth: int) -> str:
        """An ON condition: a foreign key to its key where the two tables have one, else an
        equality of columns of one kind, sometimes with a further conjunct."""
        pairs = []
        for columns, table in left:
            for a, b in ((table, right_table), (right_table, table)):
                if not a or not b:
                    continue
                for fk in self.schema.table(a).keys.foreign_keys:
                    if fk.references == b:
                        pairs.append((fk.columns, fk.referenced_columns, a == table, columns))
        if pairs and self.chance(75):
            cols, refs, left_is_child, columns = self.pick(pairs)
            left_alias, right_alias = columns[0].ref.split(".")[0], right[0].ref.split(".")[0]
            mine, theirs = (cols, refs) if left_is_child else (refs, cols)
            condition = " AND ".join(f"{left_alias}.{x} = {right_alias}.{y}" for x, y in zip(mine, theirs))
        else:
            everything = [c for columns, _ in left for c in columns]
            matching = [(a, b) for a in everything for b in right
                        if (a.kind.numeric and b.kind.numeric) or a.kind is b.kind]
            if not matching:
                return "TRUE"
            a, b = self.pick(matching)
            condition = f"{a.ref} {self.pick(['=', '=', '=', '<', '<>'])} {b.ref}"
        if self.chance(25):
            both = Scope(tuple(c for columns, _ in left for c in columns) + tuple(right))
            condition += f" AND {self.predicate(both, 1, subqueries=False)}"
        return condition

    def from_clause(self, outer: tuple[Column, ...], depth: int) -> tuple[str, list[Column]]:
        text, columns, table = self.relation(outer, depth)
        parts: list[tuple[list[Column], str]] = [(columns, table)]
        joins = self.draw(st.integers(0, 2))
        for index in range(joins):
            # a comma binds looser than JOIN: in "a, b JOIN c ON ..." the ON cannot read a, so a
            # comma comes last only
            kind = self.pick(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"]
                             + ([","] if index == joins - 1 else []))
            right_text, right, right_table = self.relation(outer, depth)
            if kind in (",", "CROSS JOIN"):
                text += f"{kind if kind == ',' else ' ' + kind} {right_text}"
            else:
                text += f" {kind} {right_text} ON {self.join_condition(parts, right, right_table, depth)}"
            parts.append((right, right_table))
        return text, [c for columns, _ in parts for c in columns]

    # -- SELECT -------------------------------------------------------------------------------------

    def select(self, context: Scope, kinds: list[Kind] | None, depth: int, correlate: bool = False) -> str:
        """A SELECT whose output has ``kinds`` (any when None). ``context`` holds the columns of
        the enclosing queries, which a correlated subquery reads."""
        outer = context.columns + context.outer
        source, columns = self.from_clause(outer, depth)
        scope = Scope(tuple(columns), outer if correlate or self.chance(20) else ())
        conditions = []
        if correlate and outer:
            conditions.append(self.correlation(scope, depth))
        if self.chance(60):
            conditions.append(self.predicate(scope, min(depth, 2)))
        where = f" WHERE {' AND '.join(f'({c})' for c in conditions)}" if conditions else ""
        local = Scope(tuple(columns))
        wanted = kinds or [self.pick([c.kind for c in columns]) for _ in range(self.draw(st.integers(1, 3)))]
        if self.chance(30):
            keys = [self.pick(columns) for _ in range(self.draw(st.integers(1, 2)))]
            items = [self.grouped_item(local, keys, k) for k in wanted]
            having = f" HAVING {self.having(local, keys)}" if self.chance(35) else ""
            group = f" GROUP BY {', '.join(dict.fromkeys(k.ref for k in keys))}{having}"
        else:
            items = [self.expr(scope, k, 2) for k in wanted]
            group = ""
        distinct = "DISTINCT " if self.chance(15) else ""
        outputs = ", ".join(f"{item} AS c{i}" for i, item in enumerate(items))
        return f"SELECT {distinct}{outputs} FROM {source}{where}{group}"

    def grouped_item(self, scope: Scope, keys: list[Column], kind: Kind) -> str:
        fitting = [k for k in keys if (k.kind.numeric and kind.numeric) or k.kind is kind]
        if fitting and self.chance(50):
            return self.pick(fitting).ref
        return self.aggregate(scope, kind)

    def aggregate(self, scope: Scope, kind: Kind) -> str:
        if kind.numeric and self.chance(35):
            column = self.column(scope, tuple(Kind))
            distinct = "DISTINCT " if self.chance(30) else ""
            return "count(*)" if column is None or self.chance(40) else f"count({distinct}{column})"
        candidates = [c for c in scope.columns if (c.kind.numeric and kind.numeric) or c.kind is kind]
        if not candidates:
            return f"max({self.literal(kind)})" if kind is not Kind.DATE else "max(DATE '1995-03-15')"
        column = self.pick(candidates).ref
        functions = ["min", "max"] + (["sum", "avg"] if kind.numeric else [])
        argument = column if self.chance(80) else self.expr(scope, kind, 1)
        return f"{self.pick(functions)}({'DISTINCT ' if self.chance(15) else ''}{argument})"

    def having(self, scope: Scope, keys: list[Column]) -> str:
        kind = self.pick([Kind.INT, Kind.DECIMAL, Kind.TEXT, Kind.DATE])
        left = self.aggregate(scope, kind)
        right = self.literal(kind) if self.chance(60) else self.aggregate(scope, kind)
        return f"{left} {self.pick(['=', '<>', '<', '>='])} {right}"

    def query(self, depth: int = 2) -> str:
        """A whole query: a SELECT, or a set operation of two with the same output kinds, then
        perhaps ORDER BY every output column and LIMIT/OFFSET."""
        wanted = self.output_kinds()
        first = self.select(Scope(()), wanted, depth)
        text = first
        if self.chance(20):
            second = self.select(Scope(()), wanted, depth)
            operation = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"])
            text = f"({first}) {operation} ({second})"
        if self.chance(30):
            order = ", ".join(f"{i} {self.pick(['ASC', 'DESC'])} NULLS {self.pick(['FIRST', 'LAST'])}"
                              for i in range(1, len(wanted) + 1))
            text += f" ORDER BY {order}"
            if self.chance(60):
                text += f" LIMIT {self.pick(['0', '1', '2', '5'])}"
                if self.chance(30):
                    text += f" OFFSET {self.pick(['0', '1', '3'])}"
        return text


@st.composite
def fuzz_queries(draw, schema: Schema):
    """A random valid query over ``schema`` (see the module's docstring)."""
    return Generator(draw, schema).query(draw(st.integers(1, 3)))
