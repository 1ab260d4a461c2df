"""Issue 23/24, the phone (390×844, touch): the page scrolls (code, output, then the graph), the graph's
viewport is at least 60% of the screen's height with the caption and tools over it, the transport sits right
below it and the loss chart last. At End the graph shows nodes in the free part of its viewport, and on the
pass's last step that step's nodes are inside the viewport and under no overlay; the transport's buttons are
>= 44 px. Screenshots in test-artifacts/ (phone2_*)."""

from __future__ import annotations

import pytest
from test_camera_bands import OVERLAYS, PHONE, overlap
from test_readable_laptop import open_page

BOX = "(sel) => (({x, y, width, height}) => ({x, y, width, height}))(document.querySelector(sel).getBoundingClientRect())"
NODE_BOXES = """() => [...document.querySelectorAll('svg.fg-graph .fg-node')].map(e => e.getBoundingClientRect())
  .filter(r => r.width).map(r => ({x: r.x, y: r.y, width: r.width, height: r.height}))"""

# the nodes of the step the camera follows (an update's parameters too, which no phase colour lights)
FOLLOWED_BOXES = """() => { const g = window.__fg.graph; return (g.stepIds || []).map((id) => g.nodeEls.get(id)).filter(Boolean)
  .map((rec) => rec.g.getBoundingClientRect()).filter(r => r.width).map(r => ({x: r.x, y: r.y, width: r.width, height: r.height})); }"""


def show_step(page, k: int) -> None:
    page.evaluate(f"window.__fg.setStep({k})")
    page.wait_for_function(f"document.body.dataset.step === '{k}'")
    page.evaluate("document.getElementById('graph-wrap').scrollIntoView({block: 'start'})")


def in_free_view(box: dict, wrap: dict, covers: dict) -> bool:
    inside = (box["y"] >= wrap["y"] - 1 and box["y"] + box["height"] <= wrap["y"] + wrap["height"] + 1 and
              box["x"] >= wrap["x"] - 1 and box["x"] + box["width"] <= wrap["x"] + wrap["width"] + 1)
    return inside and not [name for name, c in covers.items() if overlap(box, c)]


@pytest.mark.parametrize("case", ["03_polynomial", "18_module_sgd"])
def test_phone_graph_gets_the_screen(browser, server, shot, case):
    context, page, errors = open_page(browser, server, f"#example={case}", PHONE, has_touch=True, is_mobile=True)
    end = page.evaluate("window.__fg.model.resultStep")  # End: the pass's result, after its last step
    show_step(page, end)
    wrap = page.evaluate(BOX, "#graph-wrap")
    assert wrap["height"] >= 0.6 * PHONE["height"], wrap
    assert wrap["y"] >= -1 and wrap["y"] + wrap["height"] <= PHONE["height"] + 1, wrap  # all of it on screen at once
    covers = page.evaluate(OVERLAYS)
    nodes = page.evaluate(NODE_BOXES)
    shot(page, f"phone2_{case}_end_graph")
    # readable, so a wide graph runs off the view's side; what is on screen is under no overlay
    assert [b for b in nodes if in_free_view(b, wrap, covers)], (case, nodes, wrap, covers)
    for b in nodes:
        hit = [name for name, c in covers.items() if overlap(b, c)]
        assert not hit, (case, b, hit)
    # the step End shows: its nodes are in the graph's view clear of the caption and tools (an update's
    # parameters spread wider than a phone at a readable zoom: the others run off its side, under nothing)
    boxes = page.evaluate(FOLLOWED_BOXES)
    if not boxes:  # End after `backward()` follows no step: the pass's last step then
        show_step(page, end - 1)
        covers = page.evaluate(OVERLAYS)
        boxes = page.evaluate(FOLLOWED_BOXES)
        shot(page, f"phone2_{case}_last_step")
    assert [b for b in boxes if in_free_view(b, wrap, covers)], (case, boxes, wrap, covers)
    for box in boxes:
        assert not [name for name, c in covers.items() if overlap(box, c)], (case, box, covers)
    # the transport follows the graph, the loss chart comes last; every transport button is a finger's size
    transport = page.evaluate(BOX, ".transport")
    assert transport["y"] >= wrap["y"] + wrap["height"] - 1, (transport, wrap)
    if page.evaluate("!document.getElementById('training').hidden"):
        training = page.evaluate(BOX, "#training")
        assert training["y"] >= transport["y"] + transport["height"] - 1 and training["height"] >= 120, training  # not squeezed
    page.locator(".transport").scroll_into_view_if_needed()
    for height in page.evaluate("[...document.querySelectorAll('.transport .icon-btn')].filter((e) => e.offsetParent).map((e) => e.getBoundingClientRect().height)"):
        assert height >= 44, height
    page.locator("#to-end").click()
    page.wait_for_function(f"document.body.dataset.step === '{end}'")
    page.evaluate("document.querySelector('.transport').scrollIntoView({block: 'start'})")
    assert page.evaluate(BOX, ".topbar")["height"] >= 44  # the page scrolls; nothing in it is squeezed
    shot(page, f"phone2_{case}_below")
    page.evaluate("document.querySelector('.layout').scrollIntoView({block: 'start'})")
    shot(page, f"phone2_{case}_top")
    assert not errors, errors
    context.close()
