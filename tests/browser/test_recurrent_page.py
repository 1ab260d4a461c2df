"""Issue 10: a recurrent layer's time steps drawn as boxes inside the layer's box (real Chromium)."""
from __future__ import annotations

import pytest
from test_page import open_app, run_source

GRU_8 = """import torch
import torch.nn as nn
torch.manual_seed(0)
gru = nn.GRU(3, 4)
x = torch.randn(8, 1, 3)
out, h = gru(x)
loss = out.sum()
loss.backward()
"""

LSTM_8 = """import torch
import torch.nn as nn
torch.manual_seed(0)
lstm = nn.LSTM(3, 4)
x = torch.randn(8, 1, 3)
out, (h, c) = lstm(x)
loss = out.sum()
loss.backward()
print(out.grad_fn)
"""


def clusters(page):
    return page.evaluate("() => (window.__fg.graph.clusters || []).map(c => ({id: c.id, name: c.name, cls: c.cls, "
                         "parent: c.parent, n: (c.nodes || []).length}))")


def test_gru_time_steps_are_boxes_inside_the_layer(page, shot):
    if page.server_kind != "app":
        pytest.skip("needs the app's trace builder")
    open_app(page)
    run_source(page, GRU_8)
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    page.keyboard.press("End")
    cs = clusters(page)
    layer = next(c for c in cs if c["name"] == "gru")
    steps = [c for c in cs if c["cls"] == "time step"]
    assert [c["name"] for c in steps] == [f"gru.t={t}" for t in range(8)]
    assert all(c["parent"] == layer["id"] and c["n"] >= 10 for c in steps)  # each step's own cell ops
    titles = page.locator("svg.fg-graph g.fg-cluster").all_text_contents()
    assert any("gru.t=7" in t for t in titles)
    page.get_by_role("button", name="Zoom to fit").click()
    page.wait_for_timeout(400)
    shot(page, "issue10_gru_8_steps")
    page.errors.check()


def test_lstm_over_8_steps_is_one_fused_node(page, shot):
    if page.server_kind != "app":
        pytest.skip("needs the app's trace builder")
    open_app(page)
    run_source(page, LSTM_8)
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    page.keyboard.press("End")
    cs = clusters(page)
    assert any(c["name"] == "lstm" for c in cs) and not [c for c in cs if c["cls"] == "time step"]
    nodes = [n.get("grad_fn") for n in page.evaluate("window.__fg.graph.model.graph")["nodes"]]
    assert nodes.count("MkldnnRnnLayerBackward0") >= 1
    page.get_by_role("button", name="Zoom to fit").click()
    page.wait_for_timeout(400)
    shot(page, "issue10_lstm_8_steps")
    page.errors.check()


def test_gru_steps_readable_on_a_big_screen(browser, server, shot):
    if server["kind"] != "app":
        pytest.skip("needs the app's trace builder")
    ctx = browser.new_context(viewport={"width": 2600, "height": 1500})
    page = ctx.new_page()
    page.base = server["url"]
    try:
        open_app(page)
        run_source(page, GRU_8.replace("torch.randn(8, 1, 3)", "torch.randn(3, 1, 3)"))
        page.evaluate("window.__fg.playing && document.getElementById('play').click()")
        page.keyboard.press("End")
        page.get_by_role("button", name="Zoom to fit").click()
        page.wait_for_timeout(400)
        titles = page.locator("svg.fg-graph g.fg-cluster").all_text_contents()
        assert sum("time step" in t for t in titles) == 3
        shot(page, "issue10_gru_3_steps_big")
    finally:
        ctx.close()
