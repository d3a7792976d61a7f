"""A physical plan given as cbo's own EXPLAIN JSON, found again in its query's memo to run.

``cbo explain --format json`` writes the plan with the query (``sql``, ``dialect``). To run
exactly that plan, cbo plans the query again (the memo of a query is deterministic for the same
statistics and settings) and finds each operator of the JSON among the physical alternatives of
the memo (``cbo.memo.space``): the same operator with the same details (as EXPLAIN prints them:
columns, predicates, join kind and condition, grouping, sort keys), the same strategy, over the
plans found for its inputs. The exchanges and sorts between operators follow from what each
operator requires and what its input delivers; where the JSON lists them (``exchanges``) they
must be those. A plan found this way answers its query, since every plan of the memo does; a
plan with an operator the memo does not hold (edited, or from another query, or planned under
other settings) is refused with the place of the first operator that matches nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cbo.app.explain import DETAILS
from cbo.errors import CboError
from cbo.ir.operators import Plan, operator_name
from cbo.memo.memo import Group, GroupRef, PhysicalExpr
from cbo.memo.space import Choice, PlanSpace

if TYPE_CHECKING:
    from cbo.planner import PlannedQuery, Planner


class PlanFileError(CboError):
    """A plan file that is not a plan cbo can run for its query."""


def read_plan(text: str, where: str) -> dict[str, Any]:
    """The EXPLAIN JSON in ``text`` (``where`` names it in errors): a dict with a ``plan`` node."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanFileError(f"{where}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(body, dict) or not isinstance(body.get("plan"), dict):
        raise PlanFileError(f'{where}: not an EXPLAIN plan: expected an object with "plan" '
                            "(cbo explain --format json writes one)")
    _check_nodes(body["plan"], where, "plan")
    return body


def _check_nodes(node: Any, where: str, path: str) -> None:
    if not isinstance(node, dict):
        raise PlanFileError(f"{where}: {path} is not an operator (an object)")
    if not isinstance(node.get("operator"), str):
        raise PlanFileError(f'{where}: {path} has no "operator"')
    children = node.get("children", [])
    if not isinstance(children, list):
        raise PlanFileError(f'{where}: {path}.children is not a list')
    for index, child in enumerate(children):
        _check_nodes(child, where, f"{path}.children[{index}]")


def given_plan(planner: Planner, body: dict[str, Any], where: str, sql: str | None = None) -> PlannedQuery:
    """The planned query running exactly the plan ``body`` (``read_plan``'s) of its query
    (``sql`` when given, else the file's), numbered in its query's plan space."""
    sql = sql if sql is not None else body.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        raise PlanFileError(f'{where}: no query: the plan has no "sql" (cbo explain --format json writes it); '
                            "give it with -f FILE or as an argument")
    planned = planner.plan(sql)
    if planned.optimized is None or planned.optimized.search is None:
        raise PlanFileError(f"{where}: the query is planned without the memo search: no plan to match")
    space = planned.optimized.space
    matcher = _Matcher(space, where)
    root = space.root
    node = body["plan"]
    choice = matcher.match(node, "plan")
    if choice is None or choice.group is not root:
        # the projection that restores the query's column order is not a memo operator
        if node["operator"] == "Project" and len(node.get("children", [])) == 1:
            inner = matcher.match(node["children"][0], "plan.children[0]")
            if inner is not None and inner.group is root:
                choice = inner
                if not _restores_order(node, planned):
                    raise PlanFileError(f"{where}: plan: the top projection is not the query's output "
                                        f"({', '.join(planned.names)}) in its order")
        if choice is None or choice.group is not root:
            reason = matcher.failure or "its top computes part of it"
            raise PlanFileError(f"{where}: the plan does not answer its query: {reason}")
    taken = planner.plan_number(planned, space.rank(choice))
    _check_exchanges(taken, node, where)
    return taken


def _restores_order(node: dict[str, Any], planned: PlannedQuery) -> bool:
    physical = planned.physical
    assert physical is not None
    return physical.group is None and _details(physical.logical) == {k: node.get(k) for k in _details(physical.logical)}


def _details(plan: Plan) -> dict[str, Any]:
    """The node's details as EXPLAIN's JSON holds them (after a round trip through JSON)."""
    return json.loads(json.dumps(DETAILS[plan](plan), default=str))


def _same(plan: Plan, node: dict[str, Any]) -> bool:
    if operator_name(plan) != node["operator"]:
        return False
    details = _details(plan)
    return all(node.get(key) == value for key, value in details.items())


class _Matcher:
    """Finds JSON operators among the space's physical alternatives, bottom-up."""

    def __init__(self, space: PlanSpace, where: str):
        self.space = space
        self.where = where
        self.failure: str | None = None
        self.by_operator: dict[tuple[str, str | None], list[tuple[Group, PhysicalExpr]]] = {}
        for group in space.groups():
            for physical in space.physicals(group):
                key = (operator_name(physical.node), physical.algorithm.shown)
                self.by_operator.setdefault(key, []).append((group, physical))
        self.found: dict[int, Choice | None] = {}

    def match(self, node: dict[str, Any], path: str) -> Choice | None:
        """The plan of the space (under "any") the JSON ``node`` describes, None if none."""
        if id(node) in self.found:
            return self.found[id(node)]
        result = None
        candidates = self.by_operator.get((node["operator"], node.get("strategy")), [])
        for group, physical in candidates:
            if not _same(physical.node, node):
                continue
            inputs = list(self._inputs(physical.node, node, path))
            choices = [found for found in inputs if found is not None]
            if len(choices) != len(inputs) or len(choices) != len(physical.inputs):
                continue
            try:
                result = self._choice(group, physical, choices)
            except ValueError as exc:
                self._fail(f"{path} ({node['operator']}): {exc}")
                continue
            if result is not None:
                break
        if result is None and not candidates:
            self._fail(f"{path}: no {node['operator']}{_strategy(node)} in the query's memo")
        elif result is None:
            self._fail(f"{path}: no {node['operator']}{_strategy(node)} of the query's memo has these details "
                       "over these inputs")
        self.found[id(node)] = result
        return result

    def _fail(self, text: str) -> None:
        # the first failure met is the deepest: inputs are matched before their operator
        if self.failure is None:
            self.failure = text

    def _inputs(self, plan: Plan, node: dict[str, Any], path: str) -> Iterator[Choice | None]:
        """The plans found for the JSON nodes standing where ``plan`` (a memo expression, maybe
        several operators deep, a remote query's whole subplan) reads its input groups."""
        children = node.get("children", [])
        if len(children) != len(plan.children):
            yield None
            return
        for index, (inner, child) in enumerate(zip(plan.children, children)):
            where = f"{path}.children[{index}]"
            if isinstance(inner, GroupRef):
                found = self.match(child, where)
                yield found if found is not None and found.group is inner.group.find() else None
            elif _same(inner, child):
                yield from self._inputs(inner, child, where)
            else:
                yield None

    def _choice(self, group: Group, physical: PhysicalExpr, inputs: list[Choice]) -> Choice | None:
        """``physical`` over the plans ``inputs``, each with the enforcers its requirement needs."""
        lifted = tuple(self.space.lift(found, need) for found, need in zip(inputs, physical.required_inputs))
        wanted = tuple((c.group, need, c.delivered) for c, need in zip(lifted, physical.required_inputs))
        for option in self.space.options(group):
            if option.physical is physical and option.inputs == wanted:
                return Choice(option, lifted)
        return None


def _strategy(node: dict[str, Any]) -> str:
    return f" [{node['strategy']}]" if node.get("strategy") else ""


def _check_exchanges(planned: PlannedQuery, node: dict[str, Any], where: str) -> None:
    """The exchanges and sorts the JSON lists per operator input must be those the plan needs."""
    from cbo.app.explain import add_physical_details, describe

    physical = planned.physical
    assert physical is not None
    mismatch: list[str] = []

    def annotate(plan: Plan, info: Any) -> None:
        add_physical_details(info, plan, planned.operator(plan))

    made = describe(planned.plan, annotate).to_json()

    def compare(given: dict[str, Any], ours: dict[str, Any], path: str) -> None:
        if mismatch:
            return
        needed = ours.get("exchanges", ["-"] * len(ours["children"]))
        if "exchanges" in given and given["exchanges"] != needed:
            mismatch.append(f"{path} ({given['operator']}): its inputs need {needed}, "
                            f"the plan lists {given['exchanges']}")
        for index, (a, b) in enumerate(zip(given.get("children", []), ours["children"])):
            compare(a, b, f"{path}.children[{index}]")

    compare(node, made, "plan")
    if mismatch:
        raise PlanFileError(f"{where}: the exchanges differ from what the operators need: {mismatch[0]}")
