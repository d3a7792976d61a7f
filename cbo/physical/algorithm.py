"""The ways an operator runs on Spark: one member per physical operator.

An algorithm is named once, here; the rules that propose it, what it delivers
(``cbo.memo.delivery``), what it costs (``cbo.cost.model``) and how Spark is told to run it
(``spark_hint``) all key on the member, never on a name. ``label`` is how EXPLAIN, the memo
dump and the plan files show it (``None``: nothing worth showing, the operator runs as itself).
"""

from __future__ import annotations

from enum import Enum


class Algorithm(Enum):
    # value: (label, Spark join hint on the right input, enforcer)
    SCAN = ("scan", None, False)
    FILTER = ("filter", None, False)
    PROJECT = ("project", None, False)
    VALUES = ("values", None, False)
    SET_OP = ("set_op", None, False)
    LIMIT = ("limit", None, False)
    GLOBAL_SORT = ("global_sort", None, False)
    # ORDER BY ... LIMIT k: each partition keeps its k best rows, one task merges them (Spark's
    # TakeOrderedAndProject); no range shuffle, no full sort.
    TOP_N = ("top_n", None, False)
    BROADCAST_HASH_JOIN = ("broadcast_hash", "broadcast", False)
    SHUFFLED_HASH_JOIN = ("shuffle_hash", "shuffle_hash", False)
    SORT_MERGE_JOIN = ("sort_merge", "merge", False)
    BROADCAST_NESTED_LOOP_JOIN = ("broadcast_nested_loop", "broadcast", False)
    # single-column NOT IN: the right side broadcast as a hash table that also records whether
    # it is empty and whether it holds a NULL (Spark's BroadcastHashJoin LeftAnti with
    # isNullAwareAntiJoin). Spark chooses it itself for NOT IN (subquery): no hint.
    NULL_AWARE_BROADCAST_HASH_JOIN = ("null_aware_broadcast_hash", None, False)
    # a join with a one-row input run as that input computed once, a value in the other side's
    # expressions (Spark's ScalarSubquery): no broadcast, no nested loop
    SCALAR_SUBQUERY = ("scalar_subquery", None, False)
    # partial aggregation per partition, an exchange on the grouping columns, final aggregation
    HASH_AGGREGATE = ("partial_final", None, False)
    # the final aggregation alone, over input already clustered on the grouping columns
    FINAL_AGGREGATE = ("final_only", None, False)
    # window functions over input clustered on the partition columns and sorted within each
    # partition (Spark's WindowExec; the exchange and sort are enforcers below it)
    WINDOW = ("window", None, False)
    # a filter keeping ranks <= k over a window, run as Spark's WindowGroupLimit: each task
    # sorts its rows and keeps each partition's first k, only those are shuffled, sorted and cut
    # to k again, then the window and the filter run (cbo.memo.rules.window_top_k)
    WINDOW_TOP_K = ("window_group_limit", None, False)
    # the same over input already clustered and sorted as the window reads it: no exchange
    WINDOW_TOP_K_SORTED = ("window_group_limit_sorted", None, False)
    # grouping sets: each row copied once per set with the keys it rolls up NULL (Spark's
    # Expand), then one partial aggregation, an exchange and a final one, grouped by the keys
    # and the set's number
    EXPAND_AGGREGATE = ("expand", None, False)
    # grouping sets: one aggregation per set over the input (computed once, its exchange
    # reused), the results stacked by a union
    UNION_AGGREGATE = ("union_of_aggregations", None, False)
    # a subplan of one JDBC source run there as one query (cbo.memo.rules.jdbc_pushdown): the
    # operator's logical node is the whole pushed subplan, which has no memo inputs
    REMOTE_QUERY = ("remote_query", None, False)
    # a CTE computed once (its anchor: the producer's rows stored, then the body run) and a
    # read of the stored rows (its consumer); on Spark a persisted DataFrame read through a view
    SHARED_SUBPLAN = ("computed_once", None, False)
    CTE_SCAN = ("cte_read", None, False)
    # enforcers: what the search puts between an operator and an input that does not deliver
    # what the operator requires (where Spark's EnsureRequirements puts exchanges and sorts)
    SHUFFLE = ("shuffle", None, True)
    BROADCAST = ("broadcast", None, True)
    GATHER = ("gather", None, True)
    LOCAL_SORT = ("sort", None, True)

    def __init__(self, label: str, spark_hint: str | None, enforcer: bool):
        self.label = label
        self.spark_hint = spark_hint
        self.enforcer = enforcer

    @property
    def shown(self) -> str | None:
        """The strategy EXPLAIN shows for an operator (operators that run as themselves show none)."""
        return None if self in _PLAIN else self.label


_PLAIN = frozenset({Algorithm.SCAN, Algorithm.FILTER, Algorithm.PROJECT, Algorithm.VALUES, Algorithm.SET_OP,
                    Algorithm.LIMIT})

JOIN_ALGORITHMS = (Algorithm.BROADCAST_HASH_JOIN, Algorithm.SHUFFLED_HASH_JOIN, Algorithm.SORT_MERGE_JOIN,
                   Algorithm.BROADCAST_NESTED_LOOP_JOIN, Algorithm.SCALAR_SUBQUERY,
                   Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN)
