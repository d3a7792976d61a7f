"""Cardinality plug-ins: a researcher's estimator answers rows, cbo derives the rest.

A plug-in implements :class:`CardinalityEstimator`: for each sub-plan the search asks about
(``cbo.estimate.subplan``: tables with aliases, filters, join conditions, grouping, runnable
SQL), ``rows`` answers a number of rows, or None to leave that sub-plan to cbo. ``answers``
names the operator classes it is asked about at all (say, only joins); cbo answers the others.

``PluggedEstimator`` puts a plug-in (and, or, a distortion) in front of cbo's estimator. For
each sub-plan it first estimates as usual (so column distributions, widths, keys and notes
stay cbo's, derived from the statistics and the inputs' estimates) and then scales that
estimate to the rows given: every column's distribution keeps its shape, its counts scaled.
The operators above read the scaled estimate as they read cbo's own, except an inner join,
which cbo estimates from its set of relations (any join order gives the same number): rows
given for a join set are its rows, and the joins above it are estimated from their relations,
whose rows may in turn have been given.

Each answer leaves a note on the estimate that EXPLAIN shows at the node: where the rows came
from and the sub-plan's key, or that the plug-in had none and cbo's estimate stood. The
estimation context of one search keeps what was asked and who answered (``Coverage``).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cbo.errors import CboError
from cbo.estimate.oracle import concrete, with_rows
from cbo.estimate.relation import RelEstimate
from cbo.estimate.subplan import ALL_CLASSES, Describer, OperatorClass, SubPlan
from cbo.ir.operators import Plan

if TYPE_CHECKING:
    from cbo.estimate import Estimator
    from cbo.estimate.estimator import EstimationContext
    from cbo.estimate.oracle import OracleEstimator


@runtime_checkable
class CardinalityEstimator(Protocol):
    """What a cardinality plug-in implements.

    ``name``: shown in EXPLAIN's notes and the coverage report. ``answers``: the operator
    classes it is asked about (``cbo.estimate.subplan.ALL_CLASSES`` for all). ``rows``: the
    sub-plan's rows, or None to leave it to cbo. It may keep what it computed on itself (a
    connection, answers by key); it must not keep state at module scope."""

    name: str
    answers: frozenset[OperatorClass]

    def rows(self, subplan: SubPlan) -> float | None: ...


@dataclass(frozen=True)
class Answer:
    """Who answered one sub-plan's rows: the plug-in's name, or ``base`` (the plug-in had no
    answer: ``cbo``'s estimate or the ``oracle``'s count stood)."""

    subplan: SubPlan
    source: str
    rows: float          # after the distortion
    estimated: float     # cbo's own estimate (or the oracle's count)
    base: str = "cbo"    # what answers when the plug-in does not: "cbo" or "oracle"

    @property
    def injected(self) -> bool:
        return self.source != self.base


@dataclass
class Coverage:
    """The sub-plans one search asked about, in the order first asked, and who answered each."""

    plugin: str | None
    base: str = "cbo"                 # "cbo" (its estimates) or "oracle" (true counts)
    distortion: str | None = None     # ``cardinality_distortion``, when set
    answers: dict[str, Answer] = field(default_factory=dict)

    @property
    def injected(self) -> int:
        return sum(1 for a in self.answers.values() if a.injected)

    @property
    def fell_back(self) -> int:
        return sum(1 for a in self.answers.values() if not a.injected)

    def by_class(self) -> dict[str, tuple[int, int]]:
        """Operator class -> (answered by the plug-in, fell back to cbo)."""
        found: dict[str, list[int]] = {}
        for answer in self.answers.values():
            counts = found.setdefault(answer.subplan.operator.value, [0, 0])
            counts[0 if answer.injected else 1] += 1
        return {name: (a, b) for name, (a, b) in sorted(found.items())}

    def summary(self) -> str:
        total = len(self.answers)
        own = "cbo's estimates" if self.base == "cbo" else "the oracle's counts"
        distorted = f", distorted by {self.distortion}" if self.distortion else ""
        if self.plugin is None:
            return f"cardinalities: {total} sub-plans, all {own}{distorted}"
        parts = ", ".join(f"{name} {a}/{a + b}" for name, (a, b) in self.by_class().items())
        return (f"cardinalities: {self.injected} of {total} sub-plans from {self.plugin}, "
                f"{self.fell_back} fell back to {own} ({parts}){distorted}")

    def to_json(self) -> dict[str, object]:
        return {"plugin": self.plugin, "base": self.base, "distortion": self.distortion,
                "subplans": len(self.answers), "injected": self.injected,
                "fell_back": self.fell_back,
                "by_class": {k: {"injected": a, "fell_back": b} for k, (a, b) in self.by_class().items()},
                "answers": [{"key": a.subplan.key, "source": a.source, "rows": a.rows, "estimated": a.estimated}
                            for a in self.answers.values()]}


class Distortion:
    """Scales every sub-plan's rows (``cardinality_distortion``): by a constant factor
    (``"4"``, ``"0.25"``), or by ``exp(N(0, sigma))`` drawn per sub-plan (``"lognormal:SIGMA:SEED"``),
    from a generator seeded by the seed and the sub-plan's key: the same sub-plan gets the
    same factor whenever, and in whichever process, it is asked."""

    def __init__(self, text: str, factor: float | None, sigma: float = 0.0, seed: int = 0):
        """``text`` as the setting reads (``cbo.settings.parse_distortion`` gives the rest)."""
        self.text = text.strip()
        self.factor, self.sigma, self.seed = factor, sigma, seed

    def of(self, key: str) -> float:
        if self.factor is not None:
            return self.factor
        digest = hashlib.sha256(f"{self.seed}:{key}".encode()).digest()
        return math.exp(random.Random(int.from_bytes(digest[:8], "big")).gauss(0.0, self.sigma))

    def __repr__(self) -> str:
        return f"Distortion({self.text!r})"


class PluggedEstimator:
    """cbo's estimator (or the oracle) with a plug-in and/or a distortion in front. It keeps
    nothing itself but its parts; each ``context()`` (one per search) keeps that search's
    descriptions and coverage."""

    def __init__(self, estimator: Estimator | OracleEstimator, plugin: CardinalityEstimator | None = None,
                 distortion: Distortion | None = None):
        if plugin is not None and not isinstance(plugin, CardinalityEstimator):
            raise CboError(f"a cardinality plug-in has name, answers and rows(subplan); {type(plugin).__name__} "
                           "lacks some (see cbo.estimate.plugin.CardinalityEstimator)")
        from cbo.estimate.oracle import OracleEstimator

        self.estimator = estimator
        self.plugin = plugin
        self.distortion = distortion
        self.base = "oracle" if isinstance(estimator, OracleEstimator) else "cbo"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.estimator, name)

    def context(self, query: Plan | None = None) -> PluggedContext:
        return PluggedContext(self, self.estimator.context(), Describer(query))

    def estimate(self, plan: Plan) -> RelEstimate:
        """``plan``'s estimate with its own rows answered (the sub-plans below it are estimated
        by cbo as one plan; the memo search asks about each of its groups instead)."""
        return self.context(plan).estimate(plan)

    def estimate_node(self, node: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        return self.context().estimate_node(node, inputs)


class PluggedContext:
    """One search's estimation through a plug-in: the sub-plans asked and who answered them."""

    def __init__(self, owner: PluggedEstimator, base: EstimationContext | OracleEstimator, describer: Describer):
        self.owner = owner
        self.base = base
        self.describer = describer
        plugin = owner.plugin
        self.coverage = Coverage(plugin.name if plugin is not None else None, owner.base,
                                 owner.distortion.text if owner.distortion is not None else None)
        # each sub-plan's estimate before the distortion, by key (what its parents read)
        self._clean: dict[str, RelEstimate] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def context(self) -> PluggedContext:
        return self

    def seed(self, query: Plan) -> None:
        """Aliases from the query the search starts from (``Describer.seed``)."""
        self.describer.seed(query)

    def rows(self, plan: Plan) -> float:
        return self.estimate(plan).rows

    def estimate_node(self, node: Plan, inputs: list[RelEstimate]) -> RelEstimate:
        if self.owner.distortion is not None and node.children:
            # Each sub-plan is distorted once, from its undistorted estimate: its inputs are read
            # as they were before their own distortion, so factors do not compound with depth.
            inputs = [self._clean.get(self.subplan(child).key, given) for child, given in zip(node.children, inputs)]
        return self._answer(self.base.estimate_node(node, inputs), concrete(node))

    def estimate(self, plan: Plan) -> RelEstimate:
        return self._answer(self.base.estimate(plan), plan)

    def subplan(self, plan: Plan) -> SubPlan:
        return self.describer.describe(concrete(plan))

    def _answer(self, estimated: RelEstimate, plan: Plan) -> RelEstimate:
        subplan = self.describer.describe(plan)
        known = self.coverage.answers.get(subplan.key)
        if known is None:
            known = self.coverage.answers[subplan.key] = self._ask(subplan, estimated.rows)
        notes = {self._note(known)}
        distortion = self.owner.distortion
        if distortion is not None:
            factor = distortion.of(subplan.key)
            notes.add(f"rows distorted x{factor:.3g} ({distortion.text})")
            clean = with_rows(estimated, known.rows / factor)
            self._clean.setdefault(subplan.key, replace(clean, notes=clean.notes | {self._note(known)}))
        result = with_rows(estimated, known.rows)
        return replace(result, notes=result.notes | frozenset(notes))

    def _ask(self, subplan: SubPlan, estimated: float) -> Answer:
        plugin = self.owner.plugin
        rows, source = None, self.owner.base
        if plugin is not None and subplan.operator in plugin.answers:
            answered = plugin.rows(subplan)
            if answered is not None:
                rows = float(answered)
                if not (math.isfinite(rows) and rows >= 0):
                    raise CboError(f"cardinality plug-in {plugin.name}: {rows!r} rows for sub-plan {subplan.key} "
                                   "(rows are a non-negative number)")
                source = plugin.name
        base = estimated if rows is None else rows
        if self.owner.distortion is not None:
            base *= self.owner.distortion.of(subplan.key)
        return Answer(subplan, source, base, estimated, self.owner.base)

    def _note(self, answer: Answer) -> str:
        plugin = self.owner.plugin
        if plugin is None:
            return f"sub-plan {answer.subplan.key}"
        own = "cbo's estimate" if answer.base == "cbo" else "the oracle's count"
        if answer.injected:
            return f"rows from {answer.source} (sub-plan {answer.subplan.key})"
        if answer.subplan.operator not in plugin.answers:
            return f"rows: {own} ({plugin.name} answers no {answer.subplan.operator.value}; " \
                   f"sub-plan {answer.subplan.key})"
        return f"rows: {own}, {plugin.name} had none for sub-plan {answer.subplan.key}"


class FileCardinalities:
    """Rows per sub-plan key, read from a file (``cardinalities=file:PATH``).

    The file is one of: the JSON ``cbo subplans`` writes, with a ``rows`` filled in for some
    sub-plans (the others fall back); a JSON object of key -> rows; or CSV lines ``key,rows``
    (a header line ``key,rows`` is allowed). A key the query never asks about is ignored."""

    answers = ALL_CLASSES

    def __init__(self, path: str, rows: Mapping[str, float]):
        self.path = path
        self.name = path
        self.table = dict(rows)

    @classmethod
    def load(cls, path: str) -> FileCardinalities:
        import json
        from pathlib import Path

        file = Path(path).expanduser()
        try:
            text = file.read_text()
        except OSError as exc:
            raise CboError(f"cardinalities file {path}: {exc.strerror or exc}") from None
        rows: dict[str, float] = {}
        if text.lstrip().startswith(("{", "[")):
            try:
                body = json.loads(text)
            except json.JSONDecodeError as exc:
                raise CboError(f"cardinalities file {path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
            entries = body.get("subplans") if isinstance(body, dict) and "subplans" in body else body
            if isinstance(entries, dict):
                items = list(entries.items())
            elif isinstance(entries, list):
                items = [(e.get("key"), e.get("rows")) for e in entries if isinstance(e, dict)]
            else:
                raise CboError(f"cardinalities file {path}: expected an object of key -> rows or "
                               "the file `cbo subplans` writes")
            for key, value in items:
                if value is None:
                    continue
                rows[str(key)] = _number(value, path, str(key))
        else:
            for number, line in enumerate(text.splitlines(), start=1):
                line = line.strip()
                if not line or line.startswith("#") or line.replace(" ", "").lower() == "key,rows":
                    continue
                key, sep, value = line.partition(",")
                if not sep:
                    raise CboError(f"cardinalities file {path}, line {number}: expected key,rows, not {line!r}")
                rows[key.strip()] = _number(value.strip(), path, key.strip(), number)
        return cls(str(file), rows)

    def rows(self, subplan: SubPlan) -> float | None:
        return self.table.get(subplan.key)


def _number(value: object, path: str, key: str, line: int | None = None) -> float:
    where = f"{path}, line {line}" if line is not None else path
    try:
        found = float(value) if isinstance(value, (int, float, str)) else math.nan
    except ValueError:
        raise CboError(f"cardinalities file {where}: rows of {key} must be a number, not {value!r}") from None
    if math.isnan(found) and not isinstance(value, (int, float, str)):
        raise CboError(f"cardinalities file {where}: rows of {key} must be a number, not {value!r}")
    if not (math.isfinite(found) and found >= 0):
        raise CboError(f"cardinalities file {where}: rows of {key} must be a non-negative number, not {value!r}")
    return found


__all__ = ["Answer", "CardinalityEstimator", "Coverage", "Distortion", "FileCardinalities", "PluggedContext",
           "PluggedEstimator"]
