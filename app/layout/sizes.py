"""Node sizes (points) for the layout, matched to how the page draws them (static/js/graph.js).

A tensor record is a header band (name, shape) over a ``data`` row and a ``grad`` row;
``static/js/config.js`` ``GRAPH.headerFrac`` splits the height and the page picks its font from
the row height: at ``TENSOR_H`` = 54 pt the text is about 10.7 pt, which stays readable when a
two-layer MLP is fitted into a 1280×720 window or projected. Records are ``TENSOR_MIN_W`` to
``TENSOR_MAX_W`` wide, enough for the name and the shape in that font (longer dotted names lose
their leading parts on the page: ``model.0.weight`` → ``0.weight``). An op is an ellipse sized to
its text (``** 2``, ``sum(1)``) in a font of about ``OP_FONT`` pt.
"""

from __future__ import annotations

TENSOR_H = 54.0
TENSOR_MIN_W = 96.0
TENSOR_MAX_W = 130.0
HEADER_FRAC = 0.36  # config.js GRAPH.headerFrac
TENSOR_FONT = (TENSOR_H * (1 - HEADER_FRAC) / 2) * 0.62  # graph.js: 0.62 × row height
CHAR_W = 0.62 * TENSOR_FONT  # monospace advance
UNNAMED_CHARS = 9  # unnamed intermediates get an expression on the page ("pred − y", "relu(…)")

OP_H = 32.0
OP_MIN_W = 34.0
OP_FONT = 13.0
OP_CHAR_W = 0.62 * OP_FONT


def tensor_size(label: str, shape, named: bool = True) -> tuple[float, float]:
    """Header text: name, a gap, the shape ("4×3"); 6 pt padding each side."""
    shape_chars = len("×".join(str(s) for s in shape or []))
    chars = (len(label) if named else UNNAMED_CHARS) + (shape_chars + 1 if shape_chars else 0)
    w = 12.0 + chars * CHAR_W
    return (round(min(TENSOR_MAX_W, max(TENSOR_MIN_W, w)), 1), TENSOR_H)


def op_size(text: str) -> tuple[float, float]:
    """An ellipse whose middle holds the text with a little room at the ends."""
    w = len(text) * OP_CHAR_W + 18.0
    return (round(max(OP_MIN_W, w), 1), OP_H)
