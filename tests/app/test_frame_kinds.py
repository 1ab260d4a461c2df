"""The page handles exactly the frame kinds of the trace contract: ``FRAME_KINDS`` in static/js/framekinds.js
is engine/trace_events.py's ``KINDS`` (every kind the server emits is handled; the page lists none the
server does not know), and the page's code compares a frame's kind only with kinds of that list."""

from __future__ import annotations

import json
import re
from pathlib import Path

from engine import trace_events

JS = Path(__file__).resolve().parents[2] / "static" / "js"
FRAME_KINDS_JS = JS / "framekinds.js"


def js_string_list(text: str, name: str) -> list[str]:
    """The string items of `export const NAME = [ ... ]` (comments allowed between them)."""
    m = re.search(r"export const " + name + r"\s*=\s*\[(.*?)\];", text, re.S)
    assert m, f"{name} is not an exported array literal in {FRAME_KINDS_JS.name}"
    body = re.sub(r"//[^\n]*", "", m.group(1))
    items = re.findall(r'"([^"\\]*)"', body)
    assert re.fullmatch(r'[\s,]*', re.sub(r'"[^"\\]*"', "", body)), f"{name} holds something other than strings"
    return items


def js_string_set(text: str, name: str) -> list[str]:
    m = re.search(r"export const " + name + r"\s*=\s*new Set\(\[(.*?)\]\);", text, re.S)
    assert m, f"{name} is not an exported Set of an array literal in {FRAME_KINDS_JS.name}"
    return json.loads("[" + m.group(1) + "]")


def test_the_page_handles_exactly_the_contract_kinds():
    kinds = js_string_list(FRAME_KINDS_JS.read_text(encoding="utf-8"), "FRAME_KINDS")
    assert len(kinds) == len(set(kinds)), "a kind is listed twice"
    page_kinds = trace_events.KINDS - trace_events.BUILDER_ONLY_KINDS
    assert set(kinds) - page_kinds == set(), "the page lists kinds the server never emits"
    assert page_kinds - set(kinds) == set(), "the server emits kinds the page does not list"


def test_carried_kinds_are_frame_kinds():
    text = FRAME_KINDS_JS.read_text(encoding="utf-8")
    carried = js_string_set(text, "CARRIED_KINDS")
    assert carried and set(carried) <= set(js_string_list(text, "FRAME_KINDS"))
    run_level = trace_events.META_KINDS - {trace_events.STEP_STATS} - trace_events.BUILDER_ONLY_KINDS
    assert run_level <= set(carried)  # run-level kinds are no step


def test_the_page_compares_frames_only_with_listed_kinds():
    kinds = set(js_string_list(FRAME_KINDS_JS.read_text(encoding="utf-8"), "FRAME_KINDS"))
    used: dict[str, set[str]] = {}
    for path in JS.glob("*.js"):
        text = path.read_text(encoding="utf-8")
        # a frame is `f` or a step's `main` across the page's modules
        found = set(re.findall(r'\b(?:f|main)\.kind\s*[!=]==?\s*"(\w+)"', text))
        if path.name == "frames.js":  # applyFrame's switch (f.kind)
            found |= set(re.findall(r'^\s*case "(\w+)":', text, re.M))
        if found:
            used[path.name] = found
    assert {"frames.js", "replay.js", "lazyframes.js"} <= set(used)
    unknown = {name: sorted(found - kinds) for name, found in used.items() if found - kinds}
    assert not unknown, f"frames compared with kinds the contract does not define: {unknown}"
