"""EXPLAIN: plans as an indented text tree (like Presto's) or as JSON, and as SVG for notebooks.

JSON form: ``{"plan": node}`` where every node has ``operator`` (string), ``estimated_rows``
(number: cbo's cardinality estimate), ``children`` (list) and its details: predicate,
join type and condition, grouping keys and aggregates, sort keys, the table and source of
scans and, at the top of each subtree that runs in a JDBC source, ``pushed_sql``: the query
sent to it (Spark reads it as ``SELECT <columns> FROM (<pushed_sql>) alias``, with a key range
per partition when read in parallel), ``source`` and, for a subplan the search pushed whole
(a remote-query operator), ``pushed_bytes`` (its estimated result bytes) and, when its read is
split (``cbo.exec.remote_partitions``), ``pushed_partitions`` (``{"column", "lower", "upper",
"partitions"}``: Spark reads the query once per range of that result column, in parallel);
the nodes inside carry
``in_pushed_sql: true``; ``estimate_defaults``: what the node's estimate assumes where the statistics do not tell
(default selectivities, missing statistics, set operations' and NOT IN's assumptions, the
pessimistic mode's bounds), listed at the node that introduced them;
``optimizer_notes``: decisions the search noted at the node's group (a subplan not pushed to
its source, and why: a capability the dialect lacks, a setting, or cost with both costs);
``assumed_keys`` at a scan: unique keys no catalog declares, with their ``source`` (``hint``:
the query's ``#distinct@`` hint; ``statistics``: an exact distinct count); at the top level
``warnings`` (what planning ignored, e.g. a malformed hint). EXPLAIN ANALYZE adds
``actual_rows`` (null where not measured) and ``actual_rows_from`` (where the number comes from,
or why there is none); on Spark also ``spark_operators`` and ``spark_time_s`` (the Spark
operators attributed to the node and their time metrics, task time summed over tasks), and at
the root ``analyze`` (engine, runs, wall time and rows of the one run; on Spark, ``adaptive``:
the ``spark_adaptive`` setting it ran with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cbo.ir.dispatch import OperatorTable
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
    Values,
    Window,
    operator_name,
)
from cbo.svg import FONT_SIZE, box_size, svg_box, wrap


@dataclass
class NodeInfo:
    operator: str
    details: dict[str, Any]
    children: list[NodeInfo] = field(default_factory=list)
    estimated_rows: float | None = None
    actual_rows: int | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"operator": self.operator, "estimated_rows": self.estimated_rows}
        if self.actual_rows is not None or "actual_rows_from" in self.details:
            body["actual_rows"] = self.actual_rows
        body.update(self.details)
        body["children"] = [c.to_json() for c in self.children]
        return body


Annotator = Callable[[Plan, NodeInfo], None]


def describe(plan: Plan, annotate: Annotator | None = None) -> NodeInfo:
    """The plan as a tree of :class:`NodeInfo`; ``annotate`` may add e.g. pushed SQL or row counts."""
    info = NodeInfo(operator_name(plan), _details(plan), [describe(c, annotate) for c in plan.children])
    if annotate is not None:
        annotate(plan, info)
    return info


def _columns(columns: Iterable[object]) -> list[str]:
    return [str(c) for c in columns]


def _details(plan: Plan) -> dict[str, Any]:
    return DETAILS[plan](plan)


# What EXPLAIN shows of each operator (cbo.ir.dispatch).
DETAILS: OperatorTable[Callable[[Any], dict[str, Any]]] = OperatorTable("EXPLAIN")
@DETAILS.register(Scan)
def _scan_details(plan: Scan) -> dict[str, Any]:
    details: dict[str, Any] = {"table": plan.table, "columns": _columns(plan.columns)}
    if plan.assumed_keys:   # keys no catalog declares: say who vouches for each
        details["assumed_keys"] = [{"columns": _columns(k.columns), "source": k.source} for k in plan.assumed_keys]
    return details
DETAILS.register(Filter)(lambda plan: {"predicate": str(plan.predicate)})
DETAILS.register(Project)(lambda plan: {"assignments": {str(c): str(e) for c, e in plan.assignments}})
DETAILS.register(Aggregate)(lambda plan: {"group_by": _columns(plan.group_by),
                                          "aggregates": {str(c): str(a) for c, a in plan.aggregates}})
DETAILS.register(Sort)(lambda plan: {"keys": [str(k) for k in plan.keys]})


@DETAILS.register(GroupingSets)
def _grouping_sets_details(plan: GroupingSets) -> dict[str, Any]:
    return {"keys": {str(o): str(k) for k, o in zip(plan.keys, plan.outputs)},
            "sets": [_columns(plan.keys[i] for i in s) for s in plan.sets],
            "aggregates": {str(c): str(a) for c, a in plan.aggregates},
            "groupings": {str(c): "GROUPING(" + ", ".join(str(plan.keys[i]) for i in g) + ")"
                          for c, g in plan.groupings}}
DETAILS.register(Limit)(lambda plan: {"count": plan.count, "offset": plan.offset})
DETAILS.register(SetOp)(lambda plan: {"columns": _columns(plan.columns)})
DETAILS.register(Values)(lambda plan: {"columns": _columns(plan.columns), "rows": len(plan.rows)})
DETAILS.register(CteAnchor)(lambda plan: {"cte": plan.name, "number": plan.cte})
DETAILS.register(CteConsumer)(lambda plan: {"cte": plan.name, "number": plan.cte, "columns": _columns(plan.columns)})
DETAILS.register(Window)(lambda plan: {"partition_by": _columns(plan.partition_by),
                                       "order_by": [str(k) for k in plan.order_by],
                                       "functions": {str(c): str(f) for c, f in plan.functions}})


@DETAILS.register(Join)
def _join_details(plan: Join) -> dict[str, Any]:
    details: dict[str, Any] = {"join_type": plan.kind, "condition": str(plan.condition),
                               "equi_keys": [[str(a), str(b)] for a, b in plan.equi_keys]}
    if plan.kind == "mark":
        details["mark"] = str(plan.mark)
        details["mark_predicate"] = str(plan.mark_predicate)
    return details


def _headline(info: NodeInfo) -> str:
    d = info.details
    op = info.operator
    if op == "Scan":
        inside = d["table"]
    elif op == "Filter":
        inside = d["predicate"]
    elif op == "Project":
        inside = ", ".join(k if k == v else f"{k} := {v}" for k, v in d["assignments"].items())
    elif op.endswith("Join"):
        inside = d["condition"] + (f"; {d['mark']} := {d['mark_predicate']}" if "mark" in d else "")
    elif op in ("Aggregate", "Distinct"):
        parts = [f"group by [{', '.join(d['group_by'])}]"] if d["group_by"] else []
        parts += [f"{k} := {v}" for k, v in d["aggregates"].items()]
        inside = ", ".join(parts)
    elif op == "GroupingSets":
        parts = ["sets " + ", ".join("(" + ", ".join(s) + ")" for s in d["sets"])]
        parts += [k if k == v else f"{k} := {v}" for k, v in d["keys"].items()]
        parts += [f"{k} := {v}" for k, v in {**d["aggregates"], **d["groupings"]}.items()]
        inside = ", ".join(parts)
    elif op == "Sort":
        inside = ", ".join(d["keys"])
    elif op == "Limit":
        inside = f"{d['count']}" + (f" offset {d['offset']}" if d["offset"] else "")
    elif op == "CteAnchor":
        inside = f"{d['cte']}: producer, then body"
    elif op == "CteConsumer":
        inside = f"{d['cte']}: " + ", ".join(d["columns"])
    elif op == "Window":
        parts = [f"partition by [{', '.join(d['partition_by'])}]"] if d["partition_by"] else []
        parts += [f"order by [{', '.join(d['order_by'])}]"] if d["order_by"] else []
        parts += [f"{k} := {v}" for k, v in d["functions"].items()]
        inside = ", ".join(parts)
    else:
        inside = ", ".join(d.get("columns", []))
    rows = [d["strategy"]] if d.get("strategy") else []
    if d.get("exchanges"):
        rows.append("inputs: " + " | ".join(d["exchanges"]))
    if d.get("runs_in"):
        rows.append(f"in the {d['runs_in']} above")
    if d.get("in_pushed_sql"):
        rows.append("in the pushed SQL above")
    if info.estimated_rows is not None:
        rows.append(f"est. rows {info.estimated_rows:,.0f}")
    if info.actual_rows is not None:
        rows.append(f"actual rows {info.actual_rows:,}")
    elif "actual_rows_from" in d:
        rows.append("actual rows not measured")
    return f"{op}[{inside}]" + (f"  ({'; '.join(rows)})" if rows else "")


def to_text(info: NodeInfo) -> str:
    lines: list[str] = []

    def visit(node: NodeInfo, depth: int) -> None:
        lines.append("    " * depth + "- " + _headline(node))
        if "pushed_sql" in node.details:
            lines.append("    " * depth + f"      pushed SQL ({node.details['source']}): " + node.details["pushed_sql"])
            if "pushed_bytes" in node.details and node.estimated_rows is not None:
                lines.append("    " * depth + f"      remote query: est. rows {node.estimated_rows:,.0f}, "
                             f"bytes {node.details['pushed_bytes']:,.0f}")
            split = node.details.get("pushed_partitions")
            if split:
                lines.append("    " * depth + f"      remote read: {split['partitions']} parallel partitions on "
                             f"{split['column']} in [{split['lower']}, {split['upper']}]")
        for key in node.details.get("assumed_keys", []):
            lines.append("    " * depth + f"      unique key ({', '.join(key['columns'])}) from {key['source']}")
        for note in node.details.get("estimate_defaults", []):
            lines.append("    " * depth + "      estimate assumes: " + note)
        for note in node.details.get("optimizer_notes", []):
            lines.append("    " * depth + "      optimizer: " + note)
        if "actual_rows_from" in node.details:
            lines.append("    " * depth + "      " + _actual_line(node.details))
        for child in node.children:
            visit(child, depth + 1)

    visit(info, 0)
    if info.details.get("shuffle_partitions"):
        lines.append(f"Shuffle partitions: {info.details['shuffle_partitions']}")
    if info.details.get("cost_profile"):
        lines.append(f"Cost profile: {info.details['cost_profile']}, for {info.details['cluster']}")
    analyze = info.details.get("analyze")
    if analyze:
        if analyze["engine"] == "spark":
            adaptive = f" (adaptive execution: {analyze['adaptive']})" if "adaptive" in analyze else ""
            lines.append(f"Analyzed from one run on spark{adaptive}: {analyze['rows']:,} rows in "
                         f"{analyze['wall_time_s']:.3f} s; Spark's times are task time summed over tasks")
        else:
            lines.append(f"Rows counted per subplan on {analyze['engine']} ({analyze['runs'] - 1} counts); "
                         f"the whole plan ran once in {analyze['wall_time_s']:.3f} s ({analyze['rows']:,} rows)")
    return "\n".join(lines)


def _actual_line(d: dict[str, Any]) -> str:
    """Where a node's actual rows come from and, on Spark, the operators and times behind it."""
    parts = [f"actual: {d['actual_rows_from']}"]
    if d.get("spark_operators"):
        parts.append("Spark: " + ", ".join(d["spark_operators"]))
    if d.get("spark_time_s"):
        parts.append(", ".join(f"{name} {seconds:.3f} s" for name, seconds in d["spark_time_s"].items()))
    return "; ".join(parts)


def node_label(info: NodeInfo) -> list[str]:
    """A node's label in the drawing: the operator, its argument, then its figures, one per line."""
    headline = _headline(info)
    inside, _, figures = headline.partition("  (")
    lines = wrap(inside)
    if figures:
        lines += [part.strip() for part in figures[:-1].split("; ")]
    if "pushed_sql" in info.details:
        lines += wrap("pushed SQL: " + info.details["pushed_sql"])
    return lines


def to_svg(info: NodeInfo) -> str:
    """A top-down tree drawing, self-contained (no Graphviz needed), every box sized to its text."""
    gap_x, gap_y = 20, 30
    labels: dict[int, list[str]] = {}
    sizes: dict[int, tuple[float, float]] = {}
    depth_h: dict[int, float] = {}
    span: dict[int, float] = {}

    def measure(node: NodeInfo, depth: int) -> float:
        labels[id(node)] = node_label(node)
        sizes[id(node)] = box_size(labels[id(node)])
        depth_h[depth] = max(depth_h.get(depth, 0.0), sizes[id(node)][1])
        below = sum(measure(c, depth + 1) for c in node.children) + gap_x * (len(node.children) - 1)
        span[id(node)] = max(sizes[id(node)][0], below if node.children else 0.0)
        return span[id(node)]

    measure(info, 0)
    tops = [0.0]
    for depth in sorted(depth_h):
        tops.append(tops[-1] + depth_h[depth] + gap_y)
    positions: dict[int, tuple[float, float]] = {}

    def place(node: NodeInfo, left: float, depth: int) -> None:
        width = sizes[id(node)][0]
        positions[id(node)] = (left + (span[id(node)] - width) / 2 + 5, tops[depth] + 5)
        children_w = sum(span[id(c)] for c in node.children) + gap_x * (len(node.children) - 1)
        x = left + (span[id(node)] - children_w) / 2
        for child in node.children:
            place(child, x, depth + 1)
            x += span[id(child)] + gap_x

    place(info, 0.0, 0)
    width = span[id(info)] + 10
    height = tops[-1] - gap_y + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'font-family="monospace" font-size="{FONT_SIZE}">']

    def draw(node: NodeInfo) -> None:
        x, y = positions[id(node)]
        w, h = sizes[id(node)]
        for child in node.children:
            cx, cy = positions[id(child)]
            parts.append(f'<line x1="{x + w / 2:.0f}" y1="{y + h:.0f}" x2="{cx + sizes[id(child)][0] / 2:.0f}" '
                         f'y2="{cy:.0f}" stroke="#888"/>')
            draw(child)
        parts.append(svg_box(x, y, labels[id(node)], "#eef4fb", "#4a78b0"))

    draw(info)
    parts.append("</svg>")
    return "".join(parts)


def add_estimate(info: NodeInfo, node: Plan, planned: Any, estimator: Any = None) -> None:
    """``node``'s estimated rows (its memo group's: ``PlannedQuery.estimate``) and the defaults
    that estimate introduced (those its inputs' estimates do not already carry)."""
    estimate = planned.estimate(node, estimator)
    info.estimated_rows = round(estimate.rows, 1)
    inherited = frozenset().union(*[planned.estimate(c, estimator).notes for c in node.children])
    fresh = sorted(estimate.notes - inherited)
    if fresh:
        info.details["estimate_defaults"] = fresh
    # Decisions the search recorded at the node's memo group (the byte-reduction threshold).
    optimized = getattr(planned, "optimized", None)
    operator = planned.operator(node) if optimized is not None else None
    group = operator.group if operator is not None and operator.logical is node else None
    if group is not None and optimized is not None and optimized.memo.notes_of(group):
        info.details["optimizer_notes"] = optimized.memo.notes_of(group)


def add_physical_details(info: NodeInfo, node: Plan, operator: Any) -> None:
    """The planner's physical choices for ``node``, from the physical operator running it
    (``cbo.physical.plan.PhysicalPlan``, or None): its strategy and, per input, the exchanges
    and sorts Spark adds ("-" for none); or, for a node an operator above runs inside itself
    (a top-N's sort), which."""
    if operator is None:
        return
    if operator.logical is not node:
        info.details["runs_in"] = operator.algorithm.label
        return
    if operator.strategy:
        info.details["strategy"] = operator.strategy
    below = operator.exchanges()
    if any(below):
        info.details["exchanges"] = [e or "-" for e in below]
