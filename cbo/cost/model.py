"""The cost of a physical alternative on Spark, from its groups' estimated rows and row widths.

Each operator's cost is a set of quantities (see ``cbo.cost.profile``: bytes scanned, rows
hashed, bytes shuffled, ...) times the profile's constants, so the cost is a predicted runtime
in seconds and calibration is a linear fit. Work done by an exchange is charged to the enforcer
the search puts where Spark puts its exchange (``enforcer``), not to the operator needing it;
exchanges an operator always does itself (the shuffle between a partial and a final
aggregation, the range shuffle of a global sort) are part of that operator.

A cost depends only on the expression's own operator and its input and output groups' logical
properties, never on the plans chosen below: that is what lets the search cost an alternative
before optimizing its inputs and prune it when the local cost alone exceeds the bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from cbo.connectors import by_dialect
from cbo.cost.profile import CostProfile, default_profile
from cbo.ir.dispatch import OperatorTable
from cbo.ir.expressions import Column
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
)
from cbo.ir.windows import BoundKind
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import Required
from cbo.physical.remote_work import remote_work

BHJ, SHJ = Algorithm.BROADCAST_HASH_JOIN, Algorithm.SHUFFLED_HASH_JOIN
SMJ, BNLJ = Algorithm.SORT_MERGE_JOIN, Algorithm.BROADCAST_NESTED_LOOP_JOIN
SCALAR = Algorithm.SCALAR_SUBQUERY
# A null-aware broadcast hash join probes as a broadcast hash join does (its NULL and emptiness
# checks are flags kept while building the table): the same quantities.
NAAJ = Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN
REMOTE = Algorithm.REMOTE_QUERY

Size = tuple[float, float]   # (estimated rows, bytes per row)
Quantities = dict[str, float]


def _add(total: Quantities, more: Quantities) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0.0) + value


class CostModel:
    def __init__(self, profile: CostProfile | None = None, remote_tables: frozenset[str] = frozenset(),
                 partitions: int | None = None, column_width: Callable[[Column], float] | None = None,
                 remote_dialects: Mapping[str, str] | None = None):
        self.profile = profile or default_profile()
        self.k = self.profile.constants
        self.remote_tables = remote_tables
        # table -> its JDBC source's dialect: the source reads a table's rows at its rate
        # (remote_row_<dialect>) whether it sends them all or a pushed query's result
        self.remote_dialects = remote_dialects or {}
        self.partitions = partitions or 2 * self.profile.cores * self.profile.executors
        # A column's average width in bytes (the search's, from the statistics): an aggregation
        # hashes and compares its grouping columns' bytes, not the whole row's.
        self.column_width = column_width

    def price(self, quantities: Quantities) -> float:
        k = self.k
        return sum(k[name] * value for name, value in quantities.items())

    def operator_price(self, node: Plan, algorithm: Algorithm, quantities: Quantities, out: Size,
                       inputs: list[Size]) -> float:
        """An operator's cost from its quantities (``local``'s value, given the quantities made
        already: the chosen plan's nodes carry both). A cost function overrides it
        (``cbo.cost.plugin``)."""
        return self.price(quantities)

    def enforcer_price(self, algorithm: Algorithm, quantities: Quantities, size: Size) -> float:
        """An enforcer's cost (a sort or an exchange of rows of ``size``) from its quantities."""
        return self.price(quantities)

    def local(self, node: Plan, algorithm: Algorithm, out: Size, inputs: list[Size]) -> float:
        if algorithm is REMOTE:
            return self.price(self.remote_query(node, out))
        if type(node) is Join and node.kind != "mark":
            return self._join_price(algorithm, out, inputs)
        return self.price(self.quantities(node, algorithm, out, inputs))

    def join_kind_local(self, kind: str, algorithm: Algorithm, out: Size, left: Size, right: Size) -> float:
        """``local`` of a join of ``kind`` run by ``algorithm`` (not a remote query) with inputs of
        sizes ``left`` and ``right`` (the same value): a join's price reads nothing of it but its
        kind, so the implementation rules' floors price a join, made or deferred
        (``cbo.memo.memo.Deferred``, known by its kind and input groups), without an input list."""
        if kind != "mark":
            return self._join_price(algorithm, out, (left, right))
        return self.price(self._join_quantities(kind, algorithm, out, [left, right]))

    def join_floor(self, out: Size, inputs: list[Size]) -> float:
        """The least a join of these sizes can cost itself, whatever its strategy and whichever
        side builds: a lower bound the search can use before implementing the join."""
        # The search asks this of every join the enumeration builds, so it is the least of the
        # strategies' terms beyond the output rows they all pay, added once: the same value as
        # the least of ``_join_price`` over every strategy and side (floating-point addition is
        # monotonic), without pricing each. A shuffled hash join pays its probe side's rows as
        # a broadcast hash join does, plus its build (never negative), so it is never the least.
        # Merge and nested-loop joins cost the same either way round.
        k = self.k
        (left_rows, _), (right_rows, _) = inputs
        fewer = min(left_rows, right_rows)
        least = min(k["hash_probe_row"] * fewer, k["cpu_row"] * (left_rows + right_rows),
                    k["nested_loop_pair"] * left_rows * right_rows, k["nested_loop_pair"] * fewer)
        return k["cpu_row"] * out[0] + least

    def join_floors(self, out: Size, left_rows: list[float], right_rows: list[float]) -> list[float]:
        """``join_floor`` of joins with output ``out`` and these inputs' rows, position by
        position, to the last bit: the search asks it of every join of a group at once (28,501
        in a 10-relation clique), each without a call (``tests/quick/test_physical.py``)."""
        k = self.k
        probe, cpu, pair = k["hash_probe_row"], k["cpu_row"], k["nested_loop_pair"]
        base = cpu * out[0]
        found = []
        for left, right in zip(left_rows, right_rows):
            fewer = right if right < left else left   # (min's choice)
            found.append(base + min(probe * fewer, cpu * (left + right), pair * left * right, pair * fewer))
        return found

    def _join_price(self, algorithm: Algorithm, out: Size, inputs: list[Size] | tuple[Size, Size]) -> float:
        """``price(quantities(join))`` without building the quantities: the search prices tens
        of thousands of join alternatives (a test holds the two equal)."""
        k = self.k
        (left_rows, _), (right_rows, right_width) = inputs
        cost = k["cpu_row"] * out[0]
        if algorithm is BHJ or algorithm is NAAJ:
            return cost + k["hash_probe_row"] * left_rows
        if algorithm is SHJ:
            build_bytes = right_rows * right_width
            cost += (k["hash_build_row"] * right_rows + k["hash_build_byte"] * build_bytes
                     + k["hash_probe_row"] * left_rows)
            per_task = build_bytes / self.partitions
            if per_task > self.profile.task_memory_bytes:
                cost += k["spill_byte"] * 2.0 * (per_task - self.profile.task_memory_bytes) * self.partitions
            return cost
        if algorithm is SMJ:
            return cost + k["cpu_row"] * (left_rows + right_rows)
        if algorithm is BNLJ:
            return cost + k["nested_loop_pair"] * left_rows * right_rows
        if algorithm is SCALAR:
            return cost + k["nested_loop_pair"] * left_rows
        raise ValueError(f"not a join algorithm: {algorithm}")

    # -- operators ---------------------------------------------------------------------------------

    def quantities(self, node: Plan, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        """What ``node`` alone does. ``out`` and ``inputs`` are (rows, bytes per row) of its
        result and of its inputs in the node's order."""
        if algorithm is REMOTE:
            return self.remote_query(node, out)
        return QUANTITIES[node](self, node, algorithm, out, inputs)

    def remote_query(self, node: Plan, out: Size) -> Quantities:
        """A subplan run in its JDBC source as one query (``Algorithm.REMOTE_QUERY``): the rows its
        operators read there, at the dialect's rates (``remote_row_<dialect>``, and
        ``remote_agg_row_<dialect>`` for rows fed to aggregations), one query's latency, and its
        result sent through JDBC into Spark (``jdbc_row``, ``jdbc_byte``, as a table read). The
        connector rule records the remote work on the subplan's root."""
        work = remote_work(node)
        if work is None:
            raise ValueError("a remote query's subplan carries no remote work (made by a connector rule)")
        rows, width = out
        row_rate, agg_rate = self.remote_rates(work.dialect)
        found = {row_rate: work.rows, "remote_query": 1.0, "jdbc_row": rows, "jdbc_byte": rows * width, "task": 1.0}
        if work.aggregated:
            found[agg_rate] = work.aggregated
        return found

    def remote_rates(self, dialect: str) -> tuple[str, str]:
        """The quantities pricing a row read and a row aggregated in a source of ``dialect``
        (its connector's, ``cbo.connectors``; every connector that pushes work has them)."""
        connector = by_dialect(dialect)
        rates = connector.row_quantity, connector.agg_row_quantity
        if any(rate not in self.k for rate in rates):
            raise ValueError(f"the cost profile prices no work in {dialect} sources")
        return rates

    def remote_price(self, dialect: str, rows: float, aggregated: float) -> float:
        """Seconds a source of ``dialect`` works for a pushed subplan (``RemoteWork``'s rows and
        aggregated rows): how the connector rules choose which equivalent form to push."""
        row_rate, agg_rate = self.remote_rates(dialect)
        return self.k[row_rate] * rows + self.k[agg_rate] * aggregated

    def _scan(self, node: Scan, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        rows, width = out
        if node.table in self.remote_tables:
            # one query to the source, as a remote query's (remote_query): reading tables one by
            # one pays it per table, a pushed join once; the source reads every row, as a pushed
            # query's scan does (remote_query's work counts them the same way)
            found = {"jdbc_row": rows, "jdbc_byte": rows * width, "task": float(self.profile.cores),
                     "remote_query": 1.0}
            dialect = self.remote_dialects.get(node.table)
            rate = by_dialect(dialect).row_quantity if dialect is not None else None
            if rate is not None and rate in self.k:   # (a source cbo only reads tables from has no rate)
                found[rate] = rows
            return found
        return {"scan_row": rows, "scan_byte": rows * width, "task": max(1.0, rows * width / (128 * 2**20))}

    def _per_input_row(self, node: Plan, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        if algorithm is Algorithm.WINDOW_TOP_K:
            return self._window_top_k(node, out, inputs)
        if algorithm is Algorithm.WINDOW_TOP_K_SORTED:
            # over input clustered and sorted already: each partition cut to its first k rows,
            # then the window and the filter over those
            assert isinstance(node, Filter) and isinstance(node.input, Window)
            return {"cpu_row": inputs[0][0] + out[0] * (1.0 + window_passes(node.input))}
        return {"cpu_row": inputs[0][0]}

    def _window(self, node: Window, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        """A window over input already clustered and sorted (the exchange and the sort are
        enforcers): each row is buffered with its partition and passes each function once; a
        frame bounded on both sides re-reads its rows for each row (Spark's sliding frame)."""
        rows = inputs[0][0]
        return {"cpu_row": rows * window_passes(node)}

    def _window_top_k(self, node: Plan, out: Size, inputs: list[Size]) -> Quantities:
        """A filter ``rank <= k`` over a window run as Spark's WindowGroupLimit: each input task
        sorts its rows and keeps each partition's first k, so at most k rows of a partition per
        task are shuffled (``out``, the rows the filter keeps, times the tasks, bounds them),
        sorted, and limited to k again; then the window and the filter read what is left."""
        assert isinstance(node, Filter) and isinstance(node.input, Window)
        in_rows, width = inputs[0]
        shuffled = min(in_rows, out[0] * self.partitions)
        # (without partition columns the rows left are gathered into one task)
        found = self.exchange(shuffled, width, None if node.input.partition_by else 1)
        found["sort_row"] = self._comparisons(in_rows) + self._comparisons(shuffled)
        found["cpu_row"] = in_rows + shuffled * (1.0 + window_passes(node.input))
        return found

    def _sort(self, node: Sort, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        in_rows, in_width = inputs[0]
        found = self.exchange(in_rows, in_width)
        found["sort_row"] = self._comparisons(in_rows)
        return found

    def _limit(self, node: Limit, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        if algorithm is Algorithm.TOP_N:
            # each partition selects its best k (Spark: Guava's leastOf, a linear-time select, so
            # about one comparison per row), and the partitions' k rows each are gathered to one
            # task and sorted there
            in_rows, in_width = inputs[0]
            keep = float((node.count or 0) + node.offset)
            gathered = min(in_rows, keep * self.partitions)
            found = self.exchange(gathered, in_width, 1)
            found["sort_row"] = in_rows + gathered * math.log2(max(gathered, 2.0))
            found["cpu_row"] = in_rows
            return found
        return {"cpu_row": min(out[0], inputs[0][0])}

    def _set_op(self, node: SetOp, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        in_rows = sum(r for r, _ in inputs)
        found = {"cpu_row": in_rows}
        if node.distinct or node.kind != "union":
            width = max(w for _, w in inputs)
            _add(found, self.exchange(in_rows, width))
            # grouped by every column: the whole row is the key
            found["agg_row"] = in_rows
            found["agg_byte"] = in_rows * width
        return found

    def _values(self, node: Values, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        return {"cpu_row": out[0]}

    def _cte_anchor(self, node: CteAnchor, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        # The producer's rows written once into memory (Spark's cached relation, a materialized
        # CTE elsewhere): each row encoded, its bytes stored, a job of its own. On Spark the
        # producer is also a plan of its own (a persisted DataFrame, with its own adaptive plan):
        # its stages run as jobs scheduled before the consumers', none overlapping the rest of
        # the query, which is a query's fixed cost once more (TPC-DS q01 runs 11 jobs so,
        # against 7 inlined).
        rows, width = inputs[0]
        return {"cpu_row": rows, "scan_byte": rows * width, "task": float(self.partitions), "query": 1.0}

    def _cte_consumer(self, node: CteConsumer, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        # the stored rows read back: no file to open, no column to decode from Parquet
        rows, width = out
        return {"cpu_row": rows, "scan_byte": rows * width}

    def _join(self, node: Join, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        return self._join_quantities(node.kind, algorithm, out, inputs)

    def _join_quantities(self, kind: str, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        (left_rows, _), (right_rows, right_width) = inputs
        found: Quantities = {"cpu_row": out[0]}
        if algorithm is BHJ or algorithm is NAAJ:
            found["hash_probe_row"] = left_rows
        elif algorithm is SHJ:
            build_bytes = right_rows * right_width
            found["hash_build_row"] = right_rows
            found["hash_build_byte"] = build_bytes
            found["hash_probe_row"] = left_rows
            per_task = build_bytes / self.partitions
            if per_task > self.profile.task_memory_bytes:
                found["spill_byte"] = 2.0 * (per_task - self.profile.task_memory_bytes) * self.partitions
        elif algorithm is SMJ:
            found["cpu_row"] += left_rows + right_rows
        elif algorithm is BNLJ:
            found["nested_loop_pair"] = left_rows * right_rows
        elif algorithm is SCALAR:
            # each row of the other side compared with the one value, as a nested loop would
            # compare it with the one row; the value is computed once (a job of its own, as a
            # broadcast is), and nothing is broadcast
            found["nested_loop_pair"] = left_rows
        else:
            raise ValueError(f"not a join algorithm: {algorithm}")
        if kind == "mark":
            # run as a left join whose rows are grouped back per left row (see exec.spark_exec)
            _add(found, self.exchange(out[0], out[1]))
            found["agg_row"] = found.get("agg_row", 0.0) + out[0]
            found["agg_byte"] = found.get("agg_byte", 0.0) + out[0] * 8.0   # grouped by a bigint row id
        return found

    def _aggregate(self, node: Aggregate, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        in_rows, _ = inputs[0]
        rows, width = out
        key = self.key_width(node, width)
        if algorithm is Algorithm.FINAL_AGGREGATE:
            return {"agg_row": in_rows, "agg_byte": in_rows * key}
        # partial aggregation in each input partition, an exchange of the partial results on the
        # grouping columns (to one partition without them), then the final aggregation
        partial_rows = min(in_rows, rows * self.partitions) if node.group_by else min(in_rows, float(self.partitions))
        found = {"agg_row": in_rows + partial_rows, "agg_byte": (in_rows + partial_rows) * key}
        _add(found, self.exchange(partial_rows, width, self.partitions if node.group_by else 1))
        return found

    def _grouping_sets(self, node: GroupingSets, algorithm: Algorithm, out: Size, inputs: list[Size]) -> Quantities:
        """Grouping sets, as Spark runs them. Expand: every input row copied once per set
        (``cpu_row``), the copies aggregated partially, grouped by the keys and the set's number
        (a key the set rolls up is NULL), the partial results shuffled and aggregated finally.
        Union of aggregations: per set, a partial aggregation of the input, a shuffle and a final
        one; the input is computed once (its exchange reused), and read once per set, each read
        a task per partition. Either way the partial results are at most the input's rows per
        set and at most the output's rows per partition."""
        in_rows, _ = inputs[0]
        rows, width = out
        sets = float(len(node.sets))
        copies = in_rows * sets
        partial_rows = min(copies, rows * self.partitions)
        found = {"cpu_row": copies}   # Expand's copies, or the input read once per set
        if algorithm is Algorithm.UNION_AGGREGATE:
            # each set's aggregation hashes that set's keys only
            hashed = sum(in_rows * self._keys_width(tuple(node.keys[i] for i in s), width) for s in node.sets)
            key = self._keys_width(node.keys, width)
            found["agg_row"] = copies + partial_rows
            found["agg_byte"] = hashed + partial_rows * key
            exchanges = self.exchange(partial_rows, width)
            exchanges["task"] *= sets   # an exchange per set
        else:
            key = self._keys_width(node.keys, width) + 8.0   # every key and the set's number
            found["agg_row"] = copies + partial_rows
            found["agg_byte"] = (copies + partial_rows) * key
            exchanges = self.exchange(partial_rows, width)
        _add(found, exchanges)
        return found

    def _keys_width(self, keys: tuple[Column, ...], width: float) -> float:
        if self.column_width is None:
            return width
        return sum(self.column_width(c) for c in keys)

    def key_width(self, node: Aggregate, width: float) -> float:
        """Bytes per row of the grouping key: each row fed to a hash aggregation has its key
        projected, hashed (Murmur3 over the key's bytes) and compared with the key found in the
        table (and copied in when new), so a DISTINCT over every column of a wide table (the
        DISTINCT above a semi join's inner join, with a long comment column) costs more per row
        than one over an integer.
        Without the search's widths, the output row's width, which holds the key."""
        if self.column_width is None:
            return width
        return sum(self.column_width(c) for c in node.group_by)

    # -- enforcers ---------------------------------------------------------------------------------

    def sort(self, size: Size) -> Quantities:
        """The sort enforcer: order each partition (Spark's ``SortExec`` under a merge join)."""
        return {"sort_row": self._comparisons(size[0])}

    def distribute(self, need: Required, size: Size) -> Quantities:
        """The exchange enforcer delivering ``need``'s distribution: hash shuffle, gather to
        one partition, or broadcast."""
        rows, width = size
        if need.distribution == "broadcast":
            return {"broadcast_row": rows, "broadcast_byte": rows * width * self.profile.executors}
        if need.distribution == "single":
            return self.exchange(rows, width, 1)
        return self.exchange(rows, width)

    def exchange(self, rows: float, width: float, partitions: int | None = None) -> Quantities:
        return {"shuffle_row": rows, "shuffle_byte": rows * width,
                "task": float(partitions if partitions is not None else self.partitions)}

    def _comparisons(self, rows: float) -> float:
        per_partition = max(rows / self.partitions, 2.0)
        return rows * math.log2(per_partition)


# What each operator alone does, by operator (cbo.ir.dispatch); exchanges are the enforcers'.
QUANTITIES: OperatorTable[Callable[..., Quantities]] = OperatorTable("cost")
QUANTITIES.register(Scan)(CostModel._scan)
QUANTITIES.register(Filter, Project)(CostModel._per_input_row)
QUANTITIES.register(Join)(CostModel._join)
QUANTITIES.register(Aggregate)(CostModel._aggregate)
QUANTITIES.register(GroupingSets)(CostModel._grouping_sets)
QUANTITIES.register(Sort)(CostModel._sort)
QUANTITIES.register(Limit)(CostModel._limit)
QUANTITIES.register(SetOp)(CostModel._set_op)
QUANTITIES.register(Values)(CostModel._values)
QUANTITIES.register(CteAnchor)(CostModel._cte_anchor)
QUANTITIES.register(CteConsumer)(CostModel._cte_consumer)
QUANTITIES.register(Window)(CostModel._window)


def window_passes(node: Window) -> float:
    """How many times a window reads each of its rows: once to buffer it, once per function,
    and for a function whose frame does not start at the partition's first row, once per row
    of its frame (Spark's sliding and shrinking frames aggregate each row's frame anew),
    counted up to ``SLIDING_ROWS``."""
    passes = 1.0
    for _, call in node.functions:
        frame = call.frame
        passes += 1.0
        if frame is not None and frame.start.kind is not BoundKind.UNBOUNDED_PRECEDING:
            passes += min(frame.end.position - frame.start.position + 1.0, SLIDING_ROWS)
    return passes


SLIDING_ROWS = 64.0
