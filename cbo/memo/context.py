"""What rules see during a search: the memo, the settings, the counters, the budget, and sizes.

Sizes (estimated rows and bytes per row) are read from each group's estimate once and kept,
since the search asks for them many times per group.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar, cast

from cbo.ir.expressions import Column
from cbo.ir.operators import Scan
from cbo.memo.memo import Group, Memo
from cbo.physical.properties import Requirements
from cbo.settings import OptimizerSettings

S = TypeVar("S")


class SearchContext:
    """What rules see: the memo, the settings, the counters and the budget."""

    def __init__(self, memo: Memo, settings: OptimizerSettings, remote_sources: Mapping[str, Any] | None = None):
        self.memo = memo
        self.settings = settings
        # table -> its JDBC source (``cbo.memo.rules.jdbc_pushdown.RemoteSource``): connector
        # rules push only subplans whose every table is in one source
        self.remote_sources: Mapping[str, Any] = remote_sources or {}
        # What rules keep for the length of one search (a connector rule's pushable subplans,
        # the groups an enumeration has read), by a key naming the rule and what it keeps: the
        # one place rule state lives, dropped with the search (``state``).
        self.rule_state: dict[Hashable, object] = {}
        # seconds a source works for a pushed subplan (dialect, rows, aggregated rows): set by
        # the search from its cost model, read by the connector rules
        self.remote_price: Callable[[str, float, float], float] | None = None
        # the property sets this search asks for, one object each (its winners are keyed by them)
        self.required = Requirements()
        self.counters = memo.counters
        self.steps = 0
        self._deadline = None if settings.search_time_limit_ms is None else \
            time.perf_counter() + settings.search_time_limit_ms / 1000.0
        self._column_widths: dict[int, float] = {}

    def state(self, key: Hashable, make: Callable[[], S]) -> S:
        """What a rule keeps under ``key`` for this search (``make()`` the first time)."""
        found = self.rule_state.get(key)
        if found is None:
            found = self.rule_state[key] = make()
        return cast(S, found)   # (what make() made for this key)

    def size(self, group: Group) -> tuple[float, float]:
        """(estimated rows, bytes per row) of a group's result."""
        found = group.size   # kept on the group: the search asks tens of thousands of times
        if found is None:
            # (the widths known read inline: a join group of a wide region sums dozens)
            rows, widths, width = group.rows, self._column_widths, 0.0
            for column in group.output:
                known = widths.get(column.id)
                width += known if known is not None else self.column_width(column)
            found = group.size = (rows, width)
        return found

    def size_bytes(self, group: Group) -> float:
        rows, width = self.size(group)
        return rows * width

    def column_width(self, column: Column) -> float:
        """A column's average width: from the statistics of the scan that reads it (a width
        never changes on the way up), else the default of 8 bytes."""
        found = self._column_widths.get(column.id)
        if found is None:
            found = 8.0
            for group in self.memo:
                if isinstance(group.first, Scan) and column in group.estimate.columns:
                    found = group.estimate.columns[column].width
                    break
            self._column_widths[column.id] = found
        return found

    def spend(self, steps: int = 1) -> None:
        self.steps += steps

    def out_of_budget(self) -> bool:
        if self.steps >= self.settings.max_rule_applications:
            self.counters.budget_exhausted = "rule applications"
            return True
        if self._deadline is not None and time.perf_counter() > self._deadline:
            self.counters.budget_exhausted = "time"
            return True
        return False
