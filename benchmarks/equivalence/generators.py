"""The random cases of each equivalence family: hypothesis strategies drawing a query over small
tables of two nullable integer columns, and the functions that force a family's alternatives out
of the memo. Shared by the property tests (derandomized, small counts) and by
``python -m benchmarks.equivalence`` (fresh cases, large counts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

from hypothesis import strategies as st

from cbo.ir.operators import Join, Plan
from cbo.memo.memo import Group, group_of

# -- decorrelation: tests/quick/test_random_subqueries.py ---------------------------------------

SUBQUERY_TABLES = {"t1": ("a", "b"), "t2": ("c", "d"), "t3": ("e", "f")}

subquery_rows = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 4)),
                                   st.one_of(st.none(), st.integers(0, 4))), max_size=7)
subquery_tables = st.fixed_dictionaries({name: subquery_rows for name in SUBQUERY_TABLES})


def _correlated_filter(inner: str, outer_col: str, draw) -> str:  # type: ignore[no-untyped-def]
    first, second = SUBQUERY_TABLES[inner]
    choice = draw(st.sampled_from(["eq", "lt", "none", "local", "both"]))
    if choice == "eq":
        return f" where {inner}.{second} = {outer_col}"
    if choice == "lt":
        return f" where {inner}.{second} < {outer_col}"
    if choice == "local":
        return f" where {inner}.{second} > 1"
    if choice == "both":
        return f" where {inner}.{first} = {outer_col} and {inner}.{second} is not null"
    return ""


@st.composite
def subquery_predicates(draw, outer: str = "t1", depth: int = 0):  # type: ignore[no-untyped-def]
    a, b = SUBQUERY_TABLES[outer]
    inner = draw(st.sampled_from([t for t in SUBQUERY_TABLES if t != outer]))
    x, y = SUBQUERY_TABLES[inner]
    outer_col = f"{outer}.{draw(st.sampled_from([a, b]))}"
    where = _correlated_filter(inner, outer_col, draw)
    kind = draw(st.sampled_from(["cmp", "null", "in", "not_in", "exists", "not_exists", "any", "all",
                                 "scalar_agg", "scalar_count", "scalar_plain", "and", "or", "not"]))
    if kind == "cmp":
        return f"{outer}.{a} {draw(st.sampled_from(['=', '<', '<>', '>=']))} {draw(st.integers(0, 4))}"
    if kind == "null":
        return f"{outer}.{b} is {draw(st.sampled_from(['', 'not ']))}null"
    if kind == "in":
        return f"{outer}.{a} in (select {inner}.{x} from {inner}{where})"
    if kind == "not_in":
        return f"{outer}.{a} not in (select {inner}.{x} from {inner}{where})"
    if kind == "exists":
        return f"exists (select * from {inner}{where})"
    if kind == "not_exists":
        return f"not exists (select * from {inner}{where})"
    if kind in ("any", "all"):
        op = draw(st.sampled_from(["=", "<", ">=", "<>"]))
        return f"{outer}.{b} {op} {kind} (select {inner}.{x} from {inner}{where})"
    if kind == "scalar_agg":
        agg = draw(st.sampled_from(["max", "min", "sum", "avg"]))
        return f"{outer}.{b} {draw(st.sampled_from(['<', '=', '>']))} (select {agg}({inner}.{x}) from {inner}{where})"
    if kind == "scalar_count":
        return f"{outer}.{a} = (select count(*) from {inner}{where})"
    if kind == "scalar_plain":
        return f"{outer}.{a} = (select {inner}.{x} from {inner}{where})"
    if depth >= 2:
        return f"{outer}.{a} is not null"
    left = draw(subquery_predicates(outer, depth + 1))
    if kind == "not":
        return f"not ({left})"
    right = draw(subquery_predicates(outer, depth + 1))
    return f"({left}) {kind} ({right})"


@st.composite
def subquery_queries(draw):  # type: ignore[no-untyped-def]
    """IN, NOT IN, EXISTS, NOT EXISTS, ANY, ALL and scalar subqueries (correlated by equality and
    inequality, uncorrelated) under AND, OR and NOT, in WHERE and SELECT, over several joins."""
    shape = draw(st.sampled_from(["single", "inner", "left", "full", "comma"]))
    if shape == "single":
        source = "t1"
    elif shape == "comma":
        source = "t1, t3"
    else:
        join = {"inner": "join", "left": "left join", "full": "full join"}[shape]
        source = f"t1 {join} t3 on t1.a = t3.e"
    where = draw(subquery_predicates())
    select = draw(st.sampled_from([
        "t1.a, t1.b",
        "t1.b, count(*)",
        "t1.a, t1.b in (select t2.c from t2) as flag",
        "t1.a, (select count(*) from t2 where t2.c = t1.a) as n",
        "t1.a, exists (select * from t2 where t2.d = t1.b) as e",
    ]))
    group = " group by t1.b" if "count(*)" in select and "select" not in select else ""
    if shape != "single" and group == "":
        select = select + ", t3.f"
    return f"select {select} from {source} where {where}{group}"


# -- join reordering: tests/quick/test_memo_equivalence.py ---------------------------------------

JOIN_TABLES = [f"t{i}" for i in range(6)]
small_values = st.one_of(st.none(), st.integers(0, 3))
table_rows = st.lists(st.tuples(small_values, small_values), max_size=6)


@st.composite
def join_queries(draw):  # type: ignore[no-untyped-def]
    """Join graphs (chains, trees, cycles; inner and left joins in FROM, EXISTS and NOT EXISTS in
    WHERE; equalities, inequalities and predicates over three tables)."""
    count = draw(st.integers(2, 6))
    visible = ["t0"]            # tables whose columns the query may read (inner and left joins)
    joins, where = [], []
    for index in range(1, count):
        table = JOIN_TABLES[index]
        kind = draw(st.sampled_from(["inner"] * 5 + ["left", "exists", "not exists"]))
        partner = draw(st.sampled_from(visible))
        x, y = draw(st.sampled_from("ab")), draw(st.sampled_from("ab"))
        condition = [f"{table}.{x} = {partner}.{y}"]
        extra = draw(st.sampled_from(["", "", "lt", "three"]))
        if extra == "lt":
            condition.append(f"{table}.{'b' if x == 'a' else 'a'} < {partner}.{'b' if y == 'a' else 'a'}")
        elif extra == "three" and len(visible) > 1:
            other = draw(st.sampled_from([t for t in visible if t != partner]))
            condition.append(f"{table}.b + {partner}.a >= {other}.b")
        text = " and ".join(condition)
        if kind in ("inner", "left"):
            joins.append(f"{'join' if kind == 'inner' else 'left join'} {table} on {text}")
            visible.append(table)
        else:
            where.append(f"{kind} (select * from {table} where {text})")
    if len(visible) > 2 and draw(st.booleans()):
        a, b = draw(st.sampled_from(visible)), draw(st.sampled_from(visible))
        if a != b:
            where.append(f"{a}.a = {b}.b")                   # closes a cycle
    if draw(st.integers(0, 4)) == 0:
        where.append(f"{draw(st.sampled_from(visible))}.b is null")
    columns = ", ".join(f"{t}.a, {t}.b" for t in visible)
    sql = f"select {columns} from t0 " + " ".join(joins)
    if where:
        sql += " where " + " and ".join(where)
    return sql


# -- semi join forms: tests/quick/test_semijoin_rewrites.py --------------------------------------

ABOVE, BELOW = "SemiJoinToInnerDistinctAbove", "SemiJoinToInnerDistinctBelow"
SEMIJOIN_FORMS: dict[str, str | None] = {"3.1": ABOVE, "3.2": BELOW, "3.3": None}


@st.composite
def existential_queries(draw):  # type: ignore[no-untyped-def]
    """A query whose WHERE holds an IN or EXISTS, in one of four contexts."""
    context = draw(st.sampled_from(["plain", "inner", "left", "semi"]))
    x, y = draw(st.sampled_from("ab")), draw(st.sampled_from("ab"))
    correlated = draw(st.booleans())
    extra = draw(st.sampled_from(["", "", "lt", "filter"]))
    outer = "t1" if context == "inner" and draw(st.booleans()) else "t0"

    def existential(target: str, sub: str) -> str:
        other = "b" if x == "a" else "a"
        if correlated:
            condition = [f"{sub}.{y} = {target}.{x}"]
            if extra == "lt":
                condition.append(f"{sub}.{other} < {target}.{other}")
            elif extra == "filter":
                condition.append(f"{sub}.{other} >= 1")
            return f"exists (select * from {sub} where {' and '.join(condition)})"
        where = f" where {sub}.{other} >= 1" if extra == "filter" else ""
        return f"{target}.{x} in (select {sub}.{y} from {sub}{where})"

    if context == "plain":
        return f"select t0.a, t0.b from t0 where {existential('t0', 't2')}"
    if context == "inner":
        return (f"select t0.a, t0.b, t1.a, t1.b from t0 join t1 on t1.a = t0.b "
                f"where {existential(outer, 't2')}")
    if context == "left":
        return (f"select t0.a, t0.b, s.a, s.b from t0 left join "
                f"(select * from t1 where {existential('t1', 't2')}) s on s.b = t0.a")
    return (f"select t0.a, t0.b from t0 where exists "
            f"(select * from t1 where t1.a = t0.a and {existential('t1', 't2')})")


def forced_plan(group: Group, rng: random.Random, prefer: Callable[[Plan, str | None], bool],
                avoid: Collection[str] = (), counted: bool = True) -> tuple[Plan, int]:
    """A plan of ``group`` taking, in every group, an expression ``prefer`` accepts (given the
    expression and the rule that added it) where there is one, never one added by a rule in
    ``avoid``; other choices random. Also how many preferred expressions it uses (0 when not
    ``counted``). The one builder behind every family's forced plans."""
    added = group.memo.added_by
    allowed = [e for e in group.expressions if added.get(e) not in avoid]
    mine = [e for e in allowed if prefer(e, added.get(e))]
    expr = rng.choice(mine or allowed or group.expressions)
    used = 1 if mine and counted else 0
    children = []
    for child in expr.children:
        plan, count = forced_plan(group_of(child), rng, prefer, avoid, counted)
        children.append(plan)
        used += count
    return (expr.with_children(tuple(children)) if children else expr), used


def semijoin_forced_plan(group: Group, rule: str | None, rng: random.Random) -> tuple[Plan, int]:
    """A plan of ``group`` with, in every group, the forced rule's expression where it has one,
    never the other form's (``rule`` None: the semi join, 3.3, whose groups keep their semi
    join); other choices random. Also how many forced expressions it uses."""
    if rule is None:
        return forced_plan(group, rng, lambda e, _: isinstance(e, Join) and e.kind == "semi", {ABOVE, BELOW},
                           counted=False)
    return forced_plan(group, rng, lambda _, by: by == rule, {ABOVE, BELOW} - {rule})


# -- eager aggregation: tests/quick/test_eager_aggregation.py ------------------------------------

EAGER_RULE = "EagerAggregation"
AGGREGATES = ("sum({s}.b)", "count({s}.b)", "count(*)", "min({s}.a)", "max({s}.b)", "min(distinct {s}.b)",
              "sum({s}.b + 1)", "count({s}.a)")


@st.composite
def aggregate_queries(draw):  # type: ignore[no-untyped-def]
    """A grouped aggregation over an inner join, in one of several contexts."""
    three = draw(st.booleans())
    side = draw(st.sampled_from(["t0", "t1"]))   # the side the aggregates read
    calls = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
    grouping = draw(st.sampled_from(["t0.a", "t1.b", "t0.a, t1.b", "t0.a + t0.b", "t1.a"]))
    condition = draw(st.sampled_from(["t1.a = t0.b", "t1.a = t0.b and t1.b <> t0.a", "t1.a = t0.b and t1.b > 0"]))
    joins = f"t0 join t1 on {condition}"
    if three:
        joins += " join t2 on t2.a = t1.b"
    existential = draw(st.sampled_from(["", "", "exists", "not exists"]))
    where = f" where {existential} (select * from t3 where t3.a = t0.a)" if existential else ""
    keys = [f"{g.strip()} as k{i}" for i, g in enumerate(grouping.split(","))]
    select = ", ".join(keys + [f"{c.format(s=side)} as v{i}" for i, c in enumerate(calls)])
    query = f"select {select} from {joins}{where} group by {grouping}"
    context = draw(st.sampled_from(["plain", "plain", "left", "semi"]))
    if context == "left":
        return f"select t3.a, t3.b, g.* from t3 left join ({query}) g on g.k0 = t3.a"
    if context == "semi":
        inner = f"select {calls[0].format(s=side)} from {joins}{where} group by {grouping}"
        return f"select t3.a, t3.b from t3 where t3.b in ({inner})"
    return query


def eager_forced_plan(group: Group, rng: random.Random) -> tuple[Plan, int]:
    """A plan of ``group`` with the rule's expression wherever a group has one, other choices
    random; also how many of the rule's expressions it uses."""
    return forced_plan(group, rng, lambda _, by: by == EAGER_RULE)


# -- table pushdown: tests/quick/test_table_pushdown.py ------------------------------------------

@st.composite
def table_pushdown_queries(draw):  # type: ignore[no-untyped-def]
    """A GROUP BY subquery joined with a derived table unique (or not) on its join key."""
    aggregates = draw(st.lists(st.sampled_from(["count(*)", "sum(b)", "min(b)", "max(b)", "count(b)",
                                                "count(distinct b)"]), min_size=1, max_size=3, unique=True))
    where = draw(st.sampled_from(["", " where b is not null", " where a > 0", " where b < 3"]))
    two_keys = draw(st.booleans())
    keys = "a, b" if two_keys else "a"
    inner = f"select {keys}, " + ", ".join(f"{f} as x{i}" for i, f in enumerate(aggregates)) + \
            f" from t1{where} group by {keys}"
    unique = draw(st.booleans())
    if unique:
        outer = ("select a as k, b as k2, count(*) as m from t0 group by a, b" if two_keys
                 else "select a as k, max(b) as m from t0 group by a")
    else:
        outer = "select a as k, b as k2, b as m from t0" if two_keys else "select a as k, b as m from t0"
    on = "g.a = u.k" + (" and g.b = u.k2" if two_keys else "")
    extra = draw(st.sampled_from(["", " and g.x0 > u.m", " and u.m is not null"]))
    third = draw(st.booleans())
    join_third = " join t2 on t2.a = u.k" if third else ""
    columns = "u.k, u.m, g.x0" + (", t2.b" if third else "")
    if draw(st.booleans()) and not two_keys and aggregates[0] != "count(*)" and not third:
        # the correlated form: a scalar subquery per outer row, decorrelated into the same join
        return (f"select u.k, u.m from ({outer}) u where u.m < "
                f"(select {aggregates[0].replace('b', 't1.b')} from t1 where t1.a = u.k)")
    return f"select {columns} from ({inner}) g join ({outer}) u on {on}{extra}{join_third}"


def pushed_first(group: Group, rng: random.Random) -> Plan:
    """A plan of the memo that goes through the pushed form wherever one exists (a non-join
    expression in a join's group); elsewhere a random expression."""
    pushed = [e for e in group.expressions if isinstance(group.first, Join) and not isinstance(e, Join)]
    expr = pushed[0] if pushed else rng.choice(group.expressions)
    children = tuple(pushed_first(group_of(child), rng) for child in expr.children)
    return expr.with_children(children) if children else expr


def pushed_forms(root: Group) -> int:
    """How many pushed forms (a non-join expression in a join's group) the memo holds."""
    return sum(1 for g in root.memo.groups if isinstance(g.first, Join)
               for e in g.expressions if not isinstance(e, Join))


# -- windows: the windows family ------------------------------------------------------------------

# Functions whose value depends only on the partition and the order's peers (any order will do)
# and those that read the rows' positions (the order must tell apart every two rows that are
# not equal, which ordering by every column of the window's input does: rows it ties are equal,
# and numbering them either way gives the same rows).
PEER_WINDOW_FUNCTIONS = ("rank()", "dense_rank()", "percent_rank()", "cume_dist()", "sum({b})", "count(*)",
                         "count({b})", "min({b})", "max({a})", "avg({b})", "stddev_samp({b})")
POSITION_WINDOW_FUNCTIONS = ("row_number()", "ntile(2)", "lag({b})", "lead({b}, 2, -1)", "first_value({b})",
                             "last_value({a})", "sum({b})", "count({b})", "max({b})")
FRAMES = ("", "", "rows between unbounded preceding and current row", "rows between 1 preceding and 1 following",
          "rows between 2 preceding and 1 preceding", "rows between current row and unbounded following",
          "range between 1 preceding and current row", "range between current row and 2 following")


@st.composite
def window_queries(draw):  # type: ignore[no-untyped-def]
    """Windows (ranking, offset, value and aggregate functions; ROWS and RANGE frames; NULL
    orders) over a table, a join or a grouping, alone, under a filter on their partition
    columns or their values (``rank <= k``: a per-partition top-k), or two windows stacked."""
    source = draw(st.sampled_from(["t0", "t0", "join", "group"]))
    if source == "join":
        columns, base = ["t0.a", "t0.b", "t1.b"], "t0 join t1 on t0.a = t1.a"
    elif source == "group":
        columns, base = ["t0.a", "sum(t0.b)", "count(*)"], "t0"
    else:
        columns, base = ["t0.a", "t0.b"], "t0"
    where = draw(st.sampled_from(["", "", " where t0.b is not null", " where t0.a > 0"]))
    group = " group by t0.a" if source == "group" else ""
    a, b = columns[0], columns[1]

    def window() -> str:
        partition = draw(st.sampled_from(["", f"partition by {a}", f"partition by {b}", f"partition by {a}, {b}"]))
        positional = draw(st.booleans())
        nulls = draw(st.sampled_from(["", " nulls first", " nulls last", " desc", " desc nulls last"]))
        if positional:
            function = draw(st.sampled_from(POSITION_WINDOW_FUNCTIONS))
            order = ", ".join(f"{c}{nulls}" for c in columns)   # every column: no two unequal rows tie
        else:
            function = draw(st.sampled_from(PEER_WINDOW_FUNCTIONS))
            order = draw(st.sampled_from(["", f"{b}{nulls}", f"{a}{nulls}, {b}"]))
        frame = ""
        if function.split("(")[0] in ("sum", "count", "min", "max", "avg", "first_value", "last_value") and order:
            frame = draw(st.sampled_from(FRAMES))
            if frame.startswith("range") and "," in order or not positional and frame.startswith("rows") \
                    and frame != FRAMES[2]:
                frame = ""   # RANGE offsets need one key; ROWS frames need a total order
        spec = " ".join(p for p in (partition, f"order by {order}" if order else "", frame) if p)
        return f"{function.format(a=a, b=b)} over ({spec})"

    first = window()
    second = window() if draw(st.booleans()) else None
    select = ", ".join(f"{c} as c{i}" for i, c in enumerate(columns)) + f", {first} as w0" + \
        (f", {second} as w1" if second else "")
    query = f"select {select} from {base}{where}{group}"
    outer = draw(st.sampled_from(["", "", "top", "partition", "value"]))
    if outer == "top":
        k = draw(st.integers(1, 3))
        return (f"select * from (select {', '.join(f'{c} as c{i}' for i, c in enumerate(columns))}, "
                f"{draw(st.sampled_from(['rank()', 'row_number()', 'dense_rank()']))} over "
                f"(partition by {a} order by {', '.join(columns)}) as r from {base}{where}{group}) q "
                f"where r {draw(st.sampled_from(['<=', '<', '=']))} {k}")
    if outer == "partition":
        return f"select * from ({query}) q where q.c0 {draw(st.sampled_from(['=', '>', 'is null and 1 =']))} 1"
    if outer == "value":
        return f"select * from ({query}) q where q.w0 > 1"
    return query


# -- grouping sets: tests/testdata/rules/grouping_sets.test ---------------------------------------

GROUPING_SETS_RULE = "PartialAggregateBelowGroupingSets"
# Aggregates over the grouped rows; {v} is a value column. DISTINCT sum and count and the moments
# keep the partial aggregation out (not decomposable) or in (min/max DISTINCT, avg, moments).
GROUPING_AGGREGATES = ("count(*)", "sum({v})", "count({v})", "min({v})", "max({v})", "avg({v})",
                       "count(distinct {v})", "sum(distinct {v})", "max(distinct {v})", "stddev_samp({v})",
                       "var_pop({v})", "sum({v} * 2 + 1)")
# A few rows at least, so that coarser sets' groups hold several of the finest set's (an empty
# input comes from the WHERE clauses and joins).
grouping_set_rows = st.lists(st.tuples(small_values, small_values), min_size=2, max_size=8)


@st.composite
def grouping_set_queries(draw):  # type: ignore[no-untyped-def]
    """ROLLUP, CUBE and GROUPING SETS (composite items, a plain key beside them, a set listed
    twice, the empty set) over one table or two joined (a left join puts NULLs in the keys),
    with GROUPING() in the select list or HAVING, an empty input now and then, and the result
    used as is or read by an outer query."""
    source = draw(st.sampled_from(["t0", "t0", "t0 join t1 on t1.a = t0.b", "t0 left join t1 on t1.a = t0.a"]))
    columns = ["t0.a", "t0.b", "t0.a + t0.b"] + (["t1.b"] if "t1" in source else [])
    keys = draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3, unique=True))
    k = keys + keys[:1] * (3 - len(keys))   # k[0..2], repeating the first where fewer keys were drawn
    # each form with the positions of k it names
    clause, used = draw(st.sampled_from([
        ("rollup({0}, {1})", (0, 1)), ("cube({0}, {1})", (0, 1)), ("rollup({0}, {1}, {2})", (0, 1, 2)),
        ("grouping sets (({0}, {1}), ({0}), ())", (0, 1)), ("grouping sets (({0}), ({1}))", (0, 1)),
        ("{0}, rollup({1})", (0, 1)), ("rollup(({0}, {1}))", (0, 1)), ("cube({0}, {1}, {2})", (0, 1, 2)),
        ("grouping sets (({0}), ({0}), ({1}, {2}))", (0, 1, 2)), ("rollup({0}), cube({1})", (0, 1)),
        ("grouping sets ((), ())", ()),
    ]))
    clause = clause.format(*k)
    named = list(dict.fromkeys(k[i] for i in used))
    value = draw(st.sampled_from(["t0.b", "t0.a"] + (["t1.a"] if "t1" in source else [])))
    calls = draw(st.lists(st.sampled_from(GROUPING_AGGREGATES), min_size=1, max_size=3, unique=True))
    select = [f"{key} as k{i}" for i, key in enumerate(named)] + \
             [f"{call.format(v=value)} as v{i}" for i, call in enumerate(calls)]
    if named and draw(st.booleans()):
        marked = draw(st.lists(st.sampled_from(named), min_size=1, max_size=2))
        select.append(f"grouping({', '.join(marked)}) as g")
    where = draw(st.sampled_from(["", "", " where t0.a > 0", " where t0.a > 10", " where t0.b is not null"]))
    having = draw(st.sampled_from(["", "", " having count(*) > 1"] +
                                  ([f" having grouping({named[0]}) = 0", f" having grouping({named[-1]}) = 1"]
                                   if named else [])))
    query = f"select {', '.join(select)} from {source}{where} group by {clause}{having}"
    context = draw(st.sampled_from(["plain", "plain", "plain", "outer"]))
    if context == "outer":
        return f"select count(*), sum(v0) from ({query}) g where g.v0 is not null"
    return query


def grouping_sets_forced_plan(group: Group, rng: random.Random, partial: bool) -> tuple[Plan, int]:
    """A plan of ``group`` with the grouping sets over their partial aggregation wherever the
    rule gave one (``partial``), or never (not ``partial``); other choices random. Also how many
    of the rule's expressions it uses."""
    if partial:
        return forced_plan(group, rng, lambda _, by: by == GROUPING_SETS_RULE)
    return forced_plan(group, rng, lambda _, by: False, {GROUPING_SETS_RULE}, counted=False)
