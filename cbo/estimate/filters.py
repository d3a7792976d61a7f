"""Filter selectivity: how many rows of a relation satisfy a predicate, and what they look like.

Each conjunct on one column against constants (``=``, ``<>``, ranges, BETWEEN, IN, IS [NOT]
NULL, LIKE) narrows that column's MCVs and histogram: an MCV is kept or dropped exactly, and a
range takes the interpolated share of each bucket it cuts. Conjuncts on the same column compose
(``x >= 5 AND x < 9`` is one range). Other conjuncts use generic rules: OR by
inclusion-exclusion (and a column every disjunct restricts narrowed to the sum of their
restrictions, ``_disjunction``), NOT as the complement, column-to-column equality as one over the
larger distinct count, a column compared with another moved by a constant by matching or
comparing the two distributions (``_moved_comparison``), a conjunct over constants alone by its
value, and the documented defaults of ``cbo.estimate.defaults`` with a note. A string met by a
date or timestamp column is the date it spells, as the engines cast it.

Correlation. Multiplying the conjuncts' selectivities assumes independence, the baseline.
When the relation is a base table (through filters) with a row sample, the whole predicate is
also evaluated on the sample, which sees correlation between columns:
* a sample that is the whole table gives the exact answer;
* a single conjunct on one column keeps the statistics' estimate (histograms and MCVs were
  built from more rows than the sample holds);
* otherwise, when at least ``MIN_SAMPLE_HITS`` sample rows pass, their share is the estimate;
  with fewer, the independence estimate is kept but bounded by what the sample allows
  (at least the share seen, at most ``MIN_SAMPLE_HITS`` rows' share).
The surviving sample rows also re-weight the other columns' MCVs and histogram buckets, so a
skew that the filter changes (the most active users pass a reputation filter more often)
reaches the joins above.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from cbo.estimate import defaults
from cbo.estimate.arithmetic import OPERATIONS, shifted, with_constant
from cbo.estimate.column import ColumnEstimate, Segment, like_prefix, like_regex, mixture, thinned
from cbo.estimate.comparisons import compare_columns
from cbo.estimate.constants import NOT_CONSTANT, constant_value
from cbo.estimate.matching import matching_tuples
from cbo.estimate.relation import DerivedColumns, Origin, RelEstimate, SampleView, layered
from cbo.estimate.sample_eval import evaluate, scalar
from cbo.ir.expressions import Call, Column, ColumnRef, Constant, Expr, SpecialForm, columns_of, conjuncts
from cbo.ir.kinds import FunctionName

FLIP: dict[FunctionName, FunctionName] = {"lt": "gt", "lte": "gte", "gt": "lt", "gte": "lte", "eq": "eq", "neq": "neq"}
MAX_CHAR = "\U0010ffff"


@dataclass(frozen=True)
class Restriction:
    column: Column | None               # the column narrowed, or None for a generic conjunct
    estimate: ColumnEstimate | None     # the column after the conjunct
    selectivity: float
    note: str | None = None
    # columns a generic conjunct narrows all the same: those every disjunct of an OR restricts
    also: tuple[tuple[Column, ColumnEstimate], ...] = ()


def estimate_filter(rel: RelEstimate, predicate: Expr) -> RelEstimate:
    parts = conjuncts(predicate)
    if not parts:
        return rel
    if rel.rows <= 0:
        return rel
    working: ChainMap[Column, ColumnEstimate] = layered({}, rel.columns)
    restricted: dict[Column, ColumnEstimate] = {}
    independent = 1.0
    notes: list[str] = []
    simple = True
    alone: list[Restriction] = []    # each conjunct's restriction by itself, for the cap below
    # The columns each conjunct reads, found once (for the cap below and the sample's masks).
    reads = [columns_of(part) for part in parts] if len(parts) > 1 else []
    for k, part in enumerate(parts):
        result = restrict(part, working, rel.rows, rel.origins)
        if len(parts) > 1:
            # The same as alone unless an earlier conjunct narrowed one of its columns.
            alone.append(restrict(part, rel.columns, rel.rows, rel.origins)
                         if restricted and reads[k] & restricted.keys() else result)
        independent *= result.selectivity
        if result.note:
            notes.append(result.note)
        if result.column is not None and result.estimate is not None:
            working[result.column] = result.estimate
            restricted[result.column] = result.estimate
        for column, estimate in result.also:
            working[column] = estimate
            restricted[column] = estimate
        # Only a conjunct the statistics answered without defaults may overrule the sample.
        simple = simple and result.column is not None and result.note is None
    # Interpolating a LIKE prefix inside a string bucket is coarse: let the sample answer it.
    simple = simple and len(parts) == 1 and not _is_like_call(parts[0])
    selectivity = min(max(independent, 0.0), 1.0)

    sample, mask = rel.sample, None
    masks: list[np.ndarray | None] = []
    if sample is not None:
        if len(parts) > 1:
            # Each conjunct's rows once; the conjunction passes the rows all of them pass.
            masks = [_sample_mask(sample, part, read) for part, read in zip(parts, reads)]
            present = [m for m in masks if m is not None]
            mask = None if len(present) < len(masks) else np.logical_and.reduce(present)
        else:
            mask = _sample_mask(sample, predicate)
    selectivity, notes = _with_sample(selectivity, simple, sample, mask, notes)
    if len(parts) > 1:
        # A conjunction never keeps more rows than any one of its conjuncts would alone (the
        # sample and the statistics may disagree by a little; the smaller answer holds).
        for index, (part, result) in enumerate(zip(parts, alone)):
            own = min(max(result.selectivity, 0.0), 1.0)
            plain = result.column is not None and result.note is None and not _is_like_call(part)
            own, _ = _with_sample(own, plain, sample, masks[index] if masks else None, [])
            selectivity = min(selectivity, own)
    rows = rel.rows * selectivity
    reweight = mask is not None and sample is not None and int(mask.sum()) >= defaults.MIN_SAMPLE_FOR_REWEIGHT
    overrides = {column: estimate.with_rows(rows) if estimate.rows > 0 else replace(estimate, nulls=0.0)
                 for column, estimate in restricted.items()}

    def derive(column: Column, estimate: ColumnEstimate) -> ColumnEstimate:
        if reweight:
            assert sample is not None and mask is not None
            return _reweighted(estimate, sample, column, mask, rows) or estimate.scaled(selectivity)
        return estimate.scaled(selectivity)

    columns = DerivedColumns(rel.columns, derive, overrides)
    view = SampleView(sample.sample, sample.names, mask) if sample is not None and mask is not None else None
    origins = rel.origins
    if view is not None:
        origins = {c: o.seen_through(view) if o.sample is not None and o.sample.sample is view.sample else o
                   for c, o in rel.origins.items()}
    conditions = None if rel.conditions is None else (*rel.conditions, predicate)
    return RelEstimate(rows, columns, rel.groups, origins, view, rel.notes | frozenset(notes), conditions=conditions)


def _is_like_call(part: Expr) -> bool:
    return isinstance(part, Call) and part.name == "like"


def _with_sample(selectivity: float, simple: bool, sample: SampleView | None, mask: np.ndarray | None,
                 notes: list[str]) -> tuple[float, list[str]]:
    """The selectivity (and notes) once the sample rows passing the filter have their say:
    all of it for a whole-table sample; where the statistics needed defaults or several
    conjuncts, the sample's share when it rests on enough rows, else at least that share."""
    if sample is None or mask is None:
        return selectivity, notes
    before = sample.passing
    hits = int(mask.sum())
    if before <= 0:
        return selectivity, notes
    share = hits / before
    if sample.sample.is_whole_table:
        return share, []
    if simple:
        return selectivity, notes
    if hits >= defaults.MIN_SAMPLE_HITS:
        return share, [n for n in notes if not n.startswith("default")]
    return min(max(selectivity, share), defaults.MIN_SAMPLE_HITS / before), notes


def _sample_mask(view: SampleView, predicate: Expr, reads: frozenset[Column] | None = None) -> np.ndarray | None:
    """The sample rows passing ``predicate`` (and the view's filters); ``reads``: the columns
    it reads, where the caller has them."""
    if not all(c in view.names for c in (columns_of(predicate) if reads is None else reads)):
        return None
    size = view.sample.size
    if size == 0:
        return None
    mask = evaluate(predicate, view.arrays, size, view.kept)
    if mask is None:
        return None
    return mask if view.mask is None else mask & view.mask


def _reweighted(estimate: ColumnEstimate, view: SampleView, column: Column, mask: np.ndarray,
                rows: float) -> ColumnEstimate | None:
    """The column's MCV rows and bucket rows in proportion to the passing sample rows."""
    found = view.arrays(column)
    if found is None or estimate.kind is None:
        return None
    estimate = estimate.live
    values, nulls = found
    passing = int(mask.sum())
    if passing == 0:
        return None
    kept_values = values[mask]
    kept_nulls = nulls[mask]
    present = kept_values[~kept_nulls]
    try:
        counted = _counted_numbers(present, estimate.mcv)
        if counted is None:
            hits = [int(np.count_nonzero(present == scalar(value))) for value, _ in estimate.mcv]
        else:
            hits, present = counted[0], counted[1]     # the values equal to no MCV, for the buckets
        mcv = [(value, rows * h / passing) for (value, _), h in zip(estimate.mcv, hits)]
        null_rows = rows * int(kept_nulls.sum()) / passing
        rest_rows = max(rows - null_rows - sum(r for _, r in mcv), 0.0)
        segments = estimate.segments
        if segments and segments[0].lower is not None:
            counts = _bucket_counts(present, estimate, mcv if counted is None else [])
            total = float(sum(counts))
            if total > 0:
                new_segments = []
                for segment, count in zip(segments, counts):
                    new_rows = rest_rows * count / total
                    factor = new_rows / segment.rows if segment.rows > 0 else 0.0
                    distinct = min(segment.domain, segment.distinct * factor) if factor > 1 else \
                        thinned(segment.distinct, segment.rows, factor)
                    new_segments.append(Segment(segment.lower, segment.upper, new_rows, distinct, segment.domain))
                segments = tuple(new_segments)
            else:
                segments = tuple(s.part(0.0) if rest_rows == 0 else s for s in segments)
                scale = rest_rows / max(sum(s.rows for s in segments), 1e-9)
                segments = tuple(Segment(s.lower, s.upper, s.rows * scale, thinned(s.distinct, s.rows, scale), s.domain)
                                 for s in segments)
        return ColumnEstimate(estimate.kind, null_rows, tuple(mcv), segments, estimate.width, estimate.default)
    except (TypeError, ValueError):
        return None


def _counted_numbers(present: np.ndarray, mcv: tuple[tuple[object, float], ...]) \
        -> tuple[list[int], np.ndarray] | None:
    """For numbers (doubles, MCVs neither NaN nor booleans): the sampled values equal to each
    MCV, and the values equal to none of them (sorted), by one sort and a bisection per MCV
    rather than a comparison of every sampled value with every MCV. Equal counts to the
    comparisons' (``==`` on doubles is the sort's order: -0.0 and 0.0 alike; a NaN sampled
    value equals no MCV and sorts last); the buckets count the rest in any order. None
    for other kinds and for fewer than five MCVs, which compare each MCV (a few comparisons cost
    less than the sort)."""
    if present.dtype != np.float64 or len(mcv) < 5:
        return None    # (a few comparisons cost less than the sort)
    values = [scalar(value) for value, _ in mcv]
    if not all(type(v) is float and v == v for v in values):
        return None
    ordered = np.sort(present)
    wanted = np.array(values, dtype=np.float64)
    low = np.searchsorted(ordered, wanted, side="left")
    high = np.searchsorted(ordered, wanted, side="right")
    keep = np.ones(len(ordered), dtype=bool)
    for a, b in zip(low.tolist(), high.tolist()):
        keep[a:b] = False
    return (high - low).tolist(), ordered[keep]


def _bucket_counts(present: np.ndarray, estimate: ColumnEstimate, mcv: list) -> list[int]:
    if mcv:
        keep = np.ones(len(present), dtype=bool)
        for value, _ in mcv:
            keep &= present != scalar(value)
        present = present[keep]
    uppers = _uppers(estimate, present.dtype)
    index = np.searchsorted(uppers, present, side="left")
    index = np.clip(index, 0, len(estimate.segments) - 1)
    return np.bincount(index, minlength=len(estimate.segments)).tolist()


def _uppers(estimate: ColumnEstimate, dtype: np.dtype) -> np.ndarray:
    """The segments' upper bounds as the sample holds values, kept on the estimate (as
    ``ColumnEstimate._segment_of`` keeps its bounds): a table's column is re-weighted by each
    filter on the table, with the same segments."""
    kept: dict[np.dtype, np.ndarray] | None = estimate.__dict__.get("_sample_uppers")
    if kept is None:
        kept = {}
        object.__setattr__(estimate, "_sample_uppers", kept)
    found = kept.get(dtype)
    if found is None:
        found = kept[dtype] = np.array([scalar(s.upper) for s in estimate.segments], dtype=dtype)
        found.flags.writeable = False
    return found


# ------------------------------------------------------------------------------------------------
# Conjuncts


def restrict(conjunct: Expr, columns: Mapping[Column, ColumnEstimate], rows: float,
             origins: Mapping[Column, Origin] | None = None) -> Restriction:
    """Selectivity of one conjunct, and the narrowed column when it is on one column;
    ``origins``: where the columns come from (``generic_selectivity`` reads their samples)."""
    single = _single_column(conjunct, columns)
    if single is not None:
        column, narrowed = single
        before = columns[column].rows
        if narrowed is not None and before > 0:
            note = None
            like = _like_parts(conjunct, columns)
            if like is not None and not like_prefix(like[1]):
                note = f"default selectivity {defaults.LIKE_SELECTIVITY} for the non-MCV values of {conjunct}"
            return Restriction(column, narrowed, min(narrowed.rows / before, 1.0), note or _unplaced(conjunct, columns))
    if isinstance(conjunct, SpecialForm) and conjunct.form == "OR":
        return _disjunction(conjunct, columns, rows, origins)
    selectivity, note = generic_selectivity(conjunct, columns, rows, origins)
    return Restriction(None, None, selectivity, note)


def _disjunction(e: SpecialForm, columns: Mapping[Column, ColumnEstimate], rows: float,
                 origins: Mapping[Column, Origin] | None = None) -> Restriction:
    """An OR: its share of rows by inclusion-exclusion over its disjuncts (by their sum where
    all restrict one column), and the columns every disjunct restricts, narrowed.

    ``d_year = 1999 OR (d_year = 1998 AND d_moy = 12) OR (d_year = 2000 AND d_moy = 1)`` keeps
    rows of three years only, 1999's the most: the rows passing are those of the disjuncts, so
    a column each restricts holds, per value, the sum of the disjuncts' rows of it (each
    disjunct's restriction of the column at that disjunct's rows, ``mixture``), rescaled to the
    OR's rows by the filter. Left unnarrowed, the column kept all 200 years, and ``d_year =
    1999`` above (a CTE's reader) kept one row in 200."""
    found = [_narrowing_of(arg, columns, rows, origins) for arg in e.args]
    selectivity = _or_share(e, [share for share, _, _ in found])
    note = next((n for _, n, _ in found if n), None)
    if not found or rows <= 0:
        return Restriction(None, None, selectivity, note)
    common = set(found[0][2])
    for _, _, narrowed in found[1:]:
        common &= narrowed.keys()
    also = []
    for column in sorted(common, key=lambda c: c.id):
        parts = []
        for share, _, narrowed in found:
            estimate = narrowed[column]
            if estimate.rows > 0 and share > 0:
                parts.append(estimate.scaled(min(share * rows / estimate.rows, 1.0)))
        merged = mixture(columns[column], parts) if column in columns else None
        if merged is not None:
            also.append((column, merged))
    return Restriction(None, None, selectivity, note, tuple(also))

def _unplaced(conjunct: Expr, columns: Mapping[Column, ColumnEstimate]) -> str | None:
    """A note when ``column = value`` (``<>``, ``IN``) names a value that does not compare with
    the column's histogram bounds: its rows are the first segment's average, a default."""
    if isinstance(conjunct, Call) and conjunct.name in ("eq", "neq") and len(conjunct.args) == 2:
        ref, other = conjunct.args if isinstance(conjunct.args[0], ColumnRef) else conjunct.args[::-1]
        values = [constant_value(other)]
    elif isinstance(conjunct, SpecialForm) and conjunct.form == "IN" and conjunct.args:
        ref, values = conjunct.args[0], [constant_value(a) for a in conjunct.args[1:]]
    else:
        return None
    if not isinstance(ref, ColumnRef) or ref.column not in columns:
        return None
    estimate = columns[ref.column]
    if estimate.kind is None:
        return None
    for value in values:
        value = _as_kind(value, estimate.kind) if value is not NOT_CONSTANT else None
        if value is not None and not estimate.comparable(value):
            return f"default: {value!r} in {conjunct} does not compare with the column's histogram bounds " \
                   f"(estimated as the first segment's average)"
    return None


def _single_column(e: Expr, columns: Mapping[Column, ColumnEstimate]) -> tuple[Column, ColumnEstimate | None] | None:
    # A boolean column as a predicate is ``column = TRUE`` (a filter keeps TRUE rows only);
    # under NOT, ``column = FALSE``.
    negated = isinstance(e, SpecialForm) and e.form == "NOT"
    bare = e.args[0] if negated and isinstance(e, SpecialForm) else e
    if isinstance(bare, ColumnRef) and bare.column in columns and columns[bare.column].kind == "boolean":
        return bare.column, columns[bare.column].equal_to(not negated)
    if isinstance(e, Call) and e.name in FLIP and len(e.args) == 2:
        left, right = e.args
        op = e.name
        if not isinstance(left, ColumnRef):
            left, right, op = right, left, FLIP[op]
        value = constant_value(right)
        if not isinstance(left, ColumnRef) or value is NOT_CONSTANT or left.column not in columns:
            return None
        estimate = columns[left.column]
        if estimate.kind is None:
            return None
        value = _as_kind(value, estimate.kind)
        if value is None:
            return left.column, estimate.only_nulls().in_values([])
        try:
            if op == "eq":
                return left.column, estimate.equal_to(value)
            if op == "neq":
                return left.column, estimate.not_equal_to(value)
            bounds = {"lt": (None, value, True, False), "lte": (None, value, True, True),
                      "gt": (value, None, False, True), "gte": (value, None, True, True)}[op]
            return left.column, estimate.in_range(*bounds)
        except TypeError:
            return None
    if isinstance(e, SpecialForm):
        if e.form == "IS_NULL" and isinstance(e.args[0], ColumnRef) and e.args[0].column in columns:
            return e.args[0].column, columns[e.args[0].column].only_nulls()
        if e.form == "NOT" and isinstance(e.args[0], SpecialForm) and e.args[0].form == "IS_NULL" and \
                isinstance(e.args[0].args[0], ColumnRef) and e.args[0].args[0].column in columns:
            return e.args[0].args[0].column, columns[e.args[0].args[0].column].without_nulls()
        if e.form == "IN" and isinstance(e.args[0], ColumnRef) and e.args[0].column in columns:
            estimate = columns[e.args[0].column]
            values = [constant_value(a) for a in e.args[1:]]
            if estimate.kind is None or any(v is NOT_CONSTANT for v in values):
                return None
            try:
                return e.args[0].column, estimate.in_values([_as_kind(v, estimate.kind) for v in values])
            except TypeError:
                return None
        if e.form == "BETWEEN" and isinstance(e.args[0], ColumnRef) and e.args[0].column in columns:
            estimate = columns[e.args[0].column]
            low, high = constant_value(e.args[1]), constant_value(e.args[2])
            if estimate.kind is None or low is NOT_CONSTANT or high is NOT_CONSTANT or low is None or high is None:
                return None
            try:
                return e.args[0].column, estimate.in_range(_as_kind(low, estimate.kind), _as_kind(high, estimate.kind))
            except TypeError:
                return None
        negated_like = _like_parts(e.args[0], columns) if e.form == "NOT" else None
        if negated_like is not None:
            inner = _like(*negated_like, columns)
            if inner is None:
                return None
            column, matched = inner
            estimate = columns[column]
            share = 1.0 - matched.non_null / estimate.non_null if estimate.non_null > 0 else 0.0
            regex = like_regex(negated_like[1])
            return column, estimate.matching(lambda v: not (isinstance(v, str) and regex.fullmatch(v)),
                                             max(share, 0.0))
    like = _like_parts(e, columns)
    if like is not None:
        return _like(*like, columns)
    return None


def _like_parts(e: Expr, columns: Mapping[Column, ColumnEstimate]) -> tuple[Column, str] | None:
    """(column, pattern) of ``column LIKE 'pattern'`` over a column of ``columns``, else None."""
    if isinstance(e, Call) and e.name == "like":
        value, pattern = e.args[0], e.args[1]
        if isinstance(value, ColumnRef) and value.column in columns and isinstance(pattern, Constant) \
                and isinstance(pattern.value, str):
            return value.column, pattern.value
    return None


def _like(column: Column, pattern: str,
          columns: Mapping[Column, ColumnEstimate]) -> tuple[Column, ColumnEstimate] | None:
    estimate = columns[column]
    if estimate.kind != "string":
        return None
    prefix = like_prefix(pattern)
    regex = like_regex(pattern)
    if prefix == pattern:
        return column, estimate.equal_to(pattern)
    if prefix and pattern == prefix + "%":
        narrowed = estimate.in_range(prefix, prefix + MAX_CHAR, True, False)
        return (column, narrowed) if narrowed is not None else None
    if prefix:
        narrowed = estimate.in_range(prefix, prefix + MAX_CHAR, True, False)
        if narrowed is None:
            return None
        rest = narrowed.matching(lambda v: isinstance(v, str) and bool(regex.fullmatch(v)), 0.5)
        return column, rest
    return column, estimate.matching(lambda v: isinstance(v, str) and bool(regex.fullmatch(v)),
                                     defaults.LIKE_SELECTIVITY)


def generic_selectivity(e: Expr, columns: Mapping[Column, ColumnEstimate], rows: float,
                        origins: Mapping[Column, Origin] | None = None) -> tuple[float, str | None]:
    """Selectivity of a conjunct that is not a plain restriction of one column. Where the
    statistics give only a default (an expression over a column: ``substring(zip, 1, 5) IN
    (...)``) and the columns it reads come from one table's sample (``origins``: through joins
    too), the sample rows passing it have their say (``_with_sample``): the conjunct is taken
    as independent of the joins, as every conjunct is."""
    share, note = _generic_selectivity(e, columns, rows, origins)
    if note is None or not note.startswith("default") or not origins \
            or (isinstance(e, SpecialForm) and e.form in ("OR", "AND", "NOT")):
        return share, note
    view = _origin_view(e, origins)
    if view is None:
        return share, note
    mask = _sample_mask(view, e)
    if mask is None:
        return share, note
    found, notes = _with_sample(share, False, view, mask, [note])
    return found, (notes[0] if notes else None)


def _origin_view(e: Expr, origins: Mapping[Column, Origin]) -> SampleView | None:
    """The sample (as filtered) of the one table all of ``e``'s columns come from, its columns
    named as the table names them; None when they come from several, or one without a sample."""
    names: dict[Column, str] = {}
    view: SampleView | None = None
    for column in columns_of(e):
        origin = origins.get(column)
        if origin is None or origin.sample is None or origin.name is None or origin.extreme is not None:
            return None
        if view is None:
            view = origin.sample
        elif origin.sample.sample is not view.sample or origin.sample.mask is not view.mask:
            return None
        names[column] = origin.name
    return None if view is None else SampleView(view.sample, names, view.mask)


def _generic_selectivity(e: Expr, columns: Mapping[Column, ColumnEstimate], rows: float,
                         origins: Mapping[Column, Origin] | None) -> tuple[float, str | None]:
    if isinstance(e, Constant):
        return (1.0 if e.value is True else 0.0), None
    if not columns_of(e):
        # A conjunct over constants alone (``'c' = 's'``, left where a CTE's branch tag met the
        # reader's) holds for every row or for none: its value, where it can be computed.
        value = evaluate(e, _no_columns, 1)
        if value is not None:
            return (1.0 if bool(value[0]) else 0.0), None
    if isinstance(e, SpecialForm) and e.form == "OR":
        shares = []
        notes = []
        for arg in e.args:
            s, note = _selectivity_of(arg, columns, rows, origins)
            shares.append(s)
            if note:
                notes.append(note)
        return _or_share(e, shares), (notes[0] if notes else None)
    if isinstance(e, SpecialForm) and e.form == "AND":
        return _selectivity_of(e, columns, rows, origins)
    if isinstance(e, SpecialForm) and e.form == "NOT":
        s, note = _selectivity_of(e.args[0], columns, rows, origins)
        return max(0.0, 1.0 - s), note
    if isinstance(e, Call) and e.name in FLIP and all(isinstance(a, ColumnRef) for a in e.args):
        a, b = (columns.get(x.column) if isinstance(x, ColumnRef) else None for x in e.args)
        if e.name == "eq":
            da = a.distinct if a is not None else rows
            db = b.distinct if b is not None else rows
            return 1.0 / max(da, db, 1.0), None
        if e.name == "neq":
            da = a.distinct if a is not None else rows
            return 1.0 - 1.0 / max(da, 1.0), None
        if a is not None and b is not None:
            found = compare_columns(e.name, a, b)
            if found is not None:
                return found, None
        return defaults.RANGE_SELECTIVITY, f"default selectivity {defaults.RANGE_SELECTIVITY:.2f} for {e}"
    if isinstance(e, Call) and e.name in FLIP and len(e.args) == 2:
        moved = _moved_comparison(e.name, e.args[0], e.args[1], columns)
        if moved is not None:
            return moved, None
    if isinstance(e, Call) and e.name in ("eq", "is_not_distinct_from"):
        return defaults.EQ_SELECTIVITY, f"default selectivity {defaults.EQ_SELECTIVITY} for {e}"
    if isinstance(e, Call) and e.name in FLIP:
        return defaults.RANGE_SELECTIVITY, f"default selectivity {defaults.RANGE_SELECTIVITY:.2f} for {e}"
    if isinstance(e, Call) and e.name == "like":
        return defaults.LIKE_SELECTIVITY, f"default selectivity {defaults.LIKE_SELECTIVITY} for {e}"
    if isinstance(e, SpecialForm) and e.form == "BETWEEN":
        return defaults.RANGE_SELECTIVITY ** 2 * 2, f"default selectivity for {e}"
    if isinstance(e, SpecialForm) and e.form == "IN":
        share = min(1.0, defaults.EQ_SELECTIVITY * (len(e.args) - 1))
        return share, f"default selectivity {share:.3f} for {e}"
    if isinstance(e, SpecialForm) and e.form == "IS_NULL":
        return 0.1, f"default selectivity 0.1 for {e}"
    return defaults.UNKNOWN_SELECTIVITY, f"default selectivity {defaults.UNKNOWN_SELECTIVITY} for {e}"


def _moved_comparison(op: FunctionName, left: Expr, right: Expr,
                      columns: Mapping[Column, ColumnEstimate]) -> float | None:
    """Share of rows where a column compares with another column moved by a constant
    (``rank = rank - 1``: a row and its neighbour by rank; ``d3.d_date > d1.d_date + 5``), the
    two taken as independent: an equality matches the two distributions value by value (as a
    join class does), a range compares them (``compare_columns``). None unless both sides are
    such columns."""
    a, b = _moved(left, columns), _moved(right, columns)
    if a is None or b is None or a.kind is None or a.kind != b.kind:
        return None
    if a.rows <= 0 or b.rows <= 0:
        return 0.0
    if op in ("eq", "neq"):
        equal = min(matching_tuples([a, b]) / (a.rows * b.rows), 1.0)
        return equal if op == "eq" else max((1.0 - a.null_fraction) * (1.0 - b.null_fraction) - equal, 0.0)
    return compare_columns(op, a, b)


def _moved(e: Expr, columns: Mapping[Column, ColumnEstimate]) -> ColumnEstimate | None:
    """The distribution of a comparison's side that is a column, or a column moved by a constant:
    ``x + c``, ``x - c`` (``c`` a whole number: the values keep their type), other affine forms
    of a number (``arithmetic.with_constant``), and ``add_days(d, n)``."""
    if isinstance(e, ColumnRef):
        return columns.get(e.column)
    if not (isinstance(e, Call) and len(e.args) == 2):
        return None
    first, second = e.args
    if e.name == "add_days":
        days = constant_value(second)
        column = columns.get(first.column) if isinstance(first, ColumnRef) else None
        if column is None or column.kind != "date" or not isinstance(days, int) or isinstance(days, bool):
            return None
        return shifted(column, dt.timedelta(days=days))
    if e.name not in OPERATIONS:
        return None
    for ref, other, constant_first in ((first, second, False), (second, first, True)):
        if not isinstance(ref, ColumnRef) or ref.column not in columns:
            continue
        value = constant_value(other)
        if not isinstance(value, (int, float, decimal.Decimal)) or isinstance(value, bool):
            return None
        column = columns[ref.column]
        if column.kind != "number":
            return None
        if isinstance(value, int) and (e.name == "add" or (e.name == "subtract" and not constant_first)):
            found = shifted(column, value if e.name == "add" else -value)
            if found is not None:
                return found
        return with_constant(e.name, column, float(value), constant_first)
    return None


def _or_share(e: SpecialForm, shares: list[float]) -> float:
    """The share of rows an OR keeps from its disjuncts' shares: their sum where all restrict
    one column (disjoint ranges and values), else by inclusion-exclusion as if independent."""
    same_column = len({frozenset(columns_of(a)) for a in e.args}) == 1 and len(columns_of(e)) == 1
    if same_column:
        return min(1.0, sum(shares))
    remaining = 1.0
    for s in shares:
        remaining *= 1.0 - s
    return 1.0 - remaining


def _selectivity_of(e: Expr, columns: Mapping[Column, ColumnEstimate], rows: float,
                    origins: Mapping[Column, Origin] | None = None) -> tuple[float, str | None]:
    total, note, _ = _narrowing_of(e, columns, rows, origins)
    return total, note


def _narrowing_of(e: Expr, columns: Mapping[Column, ColumnEstimate], rows: float,
                  origins: Mapping[Column, Origin] | None = None) \
        -> tuple[float, str | None, dict[Column, ColumnEstimate]]:
    """The share of rows a conjunction keeps (its conjuncts as independent), its first note,
    and the columns it narrows, as narrowed."""
    narrowed: dict[Column, ColumnEstimate] = {}
    local: ChainMap[Column, ColumnEstimate] = layered(narrowed, columns)
    total = 1.0
    note = None
    for part in conjuncts(e):
        result = restrict(part, local, rows, origins)
        total *= result.selectivity
        note = note or result.note
        if result.column is not None and result.estimate is not None:
            local[result.column] = result.estimate
        for column, estimate in result.also:
            local[column] = estimate
    return total, note, narrowed


def _as_kind(value, kind: str):
    if value is None:
        return None
    if kind == "timestamp" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.datetime.combine(value, dt.time())
    if kind == "date" and isinstance(value, dt.datetime):
        return value.date()
    if kind in ("date", "timestamp") and isinstance(value, str):
        # A string met by a date or timestamp column is read as the date it spells, as the
        # engines cast it (``d_date BETWEEN '2000-01-27' AND ...``); one that spells none stays
        # a string, which no bound compares with.
        parsed = _iso_date_or_time(value, kind)
        return value if parsed is None else parsed
    if kind == "number" and isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, decimal.Decimal):
        # Statistics hold numbers as floats (``stats.model``), and a decimal compares with a
        # float exactly and hashes apart from it: the float 0.07 is above Decimal("0.07"), so
        # ``l_discount = 0.07`` found no most common value and ``BETWEEN 0.05 AND 0.07`` lost
        # its upper value.
        return float(value)
    return value


def _iso_date_or_time(text: str, kind: str) -> dt.date | None:
    """``text`` as a date (``kind`` "date") or a timestamp, where it is one in ISO form; else None."""
    try:
        if kind == "date":
            return dt.date.fromisoformat(text.strip())
        return dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def _no_columns(column: Column) -> None:
    """The columns of a predicate that reads none (``evaluate`` asks for none)."""
    return None
