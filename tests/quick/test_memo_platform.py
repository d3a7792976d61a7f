"""The memo as a platform: rule patterns bind every alternative, and equal groups merge.

A toy rule (``MergeFilters``: ``Filter[p](Filter[q](X))`` to ``Filter[p AND q](X)``) makes the
cases: it derives, in one group, an expression that may already live in another group.
"""

from __future__ import annotations

from typing import Iterable

from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import ColumnRef, Constant, compare, conjunction
from cbo.ir.expressions import Column
from cbo.ir.operators import Filter, Plan, Project, Scan
from cbo.memo.memo import Group, Memo
from cbo.memo.pattern import Pattern, bindings
from cbo.memo.rules.base import RuleSet, TransformationRule
from cbo.memo.rules.implement import implementation_rules
from cbo.memo.search import Optimizer

A = Column(1, "a", T.BIGINT, True)
B = Column(2, "b", T.BIGINT, True)
X = Scan("lake.t", (A, B), ("a", "b"))
P = compare("gt", ColumnRef(A), Constant(1, T.BIGINT))
Q = compare("lt", ColumnRef(B), Constant(5, T.BIGINT))
COMBINED = Filter(X, conjunction([P, Q]))
NESTED = Filter(Filter(X, Q), P)


class MergeFilters(TransformationRule):
    """Filter[p](Filter[q](X)) = Filter[p AND q](X): a row passes both or neither."""

    name = "MergeFilters"
    patterns = (Pattern(Filter, (Pattern(Filter),)),)

    def apply(self, expr: Plan, group: Group, context: object) -> Iterable[Plan]:
        assert isinstance(expr, Filter) and isinstance(expr.input, Filter)
        yield Filter(expr.input.input, conjunction([expr.predicate, expr.input.predicate]))


def project(plan: Plan) -> Project:
    return Project(plan, ((A, ColumnRef(A)),))


def test_an_expression_found_in_another_group_merges_the_groups_and_their_parents():
    memo = Memo(Estimator({}))
    combined, nested = memo.insert(project(COMBINED)), memo.insert(project(NESTED))
    assert combined is not nested
    filter_group = nested.first.input.group                      # Filter[p](G: Filter[q](X))
    derived = Filter(memo.insert(X).ref, conjunction([P, Q]))     # what MergeFilters derives there
    merged, new = memo.add(derived, filter_group)
    assert not new and merged is filter_group.find()
    assert memo.insert(COMBINED) is merged                        # the two filter groups are one
    # Their parents, Project over each, became equal expressions: those groups merged too.
    assert combined.find() is nested.find()
    assert memo.counters.merges == 2
    top = combined.find()
    assert len(top.expressions) == 1 and top.expressions[0].input.group is merged
    assert {e.predicate for e in merged.expressions} == {P, conjunction([P, Q])}   # both forms, one group


def test_a_rule_binds_the_alternatives_another_rule_added():
    memo = Memo(Estimator({}))
    top = memo.insert(project(NESTED))
    filter_group = top.first.input.group
    memo.add(Filter(memo.insert(X).ref, conjunction([P, Q])), filter_group)
    over_filters = Pattern(Project, (Pattern(Filter),))
    bound = list(bindings(over_filters, top.first))
    # Both Filter expressions of the input group are bound, not only the first (written) one.
    assert len(bound) == 2
    assert {type(b.input.input).__name__ for b in bound} == {"GroupRef"}
    assert {b.input.predicate for b in bound} == {P, conjunction([P, Q])}


def test_the_search_merges_groups_a_rule_proves_equal():
    # Union-free plan where both forms feed one join: after MergeFilters, both inputs are one group.
    from cbo.ir.operators import Join

    plan = Join("inner", COMBINED, project(NESTED), compare("eq", ColumnRef(A), ColumnRef(A)))
    rules = RuleSet([MergeFilters(), *implementation_rules()])
    result = Optimizer(Estimator({}), rules=rules).optimize(plan)
    assert result.counters.merges >= 1
    assert result.counters.by_rule["MergeFilters"] >= 1


def test_patterns_are_described_and_required():
    assert MergeFilters.patterns[0].describe() == "Filter(Filter)"
    described = {r["name"]: r["pattern"] for r in RuleSet([MergeFilters()]).describe()}
    assert described == {"MergeFilters": "Filter(Filter)"}

    class NoPattern(TransformationRule):
        name = "NoPattern"

    import pytest
    with pytest.raises(ValueError, match="declares no patterns"):
        RuleSet([NoPattern()])


def test_a_binding_names_the_groups_that_stand_after_exploring_its_inputs_merged_some():
    """Binding ``Join(*, Filter)`` explores the right input first; exploring it here proves the
    left input equal to another group, which absorbs and empties it. The binding must read the
    group that stays: an emptied group has no expression to derive keys from (a crash that the
    reorder family of the equivalence benchmark found in PushTableIntoAggregate)."""
    from cbo.ir.operators import Join

    c = Column(3, "c", T.BIGINT, True)
    right = Filter(Scan("lake.u", (c,), ("c",)), compare("gt", ColumnRef(c), Constant(1, T.BIGINT)))
    memo = Memo(Estimator({}))
    stays = memo.insert(COMBINED)
    top = memo.insert(Join("inner", NESTED, right, compare("eq", ColumnRef(A), ColumnRef(c))))
    absorbed = top.first.left.group

    def explore(group: Group) -> None:   # what MergeFilters derives in the left input
        memo.add(Filter(memo.insert(X).ref, conjunction([P, Q])), absorbed)

    bound = list(bindings(Pattern(Join, (None, Pattern(Filter))), top.first, explore))
    assert absorbed.find() is stays and not absorbed.expressions
    assert len(bound) == 1 and bound[0].left.group is stays
    assert bound[0].left.unique_keys == stays.unique_keys and bound[0].left.output == (A, B)
