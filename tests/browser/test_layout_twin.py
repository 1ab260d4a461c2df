"""The page and the server agree on node sizes: ``LAYOUT`` in static/js/config.js (the page's
visual constants) equals its Python twin ``LAYOUT`` in app/layout/sizes.py. No browser needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.layout import sizes

CONFIG_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "config.js"


def js_layout(text: str) -> dict:
    """The object literal between ``// LAYOUT-BEGIN`` and ``// LAYOUT-END``: JSON once the
    ``export const LAYOUT =`` and the ``//`` comments are taken off."""
    block = re.search(r"// LAYOUT-BEGIN\n(.*?)// LAYOUT-END", text, re.S)
    assert block, "config.js lost its LAYOUT-BEGIN / LAYOUT-END markers"
    body = re.sub(r"^\s*export const LAYOUT\s*=\s*", "", block.group(1).strip())
    body = re.sub(r"//[^\n]*", "", body).strip().rstrip(";")
    return json.loads(body)


def test_config_js_layout_equals_sizes_py():
    assert js_layout(CONFIG_JS.read_text()) == sizes.LAYOUT


def test_sizes_are_derived_from_layout():
    L = sizes.LAYOUT
    assert sizes.TENSOR_H == L["recordH"] and sizes.HEADER_FRAC == L["headerFrac"]
    assert sizes.TENSOR_FONT == L["recordH"] * (1 - L["headerFrac"]) / 2 * L["textFill"]
    assert sizes.CHAR_W == L["glyphW"] * sizes.TENSOR_FONT and sizes.OP_CHAR_W == L["glyphW"] * L["opFont"]


def test_the_parser_sees_a_changed_number():
    text = CONFIG_JS.read_text().replace('"opPad": 18', '"opPad": 19')
    assert js_layout(text)["opPad"] == 19 != sizes.LAYOUT["opPad"]
