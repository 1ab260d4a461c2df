"""Projector mode is for the back row: at 1280×720 the graph gets the room (the code pane folds, the
caption keeps the current line), no graph text under 16 px, captions of 24 px, toasts never over
the caption. Screenshots in test-artifacts/."""

from __future__ import annotations

import pytest

SMALLEST_TEXT = """() => { const k = window.__fg.graph.transform.k; let min = Infinity;
  const W = innerWidth, H = innerHeight;
  for (const t of document.querySelectorAll('svg.fg-graph text')) {
    if (!t.textContent.trim()) continue;
    const cs = getComputedStyle(t); if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    const r = t.getBoundingClientRect(); if (!r.width || r.right < 0 || r.bottom < 0 || r.left > W || r.top > H) continue;
    min = Math.min(min, parseFloat(cs.fontSize) * k); }
  return min; }"""


def boxes_overlap(a, b):
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or
                a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("example", ["13_broadcast_bias", "16_two_layer_mlp", "17_linear_regression"])
def test_projector_text_reads_from_the_back_row(browser, server, shot, example):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(f"{server['url']}/#example={example}&projector=1")
    page.wait_for_function("document.body.dataset.ready")
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    page.evaluate("window.__fg.setStep(3)")
    page.wait_for_timeout(300)
    assert page.locator("#editor").is_hidden()  # the code pane folded: the graph has the room
    assert page.evaluate(SMALLEST_TEXT) >= 16 - 0.05
    cap = page.locator("#caption")
    assert float(page.evaluate("parseFloat(getComputedStyle(document.getElementById('caption')).fontSize)")) >= 24
    assert "line" in cap.locator(".cap-line").inner_text()  # the current line stays in view
    shot(page, f"projector_{example}")
    # leaving projector mode brings the code back
    page.get_by_role("button", name="Projector mode").click()
    page.locator("#editor").wait_for(state="visible")
    ctx.close()


def test_projector_toast_never_covers_the_caption(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(f"{server['url']}/#example=01_square_of_sum&projector=1")
    page.wait_for_function("document.body.dataset.ready")
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate("window.__fg.setStep(0)")
    for _ in range(n):  # step forward to the end: the backward's "graph freed" toast comes up
        page.evaluate("window.__fg.setStep(window.__fg.step + 1)")
        if page.locator(".toast").count():
            break
    toast = page.locator(".toast").first
    toast.wait_for(state="visible")
    assert not boxes_overlap(toast.bounding_box(), page.locator("#caption").bounding_box())
    ctx.close()
