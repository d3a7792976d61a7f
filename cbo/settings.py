"""Optimizer settings, named after Presto/Trino's session properties where one exists.

* ``join_reordering_strategy``: ``AUTOMATIC`` (cost-based join order over the join graph) or
  ``NONE`` (joins stay in the written order; the search still picks each join's build side).
* ``max_reordered_joins``: join regions with at most this many relations are enumerated
  exhaustively (every connected bushy tree, DPhyp); larger ones use greedy operator ordering.
* ``max_join_pairs``: a region with more join pairs than this (dense graphs: a clique of 10 has
  28,501, of 12 261,625; a star of 12, 11,264) gets the greedy order too. The pairs are counted
  before anything is built, by the same enumeration run without building plans, which stops at
  the limit. The default, 5,000, keeps the exhaustive search of any region short on the
  reference machine (``benchmarks.join_enumeration`` measures it): a deterministic stand-in for
  a time limit. Estimating a join set from all its leaves makes each group of a dense graph
  dear, which is why the limit is no higher.
* ``max_rule_applications``: the search budget. Each transformation rule application and each
  join pair the enumerator builds counts as one. When it runs out no alternative is added any
  more and the search costs what the memo holds, which always includes the written plan: the
  answer is the best plan found so far. Being a count, it keeps the result deterministic.
* ``search_time_limit_ms``: an optional wall-clock budget with the same fallback; off by
  default because a time budget makes the chosen plan depend on the machine's speed.
* ``disabled_rules``: names of rules not to use (``cbo rules`` lists them).
* ``broadcast_limit_bytes``: the largest estimated build side a broadcast join may take
  (default 64 MiB; Spark's own ``autoBroadcastJoinThreshold`` is 10 MiB of its size estimate,
  which ignores filters). 0 disables broadcast joins.
* ``shuffle_partitions``: the partition count of every shuffle; by default (None) cbo sizes it
  from the bytes the query scans (``CostProfile.partitions``) and Spark runs with that count.
* ``cardinalities``: ``estimated`` (from statistics), ``oracle``: every memo group's row count
  is counted exactly with DuckDB, to see what the plan would be with perfect estimates, or
  ``upper``: pessimistic, every inner-join set estimated by an upper bound from its leaves'
  largest value frequencies (``cbo.estimate.upper_bound``), so that no join is planned as
  smaller than it can be.
  ``file:PATH``: rows per sub-plan read from a file (``cbo subplans`` writes one to fill in);
  a sub-plan the file lacks keeps cbo's estimate, and EXPLAIN's notes say which were used
  (``cbo.estimate.plugin``, [Research](docs/guide/research.md)).
* ``cardinality_distortion``: scale every sub-plan's rows (cbo's, the oracle's or the file's):
  a positive factor (``4``, ``0.25``) or ``lognormal:SIGMA:SEED``, a factor ``exp(N(0, SIGMA))``
  drawn per sub-plan from the seed and the sub-plan's key; off by default.
* ``cost_profile``: a profile file of cost constants (``python -m benchmarks.calibrate`` writes
  one); by default the shipped profile, or ``$CBO_COST_PROFILE``.

The switches of existential subqueries as early-out joins and of table pushdown, named as
Presto names them:

* ``in_predicates_as_inner_joins_enabled``: semi joins (IN, EXISTS) also become inner joins in
  the memo: with a DISTINCT above the join (``SemiJoinToInnerDistinctAbove``) or below it, on
  the filtering side (``SemiJoinToInnerDistinctBelow``), beside the semi join itself; cost
  picks. On by default here (Presto's default is off): the search keeps the semi join, so it
  can only gain.
* ``push_aggregation_below_join_byte_reduction_threshold``: a join is *byte-reducing* when its
  estimated output bytes times this are at most the bytes of its probe side (the filtering
  side B). An aggregation is pushed below a join (the DISTINCT below) only when the join is not
  byte-reducing: 0 never pushes, a very large value always does, and at 1.0 (the default, as
  in Presto's design) a join that outputs more bytes than B gets the DISTINCT below it.
* ``exploit_constraints``: use declared keys (primary keys, UNIQUE) as facts: dropping joins
  that only check a foreign key, and the DISTINCT above on A's key instead of a generated row id.
  Keys proved by the plan itself (a GROUP BY) are used either way by other rules.
* ``push_table_through_subquery``: table pushdown into an aggregation (``PushTableIntoAggregate``), and its
  variant that copies the table instead (``CopyTableIntoAggregate``).
* ``existential_form``: ``AUTOMATIC`` (cost picks among the forms in the memo) or one form
  forced wherever it holds, to measure it: ``SEMI_JOIN`` (the rewrites are off),
  ``DISTINCT_ABOVE`` or ``DISTINCT_BELOW`` (whatever the threshold): in a group
  holding the forced rewrite, the semi join and the other rewrite are not implemented.

Running on Spark:

* ``spark_adaptive``: which parts of Spark's adaptive query execution (AQE) stay on while cbo's
  plan runs: ``off`` (AQE off), ``preserving`` (the default: every part that keeps cbo's join
  order and strategies) or features joined by ``+``: ``coalesce`` (merge small shuffle
  partitions), ``skew_join`` (split skewed partitions of a shuffled join), ``local_read`` (read a
  shuffle locally where its partitioning is not needed) and ``empty_relation`` (drop work whose
  result a finished stage proves empty). What each does and why it keeps the plan:
  ``cbo.exec.spark_adaptive``.

JDBC pushdown (Presto's JDBC join pushdown, RFC-0004, and Trino's names):

* ``enable_join_query_pushdown``: subplans with joins may run in their JDBC source as one
  query (a remote-query alternative in the memo). Off, only single-table subplans (filters,
  projections, aggregations, top-N) are offered to the source.
* ``join_pushdown_strategy``: ``AUTOMATIC`` (cost picks between the remote query and reading
  the inputs to work in Spark), ``EAGER`` (push whenever the source can evaluate the subplan,
  the RFC's behaviour) or ``NONE`` (only the per-table fold of filters and projections into
  the table's read).

Common table expressions (Orca's producer and consumers, El-Helw et al., VLDB 2015):

* ``cte_strategy``: for a CTE the query names more than once, ``AUTOMATIC`` (the memo holds it
  computed once, its references reading the result, and inlined at each reference
  (``InlineCte``); cost picks), ``INLINE`` (every reference is the CTE's own copy, as a view
  is expanded) or ``SHARE`` (always computed once).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from cbo.errors import CboError

STRATEGIES = ("AUTOMATIC", "NONE")
BOOLEANS = ("in_predicates_as_inner_joins_enabled", "exploit_constraints", "push_table_through_subquery",
            "enable_join_query_pushdown")
CARDINALITIES = ("estimated", "oracle", "upper")
JOIN_PUSHDOWN_STRATEGIES = ("AUTOMATIC", "EAGER", "NONE")
EXISTENTIAL_FORMS = ("AUTOMATIC", "SEMI_JOIN", "DISTINCT_ABOVE", "DISTINCT_BELOW")


class CteStrategy(Enum):
    """What becomes of a CTE the query names more than once (``cte_strategy``)."""

    AUTOMATIC = "AUTOMATIC"   # computed once and inlined, both in the memo: cost picks
    INLINE = "INLINE"         # every reference the CTE's own copy, as a view is expanded
    SHARE = "SHARE"           # always computed once


class AdaptiveFeature(Enum):
    """A part of Spark's adaptive query execution that can run under cbo's plan without changing
    its join order or join strategies (``cbo.exec.spark_adaptive`` maps each to Spark's settings)."""

    COALESCE = "coalesce"                # merge small post-shuffle partitions
    SKEW_JOIN = "skew_join"              # split a shuffled join's skewed partitions
    LOCAL_READ = "local_read"            # read a shuffle map-side where its partitioning is unused
    EMPTY_RELATION = "empty_relation"    # replace work a finished stage proves empty


# ``spark_adaptive=preserving``: every feature, since none of them changes cbo's joins.
PRESERVING = frozenset(AdaptiveFeature)
ADAPTIVE_OFF = frozenset[AdaptiveFeature]()


@dataclass(frozen=True)
class OptimizerSettings:
    join_reordering_strategy: str = "AUTOMATIC"
    max_reordered_joins: int = 12
    max_join_pairs: int = 5_000
    max_rule_applications: int = 500_000
    search_time_limit_ms: float | None = None
    disabled_rules: frozenset[str] = field(default_factory=frozenset)
    broadcast_limit_bytes: int = 64 * 2**20
    shuffle_partitions: int | None = None
    cardinalities: str = "estimated"
    cardinality_distortion: str | None = None
    cost_profile: str | None = None
    in_predicates_as_inner_joins_enabled: bool = True
    push_aggregation_below_join_byte_reduction_threshold: float = 1.0
    exploit_constraints: bool = True
    push_table_through_subquery: bool = True
    existential_form: str = "AUTOMATIC"
    enable_join_query_pushdown: bool = True
    join_pushdown_strategy: str = "AUTOMATIC"
    cte_strategy: CteStrategy = CteStrategy.AUTOMATIC
    spark_adaptive: frozenset[AdaptiveFeature] = PRESERVING

    def __post_init__(self) -> None:
        strategy = str(self.join_reordering_strategy).upper()
        if strategy not in STRATEGIES:
            raise CboError(f"join_reordering_strategy must be one of {', '.join(STRATEGIES)}, "
                           f"not {self.join_reordering_strategy!r}")
        object.__setattr__(self, "join_reordering_strategy", strategy)
        for name in ("max_reordered_joins", "max_join_pairs", "max_rule_applications"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise CboError(f"{name} must be a positive integer, not {value!r}")
        if self.search_time_limit_ms is not None and not self.search_time_limit_ms > 0:
            raise CboError(f"search_time_limit_ms must be positive, not {self.search_time_limit_ms!r}")
        object.__setattr__(self, "disabled_rules", frozenset(self.disabled_rules))
        if not isinstance(self.broadcast_limit_bytes, int) or self.broadcast_limit_bytes < 0:
            raise CboError(f"broadcast_limit_bytes must be a non-negative integer, not {self.broadcast_limit_bytes!r}")
        if self.shuffle_partitions is not None and (not isinstance(self.shuffle_partitions, int)
                                                    or self.shuffle_partitions < 1):
            raise CboError(f"shuffle_partitions must be a positive integer, not {self.shuffle_partitions!r}")
        cardinalities = str(self.cardinalities)
        if cardinalities[:5].lower() == "file:":
            if not cardinalities[5:].strip():
                raise CboError("cardinalities=file:PATH needs a path after file:")
            cardinalities = "file:" + cardinalities[5:].strip()
        elif cardinalities.lower() not in CARDINALITIES:
            raise CboError(f"cardinalities must be one of {', '.join(CARDINALITIES)} or file:PATH, "
                           f"not {self.cardinalities!r}")
        else:
            cardinalities = cardinalities.lower()
        object.__setattr__(self, "cardinalities", cardinalities)
        if self.cardinality_distortion is not None:
            parse_distortion(str(self.cardinality_distortion))   # a clear error now, not at the first plan
        form = str(self.existential_form).upper()
        if form not in EXISTENTIAL_FORMS:
            raise CboError(f"existential_form must be one of {', '.join(EXISTENTIAL_FORMS)}, "
                           f"not {self.existential_form!r}")
        object.__setattr__(self, "existential_form", form)
        pushdown = str(self.join_pushdown_strategy).upper()
        if pushdown not in JOIN_PUSHDOWN_STRATEGIES:
            raise CboError(f"join_pushdown_strategy must be one of {', '.join(JOIN_PUSHDOWN_STRATEGIES)}, "
                           f"not {self.join_pushdown_strategy!r}")
        object.__setattr__(self, "join_pushdown_strategy", pushdown)
        threshold = self.push_aggregation_below_join_byte_reduction_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold >= 0:
            raise CboError("push_aggregation_below_join_byte_reduction_threshold must be a non-negative number, "
                           f"not {threshold!r}")
        if not isinstance(self.cte_strategy, CteStrategy):
            try:
                cte = CteStrategy(str(self.cte_strategy).strip().upper())
            except ValueError:
                raise CboError(f"cte_strategy must be one of {', '.join(s.value for s in CteStrategy)}, "
                               f"not {self.cte_strategy!r}") from None
            object.__setattr__(self, "cte_strategy", cte)
        object.__setattr__(self, "spark_adaptive", adaptive_features(self.spark_adaptive))
        for name in BOOLEANS:
            if not isinstance(getattr(self, name), bool):
                raise CboError(f"{name} must be true or false, not {getattr(self, name)!r}")

    @property
    def cardinality_file(self) -> str | None:
        """The path of ``cardinalities=file:PATH``, else None."""
        return self.cardinalities[5:] if self.cardinalities.startswith("file:") else None

    @property
    def rules_off(self) -> frozenset[str]:
        """``disabled_rules`` and the rules Presto's switches turn off (``cbo rules`` shows them
        as not enabled; the rules also check the switches themselves)."""
        implied = set()
        if not self.in_predicates_as_inner_joins_enabled or self.existential_form == "SEMI_JOIN":
            implied |= {"SemiJoinToInnerDistinctAbove", "SemiJoinToInnerDistinctBelow"}
        if not self.push_table_through_subquery:
            implied |= {"PushTableIntoAggregate", "CopyTableIntoAggregate"}
        if not self.exploit_constraints:
            implied.add("EliminateForeignKeyJoin")
        if self.cte_strategy is CteStrategy.SHARE:
            implied.add("InlineCte")
        return self.disabled_rules | implied

    def with_values(self, values: Mapping[str, Any]) -> OptimizerSettings:
        """These settings with some changed; values may be strings (``"8"``, ``"none"``)."""
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}
        for name, value in values.items():
            key = name.strip().lower()
            if key not in known:
                raise CboError(f"unknown setting {name!r} (known: {', '.join(sorted(known))})")
            changes[key] = _convert(key, value)
        return replace(self, **changes)


def _convert(name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if name in ("max_reordered_joins", "max_join_pairs", "max_rule_applications", "broadcast_limit_bytes"):
            return int(text)
        if name == "shuffle_partitions":
            return None if text.lower() in ("", "none", "auto") else int(text)
        if name == "search_time_limit_ms":
            return None if text.lower() in ("", "none", "off") else float(text)
    except ValueError:
        raise CboError(f"setting {name} needs a number, not {value!r}") from None
    if name == "push_aggregation_below_join_byte_reduction_threshold":
        try:
            return float(text)   # "inf" is a value: always push
        except ValueError:
            raise CboError(f"setting {name} needs a number, not {value!r}") from None
    if name in BOOLEANS:
        lowered = text.lower()
        if lowered in ("true", "on", "1", "yes"):
            return True
        if lowered in ("false", "off", "0", "no"):
            return False
        raise CboError(f"setting {name} is true or false, not {value!r}")
    if name in ("cost_profile", "cardinality_distortion"):
        return None if text.lower() in ("", "none", "default", "off") else text
    if name == "disabled_rules":
        return frozenset(part.strip() for part in text.split(",") if part.strip())
    if name == "spark_adaptive":
        return adaptive_features(text)
    return text


def adaptive_features(value: Any) -> frozenset[AdaptiveFeature]:
    """``spark_adaptive`` from its text (``off``, ``preserving``, or features joined by ``+`` or
    ``,``: ``coalesce+empty_relation``) or from features (enum members or their names)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("off", "none", "false", ""):
            return ADAPTIVE_OFF
        if text in ("preserving", "on", "true"):
            return PRESERVING
        value = [part.strip() for part in re.split(r"[+,]", text) if part.strip()]
    if isinstance(value, AdaptiveFeature):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise CboError(f"spark_adaptive must be off, preserving or features joined by '+', not {value!r}") from None
    known = {f.value: f for f in AdaptiveFeature}
    found = set()
    for item in items:
        if isinstance(item, AdaptiveFeature):
            found.add(item)
        elif isinstance(item, str) and item.strip().lower() in known:
            found.add(known[item.strip().lower()])
        else:
            raise CboError(f"spark_adaptive: unknown feature {item!r} (off, preserving, or some of "
                           f"{', '.join(known)} joined by '+')")
    return frozenset(found)


def describe_adaptive(features: frozenset[AdaptiveFeature]) -> str:
    """``spark_adaptive`` as it is written: ``off``, ``preserving``, or its features joined by ``+``."""
    if not features:
        return "off"
    if features == PRESERVING:
        return "preserving"
    return "+".join(f.value for f in AdaptiveFeature if f in features)


def parse_distortion(text: str) -> tuple[float | None, float, int]:
    """``cardinality_distortion``'s value as (factor, sigma, seed): ``"4"`` is (4.0, 0, 0),
    ``"lognormal:1.5:7"`` is (None, 1.5, 7)."""
    import math

    parts = text.strip().split(":")
    try:
        if parts[0].lower() == "lognormal":
            if len(parts) != 3:
                raise ValueError
            sigma, seed = float(parts[1]), int(parts[2])
            if not (sigma >= 0 and math.isfinite(sigma)):
                raise ValueError
            return None, sigma, seed
        if len(parts) != 1:
            raise ValueError
        factor = float(parts[0])
        if not (factor > 0 and math.isfinite(factor)):
            raise ValueError
        return factor, 0.0, 0
    except ValueError:
        raise CboError(f"cardinality_distortion is a positive factor or lognormal:SIGMA:SEED "
                       f"(SIGMA >= 0, SEED an integer), not {text!r}") from None


def parse_assignments(items: list[str]) -> dict[str, str]:
    """``["name=value", ...]`` from the command line."""
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CboError(f"a setting is written name=value, not {item!r}")
        found[name.strip()] = value
    return found


def settings_record(settings: OptimizerSettings) -> dict[str, Any]:
    """Every setting as JSON holds it: an enum by its value, a set as a sorted list of values."""

    def plain(value: Any) -> Any:
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, (frozenset, set)):
            return sorted((plain(v) for v in value), key=str)
        return value

    return {f.name: plain(getattr(settings, f.name)) for f in fields(settings)}
