"""Drawing primitives shared by the plan and memo drawings: boxes sized to their text.

SVG text is measured conservatively: a monospace glyph is at most 0.6 em wide, so a box sized
from its characters always holds its text (labels never cut off).
"""

from __future__ import annotations

import html

FONT_SIZE = 11
CHAR_W = FONT_SIZE * 0.6
LINE_H = 15
PAD = 7
WRAP = 64          # characters per line of a node's label; longer text wraps, never cut


def text_width(text: str) -> float:
    return len(text) * CHAR_W


def wrap(text: str, width: int = WRAP) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after commas and spaces
    where possible; every character is kept."""
    lines: list[str] = []
    while len(text) > width:
        cut = max(text.rfind(", ", 0, width) + 1, text.rfind(" ", 0, width))
        cut = cut if cut > width // 3 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    lines.append(text)
    return lines


def svg_box(x: float, y: float, lines: list[str], fill: str, stroke: str, bold_first: bool = True,
            width: float | None = None) -> str:
    """One box sized to its text (at least ``width``), grouped with it (``<g class="node">``)."""
    own, height = box_size(lines)
    width = max(own, width or 0.0)
    parts = [f'<g class="node"><rect x="{x:.0f}" y="{y:.0f}" width="{width:.0f}" height="{height:.0f}" rx="6" '
             f'fill="{fill}" stroke="{stroke}"/>']
    for i, line in enumerate(lines):
        weight = ' font-weight="bold"' if bold_first and i == 0 else ""
        parts.append(f'<text x="{x + PAD:.0f}" y="{y + PAD + (i + 1) * LINE_H - 4:.0f}"{weight}>'
                     f'{html.escape(line)}</text>')
    parts.append("</g>")
    return "".join(parts)


def box_size(lines: list[str]) -> tuple[float, float]:
    return max(text_width(line) for line in lines) + 2 * PAD, len(lines) * LINE_H + 2 * PAD - 2
