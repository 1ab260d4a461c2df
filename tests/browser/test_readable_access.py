"""Issue 23 §5: keyboard, motion, touch, contrast. The editor says how to leave it (CodeMirror's Esc
then Tab), focused nodes get a solid ring, prefers-reduced-motion stops autoplay and glides, "None"
reads at 4.5:1, touch targets are 44 px, a new run dims the last result at once, a syntax error
clears the legend, toasts do not linger, the loss chart fits its labels and has a log scale, a
figure is whole in the output pane, the offline file says which passes it does not hold.
Screenshots in test-artifacts/ (readable_*)."""

from __future__ import annotations

import pytest
from test_export_offline_file import EXAMPLE, export_file, offline

LAPTOP = {"width": 1366, "height": 768}
BIG_LOSS = """import torch
w = torch.tensor([40.0, 30.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.05)
for i in range(12):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
"""


@pytest.fixture
def laptop(browser, server):
    """A 1366×768 page (reduced motion: no autoplay, no glides — nothing moves under the asserts)."""
    ctx = browser.new_context(viewport=LAPTOP, reduced_motion="reduce")
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.base = server["url"]
    yield page
    ctx.close()


def ready(page, prev: str = ""):
    page.wait_for_function("prev => document.body.dataset.ready && document.body.dataset.ready !== prev", arg=prev, timeout=60000)
    page.wait_for_function("!document.getElementById('run').disabled", timeout=60000)


def run(page, source: str):
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    ready(page, prev)


def luminance(rgb):
    c = [v / 255 for v in rgb]
    c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def contrast(a, b):
    hi, lo = sorted([luminance(a), luminance(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


RGB = "c => { const m = c.match(/\\d+(\\.\\d+)?/g).map(Number); return m.slice(0, 3); }"


def test_editor_tab_indents_and_esc_then_tab_leaves(laptop, shot):
    page = laptop
    page.goto(page.base + "/#example=01_square_of_sum")
    ready(page)
    hint = page.locator("#editor-keys")
    assert hint.is_visible() and "Esc" in hint.inner_text() and "Tab" in hint.inner_text()
    assert page.locator(".cm-content").get_attribute("aria-describedby") == "editor-keys"
    page.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    before = page.evaluate("window.__fg.editor.text")
    page.keyboard.press("Tab")  # indents, as CodeMirror's indentWithTab does
    assert page.evaluate("window.__fg.editor.text") != before
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("window.__fg.editor.text") == before
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # Esc then Tab: the focus moves on, the text stays
    assert page.evaluate("!document.activeElement.closest('.cm-editor')")
    assert page.evaluate("window.__fg.editor.text") == before
    shot(page, "readable_editor_keys")
    assert not page.errors


def test_focused_node_has_a_solid_ring_of_its_own(laptop, shot):
    page = laptop
    page.goto(page.base + "/#example=13_broadcast_bias")
    ready(page)
    page.evaluate("window.__fg.setStep(2)")  # some records still "not computed yet" (dashed)
    node = page.locator("svg.fg-graph g.fg-node.pending").first
    node.focus()
    ring = node.evaluate("n => { const cs = getComputedStyle(n); return [n.matches(':focus-visible'), cs.outlineStyle, parseFloat(cs.outlineWidth)]; }")
    assert ring[0] and ring[1] == "solid" and ring[2] >= 2, ring
    shot(page, "readable_focus_ring")
    assert not page.errors


def test_reduced_motion_means_no_autoplay_and_no_glides(laptop):
    page = laptop
    page.goto(page.base + "/#example=03_polynomial")
    ready(page)
    assert page.evaluate("window.__fg.playing") is False
    assert page.evaluate("document.body.dataset.step === document.body.dataset.steps")  # the result, not a film
    # the zoom buttons and the camera jump: the new zoom is there at once, no transition in flight
    ratio = page.evaluate("() => { const g = window.__fg.graph, k0 = g.transform.k; g.zoomBy(1.3); return g.transform.k / k0; }")
    assert ratio == pytest.approx(1.3, rel=1e-3)
    assert page.evaluate("getComputedStyle(document.querySelector('.caption')).transitionDuration") in ("0s", "")
    assert not page.errors


def test_none_text_reads_at_4_5_to_1_in_the_light_theme(laptop):
    page = laptop
    page.goto(page.base + "/#example=13_broadcast_bias&theme=light")
    ready(page)
    page.evaluate("window.__fg.setStep(1)")
    texts = page.locator("svg.fg-graph text.fg-celltext.none, svg.fg-graph text.fg-celltext.pending")
    assert texts.count() > 0
    fill = page.evaluate(RGB, texts.first.evaluate("t => getComputedStyle(t).fill"))
    bg = page.evaluate(RGB, page.evaluate("getComputedStyle(document.querySelector('svg.fg-graph')).backgroundColor"))
    pending = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--pending')").strip()
    hatch = [int(pending[i:i + 2], 16) for i in (1, 3, 5)]  # the hatched cell's ground
    assert contrast(fill, bg) >= 4.5
    assert contrast(fill, hatch) >= 4.5  # "not yet" on its hatched cell too
    assert not page.errors


def test_touch_targets_are_44px_on_a_touch_screen(browser, server, shot):
    ctx = browser.new_context(viewport={"width": 820, "height": 1180}, has_touch=True, is_mobile=True, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(server["url"] + "/#example=16_two_layer_mlp")
    ready(page)
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    for sel in ["#to-start", "#step-back", "#play", "#step-fwd", "#to-end", "#zoom-in", "#zoom-out", "#zoom-fit"]:
        box = page.locator(sel).bounding_box()
        assert box["width"] >= 44 - 0.5 and box["height"] >= 44 - 0.5, (sel, box)
    shot(page, "readable_touch_tablet")
    ctx.close()


def test_a_new_run_dims_the_last_result_at_once(laptop):
    page = laptop
    page.goto(page.base + "/#example=01_square_of_sum")
    ready(page)
    held = []
    page.route("**/api/stream", lambda route: held.append(route))
    page.route("**/api/run", lambda route: held.append(route))
    page.evaluate("window.__fg.editor.text = 'import torch\\nx = torch.tensor(3.0, requires_grad=True)\\n(x * x).backward()\\n'")
    prev = page.evaluate("document.body.dataset.ready")
    page.get_by_role("button", name="Run", exact=True).click()
    # the answer is held back: the old graph is dimmed meanwhile
    assert page.evaluate("document.body.classList.contains('stale-result')")
    assert float(page.evaluate("getComputedStyle(document.getElementById('graph')).opacity")) < 0.5
    page.wait_for_function("() => true")  # a round trip: the held request has reached the route handler
    for route in held:
        route.continue_()
    page.unroute("**/api/stream")
    page.unroute("**/api/run")
    ready(page, prev)
    assert float(page.evaluate("getComputedStyle(document.getElementById('graph')).opacity")) == 1
    assert not page.errors


def test_a_syntax_error_clears_the_old_legend(laptop, shot):
    page = laptop
    page.goto(page.base + "/#example=13_broadcast_bias")
    ready(page)
    assert page.locator("#legend .chip").count() > 0
    run(page, "import torch\nx = (\n")
    assert page.locator("#error").is_visible()
    assert page.locator("#legend .chip").count() == 0 and not page.locator("#legend").is_visible()
    assert page.locator("#caption").inner_text() == ""
    shot(page, "readable_syntax_error")
    assert not page.errors


def test_graph_freed_toast_does_not_linger(laptop):
    page = laptop
    page.goto(page.base + "/#example=01_square_of_sum")
    ready(page)
    n = page.evaluate("window.__fg.model.steps.length")
    page.evaluate("window.__fg.setStep(0)")
    for _ in range(n):  # forward to the backward's "graph freed" banner
        page.evaluate("window.__fg.setStep(window.__fg.step + 1)")
        if page.locator(".toast").count():
            break
    assert page.locator(".toast").count() == 1
    at = page.evaluate("window.__fg.step")
    page.evaluate(f"window.__fg.setStep({at - 1})")  # back before it: gone
    assert page.locator(".toast").count() == 0
    page.evaluate(f"window.__fg.setStep({at})")
    assert page.locator(".toast").count() == 1
    page.evaluate("window.__fg.setStep(1)")  # on a forward step: gone
    assert page.locator(".toast").count() == 0
    assert not page.errors


# the y axis: its width and the widest label the chart drew on it (canvas px / devicePixelRatio)
Y_AXIS = """() => { const u = window.__fg.lossChart.plot, ax = u.axes[1];
  u.ctx.font = ax.font[0];
  const labels = ax._values || [];
  return { size: ax._size, labels, widest: Math.max(0, ...labels.map(v => u.ctx.measureText(v).width)) / devicePixelRatio }; }"""


def test_loss_chart_fits_its_labels_and_has_a_log_scale(laptop, shot):
    page = laptop
    page.goto(page.base + "/#example=01_square_of_sum")
    ready(page)
    run(page, BIG_LOSS)
    page.wait_for_selector("#training:not([hidden])")
    page.wait_for_function("window.__fg.lossChart.plot && window.__fg.lossChart.plot.axes[1]._values")
    y = page.evaluate(Y_AXIS)
    assert y["labels"] and all(len(v) <= 5 for v in y["labels"]), y  # "2.5k", not "2,500"
    assert y["widest"] < y["size"], y
    log = page.get_by_role("button", name="log scale")
    assert log.is_enabled()
    log.click()
    assert log.get_attribute("aria-pressed") == "true"
    page.wait_for_function("window.__fg.lossChart.plot && window.__fg.lossChart.plot.scales.y.distr === 3")
    y = page.evaluate(Y_AXIS)
    assert y["widest"] < y["size"], y
    shot(page, "readable_loss_log")
    assert not page.errors


def test_a_figure_is_whole_in_the_output_pane(laptop, shot):
    page = laptop
    page.goto(page.base + "/#example=19_linear_regression_plot")
    ready(page)
    img = page.locator("#stdout img.figure").first
    img.wait_for(state="visible")
    page.wait_for_function("document.querySelector('#stdout img.figure').complete")
    fig, pane = img.bounding_box(), page.locator("#stdout").bounding_box()
    assert fig["height"] <= pane["height"] and fig["width"] <= pane["width"]
    shot(page, "readable_figure_whole")
    assert not page.errors


def test_offline_file_says_which_passes_it_does_not_hold(page, browser, server, tmp_path, shot):
    if server["kind"] != "app":
        pytest.skip("the export route needs the real app")
    path = export_file(page, tmp_path, EXAMPLE("17_linear_regression"))
    with offline(browser, path) as pg:
        pg.wait_for_selector("#training:not([hidden])")
        labels = pg.evaluate("[...document.querySelectorAll('#pass-select option')].map(o => o.textContent)")
        missing = [t for t in labels if "(" in t]
        assert missing and all(t.endswith("(not stored in this file)") for t in missing), labels
        assert not any("too big" in t for t in labels)
        shot(pg, "readable_offline_passes")
