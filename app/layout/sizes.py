"""Node sizes (points) for the layout, matched to how the page draws them (static/js/graph.js).

A tensor record is a header band (name, shape) over a ``data`` row and a ``grad`` row;
``headerFrac`` splits the height and the page picks its font from the row height: at ``recordH``
= 54 pt the text is about 10.7 pt, which stays readable when a two-layer MLP is fitted into a
1280×720 window or projected. Records are ``recordMinW`` to ``recordMaxW`` wide, enough for the
name and the shape in that font (longer dotted names lose their leading parts on the page:
``model.0.weight`` → ``0.weight``). An op is an ellipse sized to its text (``** 2``, ``sum(1)``)
in a font of about ``opFont`` pt.

``LAYOUT`` is the Python twin of ``LAYOUT`` in ``static/js/config.js``, where the page's visual
constants live: the same keys and numbers (tests/browser/test_layout_twin.py compares them).
"""

from __future__ import annotations

LAYOUT = {
    "recordH": 54.0,  # tensor record height
    "recordMinW": 96.0,
    "recordMaxW": 130.0,
    "headerFrac": 0.36,  # header band, then the value row and the grad row
    "textFill": 0.62,  # text size as a fraction of its band's height
    "glyphW": 0.62,  # monospace advance per em
    "recordTextPad": 12.0,  # header width that is not text
    "unnamedChars": 9,  # unnamed intermediates get an expression on the page ("pred − y", "relu(…)")
    "opH": 32.0,
    "opMinW": 34.0,
    "opFont": 13.0,
    "opPad": 18.0,  # ellipse width beyond its text
    "clusterFont": 11,  # module box titles (app/layout/dot.py keeps a band this high above the members)
    "numbersUpTo": 24,  # tensors this small write their numbers on their cells ...
    "numberW": 4.1,  # ... each in this many ems of the record font (6 characters: "-0.339", and a gap)
    "numberLineH": 1.3,  # ... and this many ems high
    "numbersMaxW": 250,  # a record grows to hold its numbers at the record font up to this wide ...
    "numbersMaxRows": 4,  # ... and this many rows of numbers
    "rowLabelW": 26,  # the "data" / "grad" label before a row's cells
    "cellGap": 3,  # around a row's cells
}

TENSOR_H = LAYOUT["recordH"]
TENSOR_MIN_W = LAYOUT["recordMinW"]
TENSOR_MAX_W = LAYOUT["recordMaxW"]
HEADER_FRAC = LAYOUT["headerFrac"]
TENSOR_FONT = (TENSOR_H * (1 - HEADER_FRAC) / 2) * LAYOUT["textFill"]  # the row's text size
CHAR_W = LAYOUT["glyphW"] * TENSOR_FONT  # monospace advance
UNNAMED_CHARS = LAYOUT["unnamedChars"]

OP_H = LAYOUT["opH"]
OP_MIN_W = LAYOUT["opMinW"]
OP_FONT = LAYOUT["opFont"]
OP_CHAR_W = LAYOUT["glyphW"] * OP_FONT


def tensor_size(label: str, shape, named: bool = True) -> tuple[float, float]:
    """Header text: name, a gap, the shape ("4×3"), and the insets; a small tensor's rows are sized for its
    numbers at the record font (`numbers_size`)."""
    shape_chars = len("×".join(str(s) for s in shape or []))
    chars = (len(label) if named else UNNAMED_CHARS) + (shape_chars + 1 if shape_chars else 0)
    w = min(TENSOR_MAX_W, max(TENSOR_MIN_W, LAYOUT["recordTextPad"] + chars * CHAR_W))
    h = TENSOR_H
    numbers = numbers_size(shape)
    if numbers is not None:
        w, h = max(w, numbers[0]), max(h, numbers[1])
    return (round(w, 1), round(h, 1))


def numbers_size(shape) -> tuple[float, float] | None:
    """The record a tensor of `shape` needs to write each number on its cells (rows × cols from the last dim,
    as static/js/graphdraw.js `cellNumbers` lays them) at the record font; None when it has no numbers or
    would grow past `numbersMaxW` / `numbersMaxRows` (its numbers are then smaller, or hover only)."""
    numel = 1
    for n in shape or ():
        numel *= n
    if not shape or numel < 1 or numel > LAYOUT["numbersUpTo"]:
        return None
    cols = max(1, min(shape[-1], numel))
    rows = -(-numel // cols)
    w = LAYOUT["rowLabelW"] + cols * LAYOUT["numberW"] * TENSOR_FONT + LAYOUT["cellGap"]
    if w > LAYOUT["numbersMaxW"] or rows > LAYOUT["numbersMaxRows"]:
        return None
    row_h = max((TENSOR_H * (1 - HEADER_FRAC)) / 2, rows * LAYOUT["numberLineH"] * TENSOR_FONT + LAYOUT["cellGap"])
    return (w, TENSOR_H * HEADER_FRAC + 2 * row_h)


def op_size(text: str) -> tuple[float, float]:
    """An ellipse whose middle holds the text with a little room at the ends."""
    w = len(text) * OP_CHAR_W + LAYOUT["opPad"]
    return (round(max(OP_MIN_W, w), 1), OP_H)
