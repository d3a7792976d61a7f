"""The memo for people: text (``cbo explain --memo``), JSON, and an SVG graph for notebooks.

Groups are listed from the root down. Each expression shows its operator, its input groups,
and the cost of its best physical alternative (the subtree's total), or "pruned" when every
alternative was abandoned against the bound, or "not costed" when the search never needed
it. The winner of each group under the required properties is marked ``*``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from cbo.ir.expressions import TRUE
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
    operator_name,
)
from cbo.memo.memo import Group, group_of
from cbo.memo.search import Optimized
from cbo.physical.plan import PhysicalPlan
from cbo.svg import FONT_SIZE, box_size, svg_box


def label(expr: Plan, width: int = 90) -> str:
    """An expression in one line: operator, its input groups, its main argument."""
    inputs = ", ".join(repr(child) for child in expr.children)
    detail = ""
    if isinstance(expr, Join) and expr.condition != TRUE:
        detail = str(expr.condition)
    elif isinstance(expr, Filter):
        detail = str(expr.predicate)
    elif isinstance(expr, Scan):
        detail = expr.table
    elif isinstance(expr, Aggregate):
        detail = "group by " + ", ".join(str(c) for c in expr.group_by) if expr.group_by else "scalar"
    elif isinstance(expr, GroupingSets):
        detail = "sets " + ", ".join("(" + ", ".join(str(expr.keys[i]) for i in s) + ")" for s in expr.sets)
    elif isinstance(expr, Project):
        detail = ", ".join(str(c) for c, _ in expr.assignments)
    elif isinstance(expr, Sort):
        detail = ", ".join(str(k) for k in expr.keys)
    elif isinstance(expr, Limit):
        detail = f"{expr.count}"
    elif isinstance(expr, SetOp):
        detail = expr.kind
    elif isinstance(expr, (CteAnchor, CteConsumer)):
        detail = expr.name
    text = operator_name(expr) + (f" ({inputs})" if inputs else "") + (f" {detail}" if detail else "")
    return text if len(text) <= width else text[: width - 1] + "…"


def _cost(optimized: Optimized, group: Group, index: int) -> str:
    key = (group.id, index)
    if key not in optimized.expression_costs:
        bound = optimized.expression_bounds.get(key)
        if bound is not None and bound != float("inf"):
            # Never costed because its inputs alone already cost this much, at least the winner's.
            return f"not costed, ≥ {bound:,.4g}"
        return "not costed"
    cost = optimized.expression_costs[key]
    return "pruned" if cost is None else f"cost {cost:,.4g}"


def chosen_winners(optimized: Optimized) -> dict[int, PhysicalPlan]:
    """Group id -> the operator of the chosen physical plan that runs there (enforcers are
    skipped: their group's operator is below them; a group the plan uses twice shows the
    first met from the root). Read from the plan itself, not recomputed from the memo."""
    found: dict[int, PhysicalPlan] = {}
    for node in optimized.physical.walk():
        if node.is_enforcer or node.group is None or node.expression is None:
            continue   # an exchange or sort, or the projection restoring the output order
        found.setdefault(node.group.find().id, node)
    return found


def _winner_index(group: Group, winner: PhysicalPlan | None) -> int | None:
    if winner is None:
        return None
    for index, expr in enumerate(group.expressions):
        if expr is winner.expression:
            return index
    return None


def counters_json(optimized: Optimized) -> dict[str, Any]:
    body = asdict(optimized.counters)
    body["groups"] = len(optimized.memo)
    body["expressions"] = optimized.memo.expression_count
    body["elapsed_ms"] = round(body["elapsed_ms"], 2)
    return body


def memo_text(optimized: Optimized) -> str:
    c = counters_json(optimized)
    lines = [f"Memo: {c['groups']} groups, {c['expressions']} expressions; {c['join_pairs']} join pairs, "
             f"{c['rule_applications']} rule applications, {c['duplicates']} duplicates; "
             f"{c['alternatives_costed']} alternatives costed, {c['alternatives_pruned']} pruned; "
             f"{c['elapsed_ms']:.1f} ms",
             f"Chosen plan: G{optimized.root.id}, cost {optimized.cost:,.4g}"]
    if c["budget_exhausted"]:
        lines.append(f"Search budget exhausted ({c['budget_exhausted']}): best plan among those explored")
    if c["heuristic_regions"]:
        lines.append(f"Join regions ordered greedily (above max_reordered_joins): {c['heuristic_regions']}")
    chosen = chosen_winners(optimized)
    for group in reversed(optimized.memo.live):
        winner = _winner_index(group, chosen.get(group.id))
        columns = ", ".join(str(col) for col in group.output)
        if len(columns) > 70:
            columns = columns[:69] + "…"
        lines.append("")
        lines.append(f"G{group.id}  est. rows {group.rows:,.1f}  [{columns}]")
        lines.extend(f"      note: {note}" for note in optimized.memo.notes_of(group))
        for index, expr in enumerate(group.expressions):
            mark = "*" if index == winner else " "
            strategy = ""
            if index == winner:
                physical = chosen[group.id]
                if physical.algorithm.shown:
                    strategy = f"  [{physical.algorithm.shown}, {physical.rule}]"
            rule = optimized.memo.added_by.get(expr)
            by = f"  <- {rule}" if rule else ""
            lines.append(f"  {mark} {index:<3} {label(expr)}  ({_cost(optimized, group, index)}){strategy}{by}")
    return "\n".join(lines)


def memo_json(optimized: Optimized) -> dict[str, Any]:
    groups = []
    chosen = chosen_winners(optimized)
    for group in reversed(optimized.memo.live):
        winner = chosen.get(group.id)
        expressions = []
        for index, expr in enumerate(group.expressions):
            cost = optimized.expression_costs.get((group.id, index))
            expressions.append({"index": index, "operator": operator_name(expr), "label": label(expr, 400),
                                "children": [group_of(child).id for child in expr.children],
                                "cost": cost, "costed": (group.id, index) in optimized.expression_costs,
                                # The rule that added the expression (None: the query as written).
                                "rule": optimized.memo.added_by.get(expr)})
            bound = optimized.expression_bounds.get((group.id, index))
            if (group.id, index) not in optimized.expression_costs and bound is not None and bound != float("inf"):
                # Never costed: its inputs alone cost at least this, no less than the winner.
                expressions[-1]["lower_bound"] = bound
        body: dict[str, Any] = {"id": group.id, "estimated_rows": round(group.rows, 3),
                                "columns": [str(col) for col in group.output], "expressions": expressions}
        notes = optimized.memo.notes_of(group)
        if notes:
            body["notes"] = notes
        if winner is not None:
            body["winner"] = {"expression": _winner_index(group, winner), "cost": winner.total,
                              "strategy": winner.algorithm.shown, "rule": winner.rule,
                              "delivered": str(winner.delivered),
                              "inputs": [i.group.find().id for i in winner.inputs]}
        groups.append(body)
    return {"root": optimized.root.id, "cost": optimized.cost, "counters": counters_json(optimized), "groups": groups}


def memo_svg(optimized: Optimized, max_groups: int = 400) -> str:
    """Groups as boxes in layers (inputs below), edges to input groups; the winning plan in bold."""
    groups = optimized.memo.live[-max_groups:]
    shown = {g.id for g in groups}
    height: dict[int, int] = {}
    for group in groups:  # children come before parents in the memo
        below = [height.get(group_of(child).id, 0) for expr in group.expressions
                 for child in expr.children if group_of(child).id in shown]
        height[group.id] = 1 + max(below) if below else 0
    layers: dict[int, list[Group]] = {}
    for group in groups:
        layers.setdefault(height[group.id], []).append(group)
    top = max(layers) if layers else 0
    winners = chosen_winners(optimized)
    labels = {}
    for group in groups:
        winner = winners.get(group.id)
        name = operator_name(winner.expression) if winner else operator_name(group.first)
        labels[group.id] = [f"G{group.id}: {len(group.expressions)} expr · {group.rows:,.1f} rows", name]
    # One box width for the whole drawing, the widest label's (measured as in EXPLAIN's drawing).
    box_w = max((box_size(lines)[0] for lines in labels.values()), default=150.0)
    box_h = box_size(["", ""])[1]
    gap_x, gap_y = 16, 46
    width = max(len(layer) for layer in layers.values()) * (box_w + gap_x) + gap_x if layers else 200
    total_h = (top + 1) * (box_h + gap_y) + gap_y
    position: dict[int, tuple[float, float]] = {}
    for level, layer in layers.items():
        y = float(gap_y + (top - level) * (box_h + gap_y))
        offset = (width - len(layer) * (box_w + gap_x) + gap_x) / 2
        for i, group in enumerate(layer):
            position[group.id] = (offset + i * (box_w + gap_x), y)
    chosen = {(g, i.group.find().id) for g, w in winners.items() for i in w.inputs}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{total_h:.0f}" '
             f'font-family="monospace" font-size="{FONT_SIZE}">']
    for group in groups:
        x, y = position[group.id]
        targets = {group_of(child).id for expr in group.expressions for child in expr.children}
        for target in sorted(targets & shown):
            tx, ty = position[target]
            bold = (group.id, target) in chosen
            parts.append(f'<line x1="{x + box_w / 2:.0f}" y1="{y + box_h:.0f}" x2="{tx + box_w / 2:.0f}" y2="{ty:.0f}" '
                         f'stroke="{"#c0392b" if bold else "#bbb"}" stroke-width="{2.5 if bold else 0.8}"/>')
    for group in groups:
        x, y = position[group.id]
        on_path = any(group.id in pair for pair in chosen) or group is optimized.root
        parts.append(svg_box(x, y, labels[group.id], "#fdebd0" if on_path else "#f4f6f7", "#555",
                             bold_first=False, width=box_w))
    parts.append("</svg>")
    return "".join(parts)


class MemoView:
    """A memo that renders itself: text in a REPL, a graph in Jupyter, JSON on request."""

    def __init__(self, optimized: Optimized):
        self.optimized = optimized

    def text(self) -> str:
        return memo_text(self.optimized)

    def json(self) -> dict[str, Any]:
        return memo_json(self.optimized)

    def __repr__(self) -> str:
        return self.text()

    def _repr_svg_(self) -> str:
        return memo_svg(self.optimized)
