"""Interval constants of the IR: what ``date + INTERVAL '3' MONTH`` adds."""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class IntervalValue:
    """A constant interval: months and days and microseconds, like PostgreSQL's."""

    months: int = 0
    days: int = 0
    micros: int = 0

    def __str__(self) -> str:
        parts = []
        if self.months:
            parts.append(f"{self.months} month")
        if self.days:
            parts.append(f"{self.days} day")
        if self.micros:
            parts.append(f"{self.micros / 1e6:g} second")
        return "INTERVAL '" + " ".join(parts or ["0 day"]) + "'"

    def negated(self) -> IntervalValue:
        return IntervalValue(-self.months, -self.days, -self.micros)


def add_interval(value: dt.date, interval: IntervalValue) -> dt.date:
    """Date arithmetic as SQL engines do it: months first (clamped to the month's end), then days."""
    months = value.year * 12 + value.month - 1 + interval.months
    year, month = divmod(months, 12)
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    moved = value.replace(year=year, month=month + 1, day=day)
    result = moved + dt.timedelta(days=interval.days, microseconds=interval.micros)
    return result if isinstance(value, dt.datetime) or interval.micros else result
