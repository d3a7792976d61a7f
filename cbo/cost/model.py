"""The cost of a physical alternative, from its groups' estimated rows and row widths.

Costs are in abstract units of "one row handled once"; only their ratios matter to the search.
This is the first, uncalibrated model: it charges what every engine pays (reading rows,
building and probing hash tables, producing output) and nothing Spark-specific. The constants
live here, in one place, so that a calibrated profile can replace them.

A cost depends only on the expression's own operator and its input and output groups' logical
properties, never on the plans chosen below: that is what lets the search cost an alternative
before optimizing its inputs and prune it when the local cost alone exceeds the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cbo.ir.operators import Aggregate, Filter, Join, Limit, Plan, Project, Scan, SetOp, Sort, Values


@dataclass(frozen=True)
class CostConstants:
    scan_row: float = 1.0           # per row read
    scan_byte: float = 0.01         # per byte read
    filter_row: float = 0.2         # per input row of a filter
    project_row: float = 0.1        # per row of a projection
    build_row: float = 2.0          # per row inserted into a hash table
    build_byte: float = 0.02        # per byte held by a hash table (memory pressure)
    probe_row: float = 1.0          # per row looked up in a hash table
    output_row: float = 0.5         # per row a join or aggregate emits
    nested_loop_pair: float = 0.2   # per pair of rows a nested loop compares
    aggregate_row: float = 1.5      # per input row of a hash aggregation
    sort_row: float = 0.2           # per row and comparison (n log n)
    setop_row: float = 0.5          # per input row of a set operation


DEFAULT = CostConstants()


class CostModel:
    def __init__(self, constants: CostConstants = DEFAULT):
        self.k = constants

    def local(self, node: Plan, strategy: str | None, out: tuple[float, float],
              inputs: list[tuple[float, float]]) -> float:
        """The cost of ``node`` alone. ``out`` and ``inputs`` are (estimated rows, bytes per row)
        of its result and of its inputs in the node's order."""
        k = self.k
        out_rows, out_width = out
        if isinstance(node, Scan):
            return out_rows * (k.scan_row + out_width * k.scan_byte)
        if isinstance(node, Filter):
            return inputs[0][0] * k.filter_row
        if isinstance(node, Project):
            return inputs[0][0] * k.project_row
        if isinstance(node, Join):
            (left_rows, _), (right_rows, right_width) = inputs
            if strategy == "nested_loop":
                return left_rows * right_rows * k.nested_loop_pair + out_rows * k.output_row
            # The right input is the build side (cbo's plans put the side to hash on the right).
            build = right_rows * (k.build_row + right_width * k.build_byte)
            return build + left_rows * k.probe_row + out_rows * k.output_row
        if isinstance(node, Aggregate):
            return inputs[0][0] * k.aggregate_row + out_rows * k.output_row
        if isinstance(node, Sort):
            rows = inputs[0][0]
            return rows * math.log2(max(rows, 2.0)) * k.sort_row
        if isinstance(node, Limit):
            return 0.0
        if isinstance(node, SetOp):
            return sum(rows for rows, _ in inputs) * k.setop_row * (2.0 if node.distinct else 1.0)
        if isinstance(node, Values):
            return out_rows * k.scan_row
        raise TypeError(f"no cost for {type(node).__name__}")
