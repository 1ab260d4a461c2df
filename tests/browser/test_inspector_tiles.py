"""Issue 10 on the page: conv weights and feature maps as heatmap tiles in the inspector, the
optimizer's state of a parameter, conv/pool nodes written as PyTorch's calls, and the layer
examples loading and drawing. Screenshots in test-artifacts/ (page10_*.png)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect
from test_page import api_trace, open_app, pause, wait_ready
from test_page import run_source as start_run

ROOT = Path(__file__).resolve().parents[2]
LENET = (ROOT / "examples" / "20_lenet_digits.py").read_text()
NEW_EXAMPLES = ["20_lenet_digits", "21_rnn_through_time", "22_batch_norm_train_eval", "23_seeded_training_loop"]

FEATURE_MAPS = """import torch
import torch.nn as nn
torch.manual_seed(0)
conv = nn.Conv2d(1, 4, 3, padding=1)
x = torch.randn(1, 1, 6, 6)
fmap = conv(x)
many = torch.randn(1, 30, 2, 2, requires_grad=True)
loss = fmap.sum() + many.sum()
loss.backward()
"""


def node_id(page, name: str) -> str:
    return page.evaluate("name => window.__fg.graph.model.graph.nodes.find((n) => n.name === name || (n.name || '').endsWith('.' + name)).id", name)


def run_source(page, source: str):
    """Run ``source`` and wait until the run is over: a streamed run is drawn ("ready") at its first graph, and
    its ``done`` redraws the graph and the inspector (an element held from before is then detached)."""
    start_run(page, source)
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=60000)


def to_the_end(page):
    """Paused at the last step (the End key), waited on the player's own state."""
    pause(page)
    page.keyboard.press("End")
    page.wait_for_function("() => document.body.dataset.step === document.body.dataset.steps")


def select_node(page, name: str):
    nid = node_id(page, name)
    # big graphs put the node off screen: the node's own click handler, as a click on it would
    page.locator(f'g[data-node-id="{nid}"]').dispatch_event("click")
    return nid


def hover_first_pixel(page, canvas):
    canvas.scroll_into_view_if_needed()  # the inspector scrolls: a long chain rule pushes the state below its fold
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + 1, box["y"] + 1)


def test_conv_weight_tiles_and_momentum_buffer(page, shot):
    open_app(page)
    run_source(page, LENET)
    pause(page)
    page.keyboard.press("End")
    select_node(page, "conv1.weight")
    insp = page.locator("#inspector")
    value_tiles = insp.locator(".tiles").first
    canvases = value_tiles.locator("canvas")
    assert canvases.count() == 6  # conv1.weight (6, 1, 5, 5): one 5×5 tile per output channel
    assert value_tiles.locator("figcaption").all_inner_texts()[:2] == ["[0, 0]", "[1, 0]"]
    # hover reads the number: the first pixel is conv1.weight[0, 0, 0, 0] of this pass
    model_value = page.evaluate("window.__fg.graph.model.graph.nodes.find((n) => (n.name || '').endsWith('conv1.weight')).value")
    hover_first_pixel(page, canvases.first)
    readout = value_tiles.locator(".tiles-readout").inner_text()
    assert readout.startswith("value[0, 0, 0, 0] = ")
    assert abs(float(readout.split("= ")[1]) - model_value[0][0][0][0]) <= 1e-3 * max(1, abs(model_value[0][0][0][0]))
    # the tiles are drawn: not one flat colour
    distinct = canvases.first.evaluate("""c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const s = new Set(); for (let i = 0; i < d.length; i += 4) s.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return s.size; }""")
    assert distinct >= 10
    # SGD with momentum: the momentum buffer after the pass's step, as tiles too
    text = insp.inner_text()
    assert "optimizer state" in text.lower() and "SGD.step()" in text and "momentum_buffer" in text
    mom = insp.locator(".optim-state .tiles canvas")
    assert mom.count() == 6
    trace = api_trace(page, LENET)
    pass_index = page.evaluate("window.__fg.model.passIndex")
    step = next(f for f in trace["passes"][pass_index]["frames"] if f["kind"] == "optim_step")
    buf = step["state"][node_id(page, "conv1.weight")]["momentum_buffer"]
    hover_first_pixel(page, mom.first)
    r = insp.locator(".optim-state .tiles-readout").inner_text()
    assert r.startswith("momentum_buffer[0, 0, 0, 0] = ")
    assert abs(float(r.split("= ")[1]) - buf[0][0][0][0]) <= 1e-3 * max(1e-3, abs(buf[0][0][0][0]))
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_conv_weight.png"))
    insp.locator(".optim-state").scroll_into_view_if_needed()
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_momentum.png"))
    shot(page, "page10_lenet_conv_weight")
    # the conv and pool nodes read as PyTorch's calls
    texts = page.eval_on_selector_all("svg.fg-graph g.fg-op .fg-optext", "els => els.map((e) => e.textContent)")
    assert "conv2d(padding=2)" in texts and "max_pool2d(kernel_size=2)" in texts and "conv2d" in texts, texts
    conv = page.evaluate("window.__fg.graph.model.graph.nodes.find((n) => n.op === 'convolution').id")
    page.locator(f'g[data-node-id="{conv}"]').dispatch_event("click")
    assert insp.locator("h2").inner_text().strip() == "conv2d(padding=2) (convolution)"
    rows = insp.locator(".insp-props").inner_text()
    assert "padding" in rows and "(2, 2)" in rows  # the inspector keeps every parameter, defaults too
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_conv_op.png"))
    page.errors.check()


def test_feature_map_tiles_cap_and_adam_state(page, shot):
    open_app(page)
    run_source(page, FEATURE_MAPS)
    to_the_end(page)
    select_node(page, "fmap")
    insp = page.locator("#inspector")
    expect(insp.locator(".tiles").first.locator("canvas")).to_have_count(4)  # (1, 4, 6, 6): a tile per channel
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_feature_map.png"))
    html = page.locator("html")
    theme = html.get_attribute("data-theme") or ""
    page.get_by_role("button", name="Toggle dark theme").click()
    expect(html).not_to_have_attribute("data-theme", theme)
    expect(insp.locator(".tiles").first.locator("canvas")).to_have_count(4)  # redrawn in the dark theme's colours
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_feature_map_dark.png"))
    page.get_by_role("button", name="Toggle dark theme").click()
    expect(html).to_have_attribute("data-theme", theme)
    # a small image-like value keeps the numbers written on its heatmap
    run_source(page, "import torch\nsmall = torch.arange(12.0).view(1, 3, 2, 2)\n")
    to_the_end(page)
    select_node(page, "small")
    expect(insp.locator(".heatmap-cell")).to_have_count(12)
    expect(insp.locator(".tiles")).to_have_count(0)
    run_source(page, FEATURE_MAPS)
    to_the_end(page)
    select_node(page, "many")
    tiles = insp.locator(".tiles").first
    expect(tiles.locator("canvas")).to_have_count(24)  # TILES.maxTiles
    expect(tiles).to_contain_text("+6 more (30 tiles of 2×2)")
    page.errors.check()

    # Adam: exp_avg, exp_avg_sq and step of a parameter after the step
    seeded = (ROOT / "examples" / "23_seeded_training_loop.py").read_text()
    run_source(page, seeded)
    to_the_end(page)
    select_node(page, "0.weight")
    for name in ("Adam.step()", "exp_avg", "exp_avg_sq", "step = 1"):
        expect(insp).to_contain_text(name)
    insp.locator(".optim-state").scroll_into_view_if_needed()
    insp.screenshot(path=str(ROOT / "test-artifacts" / "page10_inspector_adam_state.png"))
    page.errors.check()


@pytest.mark.parametrize("example", NEW_EXAMPLES)
def test_layer_examples_load_and_draw(page, shot, example):
    open_app(page)
    page.get_by_role("button", name="Examples", exact=True).click()
    gallery = page.get_by_role("dialog")
    gallery.wait_for(state="visible")
    prev = page.evaluate("document.body.dataset.ready")
    gallery.locator(f'[data-example="{example}"]').click()
    wait_ready(page, prev)
    pause(page)
    page.keyboard.press("End")
    assert page.locator("svg.fg-graph g.fg-node").count() >= 3
    assert page.locator("svg.fg-graph g.fg-op").count() >= 3
    assert page.locator("#error").is_hidden()
    source = (ROOT / "examples" / f"{example}.py").read_text()
    assert page.locator("#stdout").inner_text().strip() == api_trace(page, source)["stdout"].strip()
    # the whole graph (zoom-to-fit after the page's readable fit shows all of it, however small)
    page.locator("#zoom-fit").click()
    page.wait_for_timeout(400)  # the zoom transition (DURATIONS.zoom): a picture, not an assert
    shot(page, f"page10_example_{example}")
    if page.locator("#pass-nav").is_visible():
        # the second pass: the training step alone (the first also builds the data)
        page.get_by_role("button", name="Next pass").click()
        page.keyboard.press("End")
        assert page.evaluate("window.__fg.model.passIndex") == 1
        page.locator("#zoom-fit").click()
        page.wait_for_timeout(400)
        shot(page, f"page10_example_{example}_pass2")
    page.errors.check()
