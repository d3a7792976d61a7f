"""The timing rules: how one query is measured in every configuration, fairly.

The configurations run the query interleaved, so that a slow phase of the machine hits all of
them alike:

1. **Cold run.** The first configuration of the query's order runs once, untimed and unchecked:
   whoever runs first finds the sources' pages, the file cache and the databases' buffers cold,
   and this run warms them for all. It is never kept (``cold_run_s`` records how long it took).
2. **Warm-up.** Every configuration runs once, untimed (file caches, Spark's code generation,
   the JVM's JIT); a warm-up that fails is that configuration's failure. With
   ``long_warm_up_s``, the warm-ups are timed and checked instead, and when even the fastest of
   them took longer than that, each is kept as its configuration's time and not run again: a
   run that long is hardly changed by warm caches. The decision is the query's, never one
   configuration's, so one plan is not kept once while its twin gets the best of several
   rounds.
3. **Rounds.** At least ``repeat`` rounds, more for a short query: as many as its warm-up round
   fits in ``budget_s``, at most ``max_rounds`` (the fastest of three runs of a 0.4 s query still
   varies by 10-30 % on a shared machine). Each round runs every configuration once, in an
   order rotated one further per round and reversed every other round, so no configuration
   always runs right after the one that warmed the same code. The order starts at the query's
   position in its workload, so a part of a run orders each query as the whole run would.
   The fastest timed run counts (``seconds``); every timed run is kept (``times``).

Every timed run's answer is compared with the reference engine's (``cbo.answers.compare``:
multisets of rows, in order under an outer ORDER BY, numbers within a tolerance). A run that
fails is recorded with its reason and its kind (``failures``: ``parse``, ``error``,
``wrong_answer``) and not run again; a run past its configuration's limit is a timeout
(``timeouts``: the limit), recorded and never a time, and not run again either. Neither stops
the other configurations.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cbo.answers import compare
from cbo.errors import CboError, QueryTimeout

Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Timed:
    """An answer with the seconds it took as measured where it ran (another process: the time
    of the run alone, without passing the rows over)."""

    rows: Rows
    seconds: float


Run = Callable[[], "Rows | Timed"]
Clock = Callable[[], float]
# (configuration, what ran: "cold run", "warm-up", "round 2/5", seconds or None)
RunProgress = Callable[[str, str, "float | None"], None]


class Failure(enum.Enum):
    PARSE = "parse"                 # the engine (or the transpiler) cannot read the query text
    ERROR = "error"                 # it failed while planning or running
    WRONG_ANSWER = "wrong_answer"   # it answered, differently from the reference engine
    TIMEOUT = "timeout"             # it ran past its limit


class ParseFailure(CboError):
    """The query text cannot be read in the dialect an engine needs."""


class RunTimedOut(QueryTimeout):
    """A run past its limit (cancelled, or finished too late)."""

    def __init__(self, limit_s: float):
        super().__init__(f"ran past its limit of {limit_s:g} s")
        self.limit_s = limit_s


@dataclass(frozen=True)
class TimingRules:
    repeat: int = 3
    max_rounds: int = 9
    budget_s: float = 15.0
    long_warm_up_s: float | None = None

    def __post_init__(self) -> None:
        if self.repeat < 1 or self.max_rounds < 1:
            raise CboError(f"--repeat and --max-rounds must be at least 1 (got {self.repeat}, {self.max_rounds})")
        if self.budget_s < 0:
            raise CboError(f"--budget must not be negative (got {self.budget_s:g})")

    def to_json(self) -> dict[str, Any]:
        return {"repeat": self.repeat, "max_rounds": self.max_rounds, "budget_s": self.budget_s,
                "long_warm_up_s": self.long_warm_up_s}

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> TimingRules:
        return TimingRules(body["repeat"], body["max_rounds"], body["budget_s"], body.get("long_warm_up_s"))


def planned_rounds(repeat: int, max_rounds: int, budget: float, round_seconds: float) -> int:
    """Rounds for a query whose warm-up round took ``round_seconds``: at least ``repeat``, more for
    short queries (as many as fit in ``budget`` seconds, at most ``max_rounds``)."""
    if round_seconds <= 0:
        return max(1, repeat)
    return max(1, repeat, min(max_rounds, int(budget // round_seconds)))


def rotated(configs: list[str], shift: int) -> list[str]:
    """``configs`` started ``shift`` places on, wrapping round: query n's order starts with
    configuration n - 1 (mod their number), round i of it one further on per round."""
    if not configs:
        return []
    shift %= len(configs)
    return configs[shift:] + configs[:shift]


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def new_record(name: str) -> dict[str, Any]:
    return {"query": name, "seconds": {}, "times": {}, "matches": {}, "problems": {}, "timeouts": {},
            "failures": {}}


def fail(record: dict[str, Any], config: str, kind: Failure, detail: str) -> None:
    """Record that ``config`` failed on the query (it is not run again)."""
    record["matches"][config] = False
    record["problems"][config] = detail
    record["failures"][config] = kind.value


def measure(record: dict[str, Any], position: int, runs: Mapping[str, Run], expected: Rows | None, ordered: bool,
            rules: TimingRules, limits: Mapping[str, float | None] | None = None, clock: Clock = time.perf_counter,
            progress: RunProgress | None = None) -> dict[str, Any]:
    """Measure one query in the configurations of ``runs`` (in their order) by the rules above,
    into ``record`` (from ``new_record``; configurations that failed before running are already
    in it). ``expected`` is the reference engine's answer (None: answers are not checked)."""
    limits = limits or {}
    record["checked"] = expected is not None
    done: set[str] = set()   # configurations whose long warm-up run was kept as their time
    tell = progress or (lambda config, what, seconds: None)

    def stopped(config: str) -> bool:
        return config in record["problems"] or config in record["timeouts"] or config in done

    def attempt(config: str) -> Rows | Timed | None:
        """Run once; a timeout is recorded (and the configuration not run again), not raised."""
        try:
            return runs[config]()
        except QueryTimeout as exc:
            record["timeouts"][config] = getattr(exc, "limit_s", None) or limits.get(config)
            record["failures"][config] = Failure.TIMEOUT.value
            return None

    def timed(config: str, what: str) -> float | None:
        """Run once, timed, and check the answer; the seconds (None: timed out or failed)."""
        try:
            started = clock()
            answer = attempt(config)
            if answer is None:
                tell(config, what + " (timed out)", None)
                return None
            seconds = clock() - started
            if isinstance(answer, Timed):
                rows, seconds = answer.rows, answer.seconds
            else:
                rows = answer
            record["times"].setdefault(config, []).append(round(seconds, 4))
            if expected is not None:
                verdict = compare(expected, rows, ordered=ordered)
                record["matches"][config] = record["matches"].get(config, True) and verdict.matches
                if not verdict.matches:
                    fail(record, config, Failure.WRONG_ANSWER, verdict.detail)
            tell(config, what, seconds)
            return seconds
        except ParseFailure as exc:
            fail(record, config, Failure.PARSE, first_line(exc))
        except Exception as exc:  # one failure must not hide the rest of the run
            fail(record, config, Failure.ERROR, first_line(exc))
        tell(config, what + " (failed)", None)
        return None

    def one_round(index: int, rounds: int) -> None:
        # rotated one further each round and reversed every other round: a rotation alone keeps
        # every configuration right after the same one (cbo after spark-dsv2: 1.145x cbo-eager's
        # time on the same plan, federated3 SF 1); reversed, it follows another
        order = rotated(list(runs), position + index)
        for config in (order[::-1] if index % 2 else order):
            if not stopped(config):
                timed(config, f"round {index + 1}/{rounds}")

    order = rotated(list(runs), position)
    record["order"] = order
    if order:
        # The cold run: a failure shows again in the runs that count; a timeout stands, as a
        # later one would: a limit is far above what warm caches save.
        started = clock()
        tell(order[0], "cold run", None)
        try:
            attempt(order[0])
        except Exception:
            pass
        record["cold_run_s"] = round(clock() - started, 4)
    warm_ups: dict[str, float] = {}
    timed_warm_ups: dict[str, float] = {}
    for config in order:
        if stopped(config):
            continue
        started = clock()
        if rules.long_warm_up_s is not None:
            seconds = timed(config, "warm-up (timed)")   # it may be kept (below)
            if seconds is not None:
                timed_warm_ups[config] = seconds
        else:
            tell(config, "warm-up", None)
            try:   # a run that fails fails the same way timed: recorded now, not run again
                attempt(config)
            except ParseFailure as exc:
                fail(record, config, Failure.PARSE, first_line(exc))
            except Exception as exc:
                fail(record, config, Failure.ERROR, first_line(exc))
        if config not in record["timeouts"]:   # a cancelled run does not shorten the others' rounds
            warm_ups[config] = clock() - started
    if rules.long_warm_up_s is not None:
        if timed_warm_ups and min(timed_warm_ups.values()) > rules.long_warm_up_s:
            done.update(timed_warm_ups)
            record["warm_up_kept"] = sorted(done)
        else:
            for config in timed_warm_ups:
                record["times"][config].pop()   # only a warm-up, as without the option
    warm_up = sum(seconds for config, seconds in warm_ups.items() if config not in done)
    record["rounds"] = planned_rounds(rules.repeat, rules.max_rounds, rules.budget_s, warm_up)
    for index in range(record["rounds"]):
        one_round(index, record["rounds"])
    for config, times in record["times"].items():
        if not record["problems"].get(config) and times:
            record["seconds"][config] = min(times)
    return record
