"""The page, end to end in Chromium: run, graph, stepping, numbers vs the API, inspector,
share link, export, keyboard, errors at the right line. Screenshots in test-artifacts/."""

from __future__ import annotations

import contextlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()


def fmt(x: float) -> str:
    """The page's number format (values.js fmt) for ordinary magnitudes."""
    if x == 0:
        return "0"
    s = f"{x:.4g}"
    return s


def wait_ready(page, previous: str | None = None, timeout: float = 20000):
    page.wait_for_function(
        "prev => document.body.dataset.ready && document.body.dataset.ready !== prev",
        arg=previous or "", timeout=timeout,
    )


def open_app(page, hash_: str = ""):
    page.goto(page.base + "/" + hash_)
    wait_ready(page)


def run_source(page, source: str):
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    wait_ready(page, prev)


def steps(page) -> tuple[int, int]:
    return int(page.evaluate("document.body.dataset.step")), int(page.evaluate("document.body.dataset.steps"))


def pause(page):
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")


def run_to_the_end(page, source: str):
    """Open the app, run `source`, pause, and step to its last node."""
    open_app(page)
    run_source(page, source)
    pause(page)
    page.keyboard.press("End")


def api_trace(page, source: str) -> dict:
    r = page.request.post(page.base + "/api/run", data={"source": source})
    assert r.ok
    return r.json()


def first_graph(trace: dict) -> dict:
    return next(p for p in trace["passes"] if p.get("graph"))


def test_run_example_shows_graph(page, shot):
    open_app(page)
    run_source(page, "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x * 3\n")
    page.get_by_role("button", name="Examples", exact=True).click()
    gallery = page.get_by_role("dialog")
    gallery.wait_for(state="visible")
    shot(page, "00_gallery")
    prev = page.evaluate("document.body.dataset.ready")
    gallery.locator('[data-example="01_square_of_sum"]').click()
    wait_ready(page, prev)
    assert page.evaluate("window.__fg.editor.text") == SQUARE
    graph = first_graph(api_trace(page, SQUARE))["graph"]
    ids = sorted(page.eval_on_selector_all("svg.fg-graph [data-node-id]", "els => els.map(e => e.dataset.nodeId)"))
    assert ids == sorted(n["id"] for n in graph["nodes"])
    page.keyboard.press("End")
    shot(page, "01_square_end")
    page.errors.check()


def test_step_forward_through_every_node_and_back(page, shot):
    open_app(page)
    run_source(page, SQUARE)
    pause(page)
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("Home")
    k, n = steps(page)
    assert k == 0 and n > 0
    # nothing computed yet: every tensor says so (not a 0)
    labels = page.eval_on_selector_all("g.fg-node[data-node-id]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels and all("value not computed yet" in lab for lab in labels)
    seen_active = set()
    for i in range(1, n + 1):
        page.get_by_role("button", name="Step forward").click()
        assert steps(page)[0] == i
        seen_active |= set(page.eval_on_selector_all(
            "[data-node-id].active-forward, [data-node-id].active-backward", "els => els.map(e => e.dataset.nodeId)"))
        if i == n // 2:
            shot(page, "02_square_midway")
    graph = first_graph(api_trace(page, SQUARE))["graph"]
    assert {m["id"] for m in graph["nodes"]} <= seen_active, "every node lit up at some step"
    for i in range(n - 1, -1, -1):
        page.get_by_role("button", name="Step back").click()
        assert steps(page)[0] == i
    page.errors.check()


def test_numbers_match_the_api(page):
    run_to_the_end(page, SQUARE)
    graph = first_graph(api_trace(page, SQUARE))["graph"]
    for node in graph["nodes"]:
        if node["kind"] != "tensor":
            continue
        label = page.get_attribute(f'g[data-node-id="{node["id"]}"]', "aria-label")
        assert f"value {fmt(node['value'])};" in label, (node, label)
        if node.get("grad") is not None:
            assert f"grad {fmt(node['grad'])};" in label, (node, label)
        elif node["is_leaf"] is False:
            assert "grad None" not in label or node["grad"] is None


def test_inspector_chain_rule(page, shot):
    run_to_the_end(page, SQUARE)
    trace = api_trace(page, SQUARE)
    graph = first_graph(trace)["graph"]
    s_id = next(n["id"] for n in graph["nodes"] if n.get("name") == "s")
    page.click(f'g[data-node-id="{s_id}"]')
    insp = page.locator("#inspector")
    page.wait_for_selector("#inspector .katex", timeout=10000)
    assert "s" == insp.locator("h2").inner_text().strip()
    assert "5" in insp.inner_text()
    assert "AddBackward0" in insp.inner_text()
    shot(page, "03_inspector")
    page.errors.check()


@contextlib.contextmanager
def opened_elsewhere(browser, url: str):
    """`url` opened in a fresh browser context (as a shared link would be), ready."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        other = ctx.new_page()
        other.goto(url)
        wait_ready(other)
        yield other
    finally:
        ctx.close()


def test_share_link_reproduces_the_step(page, browser, server):
    open_app(page)
    run_source(page, SQUARE)
    pause(page)
    page.keyboard.press("Home")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("location.hash.includes('step=5')")
    with opened_elsewhere(browser, page.url) as other:
        assert steps(other)[0] == 5
        assert other.evaluate("window.__fg.editor.text") == SQUARE


def test_share_link_with_program(page, browser):
    open_app(page)
    src = SQUARE.replace("3.0", "4.0")
    run_source(page, src)
    pause(page)
    page.keyboard.press("End")
    page.wait_for_function("location.hash.includes('program=')")
    with opened_elsewhere(browser, page.url) as other:
        assert other.evaluate("window.__fg.editor.text") == src


def test_export_svg(page, tmp_path):
    run_to_the_end(page, SQUARE)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Export SVG").click()
    path = tmp_path / "graph.svg"
    dl.value.save_as(path)
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    text = path.read_text()
    assert "data-node-id" in text and "<style" in text
    with page.expect_download() as dl2:
        page.get_by_role("button", name="Export PNG").click()
    png = tmp_path / "graph.png"
    dl2.value.save_as(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_keyboard(page):
    open_app(page)
    run_source(page, SQUARE)
    pause(page)
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("Home")
    assert steps(page)[0] == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert steps(page)[0] == 2
    page.keyboard.press("ArrowLeft")
    assert steps(page)[0] == 1
    page.keyboard.press("End")
    k, n = steps(page)
    assert k == n
    page.keyboard.press("Home")
    page.keyboard.press("Space")
    page.wait_for_function("Number(document.body.dataset.step) >= 2", timeout=5000)
    page.keyboard.press("Space")
    assert page.get_by_role("button", name="Play").is_visible()


def error_box_after(page, source: str):
    """Open the app and run `source`; the error box, once shown."""
    open_app(page)
    run_source(page, source)
    box = page.locator("#error")
    box.wait_for(state="visible")
    return box


def test_error_points_at_the_line(page, shot):
    src = "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = (x +\nprint(y)\n"
    box = error_box_after(page, src)
    assert "SyntaxError" in box.inner_text()
    line = int(re.search(r"line (\d+)", box.inner_text()).group(1))
    assert line in (3, 4)
    marked = page.eval_on_selector_all(".cm-error-line", "els => els.map(e => e.textContent)")
    assert marked and marked[0] == src.splitlines()[line - 1]
    assert page.inner_text("#step-text") == "no steps"  # no step count left over from an earlier run
    shot(page, "04_syntax_error")


def test_runtime_error_line(page, shot):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    src = "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x * 2\nz = y + undefined_name\n"
    assert "line 4" in error_box_after(page, src).inner_text()
    assert page.eval_on_selector_all(".cm-error-line", "els => els.map(e => e.textContent)") == [src.splitlines()[3]]


def test_accessible_names(page):
    open_app(page)
    run_source(page, SQUARE)
    for name in ["Run", "Play", "Step forward", "Step back", "Reset", "Jump to end", "Zoom to fit", "Export SVG",
                 "Export PNG", "Copy link", "Copy program", "Projector mode"]:
        pause(page)
        assert page.get_by_role("button", name=name, exact=True).count() == 1, name
    unnamed = page.eval_on_selector_all("button", "els => els.filter(b => !(b.getAttribute('aria-label') || b.textContent.trim())).length")
    assert unnamed == 0
    nodes = page.eval_on_selector_all("[data-node-id]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert nodes and all(nodes)


def test_projector_and_dark(page, shot):
    open_app(page, "#projector=1&theme=dark")
    run_source(page, SQUARE)
    pause(page)
    page.keyboard.press("End")
    assert page.evaluate("document.body.classList.contains('projector')")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    shot(page, "05_projector_dark")
    page.get_by_role("button", name="Projector mode").click()
    assert not page.evaluate("document.body.classList.contains('projector')")


def test_tablet_layout(browser, server, shot):
    ctx = browser.new_context(viewport={"width": 820, "height": 1180}, has_touch=True)
    page = ctx.new_page()
    page.goto(server["url"] + "/")
    wait_ready(page)
    assert page.locator("svg.fg-graph").bounding_box()["width"] > 600
    shot(page, "06_tablet")
    ctx.close()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_runs(page, shot, path):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    src = path.read_text()
    run_to_the_end(page, src)
    if "error" not in path.stem:
        assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    assert page.locator("svg.fg-graph [data-node-id]").count() > 0
    shot(page, f"ex_{path.stem}")
    page.errors.check()


def test_check_gradient(page):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    run_to_the_end(page, (ROOT / "examples" / "04_sum_times_sine.py").read_text())
    x = page.locator('g.fg-node[aria-label^="x "]').first
    x.click()
    page.get_by_role("button", name="Check gradient").click()
    page.wait_for_selector(".fd-table tbody tr", timeout=20000)
    row = page.locator(".fd-table tbody tr").first.inner_text().split()
    autograd, estimate = float(row[1]), float(row[2])
    assert abs(autograd - estimate) < 1e-2 * max(1, abs(autograd))


def test_training_loss_curve(page, shot):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    open_app(page)
    run_source(page, (ROOT / "examples" / "17_linear_regression.py").read_text())
    page.wait_for_selector("#training:not([hidden])")
    page.wait_for_function("document.querySelectorAll('#pass-select option').length >= 30", timeout=20000)
    page.wait_for_selector("#loss-chart canvas")
    pause(page)
    options = page.eval_on_selector_all("#pass-select option:not([disabled])", "els => els.map(e => e.value)")
    page.select_option("#pass-select", options[-1])
    wait_ready(page, page.evaluate("document.body.dataset.ready") if False else None)
    shot(page, "07_training")


def test_stream_pause_and_resume(page):
    if page.server_kind != "app":
        pytest.skip("streaming needs the app (POST /api/stream)")
    open_app(page)
    # a longer run than the example, so there is time to pause it mid-stream
    src = (ROOT / "examples" / "18_module_sgd.py").read_text().replace("range(60)", "range(300)").replace("randn(32", "randn(128")
    page.evaluate("src => { window.__fg.editor.text = src; }", src)
    # Run, and Pause the moment the page starts showing the run as it comes (the server has said
    # it is a long loop): in the same task, before the next piece of the stream is read
    page.evaluate("""() => {
      const b = document.getElementById('stream-toggle');
      new MutationObserver((_, obs) => { if (!b.hidden) { obs.disconnect(); b.click(); } }).observe(b, { attributes: true });
      document.getElementById('run').click();
    }""")
    page.wait_for_function("window.__fg.streamPaused === true || !document.getElementById('run').disabled", timeout=20000)
    assert page.evaluate("window.__fg.streamPaused"), page.locator("#status").inner_text()
    assert page.get_by_role("button", name="Resume stream").is_visible()
    n0 = page.evaluate("(window.__fg.trace && window.__fg.trace.passes.filter(Boolean).length) || 0")
    page.wait_for_timeout(600)
    assert page.evaluate("(window.__fg.trace && window.__fg.trace.passes.filter(Boolean).length) || 0") == n0
    assert n0 < 300 and page.evaluate("window.__fg.trace.streaming") is True
    assert "paused" in page.locator("#stream-status").inner_text()
    page.get_by_role("button", name="Resume stream").click()
    page.wait_for_function("window.__fg.trace && window.__fg.trace.streaming === false && window.__fg.trace.passes.length >= 300",
                           timeout=20000)
    assert page.locator("#loss-chart canvas").count() >= 1


WATCH_RUN = """() => {
  // what the page shows while the run goes on: was the run shown as it came (pause button, or a
  // graph drawn before the trace was complete)?
  const seen = { toggle: false, trainingBeforeDone: false, drawnBeforeDone: false, requests: [] };
  const toggle = document.getElementById('stream-toggle'), training = document.getElementById('training');
  new MutationObserver(() => {
    const fg = window.__fg, streaming = !!(fg.trace && fg.trace.streaming);
    if (!toggle.hidden) seen.toggle = true;
    if (!training.hidden && streaming) seen.trainingBeforeDone = true;
    if (streaming && document.querySelector('svg.fg-graph [data-node-id]')) seen.drawnBeforeDone = true;
  }).observe(document.body, { attributes: true, childList: true, subtree: true });
  window.__seen = seen;
  document.getElementById('run').click();
}"""


def watch_run(page, source: str) -> dict:
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    with page.expect_request(lambda r: r.url.endswith("/api/stream")):
        page.evaluate(WATCH_RUN)
    wait_ready(page, prev)
    page.wait_for_function("window.__fg.trace && window.__fg.trace.streaming === false && !document.getElementById('run').disabled",
                           timeout=20000)
    return {**page.evaluate("window.__seen"), "live": page.evaluate("window.__fg.metrics.current.live")}


def test_tutorials_are_shown_whole_and_training_loops_as_they_come(page):
    """Every run streams; what the server sends decides how it is shown, not the program text."""
    if page.server_kind != "app":
        pytest.skip("streaming needs the app (POST /api/stream)")
    open_app(page)
    for name in ["01_square_of_sum", "10_backward_twice_retain", "12_gradient_accumulation"]:
        src = (ROOT / "examples" / f"{name}.py").read_text()
        seen = watch_run(page, src)
        assert not seen["live"] and not seen["toggle"] and not seen["drawnBeforeDone"], (name, seen)
        assert not seen["trainingBeforeDone"], (name, seen)
        # drawn once, from the whole trace: the same graph as POST /api/run
        drawn = sorted(page.eval_on_selector_all("svg.fg-graph [data-node-id]", "els => els.map(e => e.dataset.nodeId)"))
        assert drawn == sorted(n["id"] for n in first_graph(api_trace(page, src))["graph"]["nodes"]), name
    # a training loop, its backward in a function (no loop around it in the text): shown as it comes. Long enough to
    # take several of the stream's 50 ms shipments (400 steps now run in ~0.1 s: one shipment, then `done`)
    loop = ("import torch\nw = torch.tensor(0.0, requires_grad=True)\n\ndef train_step(x):\n    loss = (w * x - 2 * x) ** 2\n"
            "    loss.backward()\n    with torch.no_grad():\n        w.sub_(0.1 * w.grad)\n    w.grad.zero_()\n    return loss\n\n"
            "for i in range(4000):\n    train_step(torch.tensor(float(i % 5) + 1.0))\n")
    seen = watch_run(page, loop)
    assert seen["live"] and seen["toggle"] and seen["trainingBeforeDone"] and seen["drawnBeforeDone"], seen
    assert page.locator("#training").is_visible() and page.locator("#stream-toggle").is_hidden()
    assert page.evaluate("window.__fg.trace.passes.length") == 4000
    page.errors.check()


def test_a_refused_program_does_not_stop_streaming(page):
    """A program the server refuses (longer than max_source_chars) shows its error, and the next training loop
    still streams."""
    if page.server_kind != "app":
        pytest.skip("streaming needs the app (POST /api/stream)")
    open_app(page)
    run_source(page, "import torch\n" + "# padding\n" * 8000)
    assert page.locator("#error").is_visible() and "max_source_chars" in page.locator("#error").inner_text()
    src = (ROOT / "examples" / "18_module_sgd.py").read_text().replace("range(60)", "range(300)")
    assert watch_run(page, src)["live"]


def test_module_clusters_collapse(page, shot):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    run_to_the_end(page, (ROOT / "examples" / "18_module_sgd.py").read_text())
    page.evaluate("window.__fg.graph.overview(false)")  # the page opens readable on the step: all of it
    toggle = page.locator("g.fg-ctoggle").first
    label = toggle.get_attribute("aria-label")
    assert label.startswith("Collapse ")
    cid = page.evaluate("el => el.closest('[data-cluster-id]').dataset.clusterId", toggle.element_handle())
    members = page.evaluate("id => (window.__fg.graph.clusters.find(c => c.id === id) || {nodes: []}).nodes", cid)
    assert members
    toggle.click()
    collapsed = page.locator(f'g.fg-cluster.collapsed[data-node-id="{cid}"]')
    assert collapsed.count() == 1 and "collapsed" in collapsed.get_attribute("aria-label")
    hidden = page.evaluate("ids => ids.every(id => { const e = document.querySelector(`svg.fg-graph g[data-node-id='${id}']:not(.fg-cluster)`); return !e || e.style.display === 'none'; })", members)
    assert hidden
    shot(page, "08_cluster_collapsed")
    collapsed.click()
    assert page.locator(f'g.fg-cluster.collapsed[data-node-id="{cid}"]').count() == 0


# ---------------------------------------------------------------- readability, op labels, title

MLP = (ROOT / "examples" / "16_two_layer_mlp.py").read_text()
LINREG = (ROOT / "examples" / "17_linear_regression.py").read_text()


def screen_metrics(page) -> dict:
    """On-screen sizes: smallest record font (px), node boxes, caption and legend boxes."""
    return page.evaluate("""() => {
      const px = (t) => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a;
      const heads = [...document.querySelectorAll('svg.fg-graph .fg-head-text')].filter(t => t.getBBox().width > 0);
      const ops = [...document.querySelectorAll('svg.fg-graph .fg-optext')];
      const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
      const lg = document.getElementById('legend');
      return {
        headPx: Math.min(...heads.map(px)), opPx: Math.min(...ops.map(px)),
        nodes: [...document.querySelectorAll('svg.fg-graph [data-node-id]')].filter(e => e.style.display !== 'none').map(e => [e.dataset.nodeId, box(e.querySelector('.fg-frame, .fg-opshape'))]),
        legend: lg.hidden ? null : box(lg),
        pane: box(document.getElementById('graph')),
      };
    }""")


def overlaps(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


@pytest.mark.parametrize("projector", [False, True], ids=["laptop", "projector"])
@pytest.mark.parametrize("name,source", [("mlp", "MLP"), ("linear_regression", "LINREG")])
def test_networks_are_readable_at_1280x720(page, shot, projector, name, source):
    if page.server_kind != "app":
        pytest.skip("tests the app's trace builder and layout")
    open_app(page, "#projector=1" if projector else "")
    run_source(page, globals()[source])
    pause(page)
    page.keyboard.press("End")
    page.evaluate("window.__fg.graph.fit(false)")
    page.wait_for_timeout(100)
    m = screen_metrics(page)
    shot(page, f"09_{name}_{'projector' if projector else 'laptop'}")
    assert m["headPx"] >= 7.5, f"record names drawn at {m['headPx']:.1f} px"
    assert m["opPx"] >= 8.5, f"op labels drawn at {m['opPx']:.1f} px"
    if projector:  # read from the back row: 16 px text at least, the view follows the step (issue 12 §2)
        assert m["headPx"] >= 16, f"record names drawn at {m['headPx']:.1f} px in projector mode"
    else:  # a laptop: 11 px at least, the view follows the step when the whole would be smaller (issue 23 §1)
        assert m["headPx"] >= 11, f"record names drawn at {m['headPx']:.1f} px"
    whole = not page.evaluate("window.__fg.graph.lastFitWasReadable")
    for nid, b in m["nodes"]:
        if not projector and whole:  # (a graph bigger than the pane is panned over)
            if m["legend"]:
                assert not overlaps(b, m["legend"]), f"{nid} under the legend"
            assert b[0] >= m["pane"][0] - 1 and b[2] <= m["pane"][2] + 1, f"{nid} outside the pane"
    page.errors.check()


def test_module_parameters_drawn_inside_their_module(page):
    if page.server_kind != "app":
        pytest.skip("tests the app's trace builder and layout")
    run_to_the_end(page, MLP)
    graph = page.evaluate("window.__fg.graph.model.graph")
    clusters = {c["name"]: c for c in graph["clusters"]}
    params = [n for n in graph["nodes"] if n.get("role") == "parameter"]
    assert {n["name"] for n in params} == {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}
    for n in params:
        c = clusters[n["name"].rsplit(".", 1)[0]]
        assert n["id"] in c["nodes"]
        assert abs(n["x"] - c["x"]) + n["w"] / 2 <= c["w"] / 2 and abs(n["y"] - c["y"]) + n["h"] / 2 <= c["h"] / 2, n["name"]


OPS_PROGRAM = """import torch
x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 1.5, -1.0]], requires_grad=True)
a = x ** 2
b = a.clamp(min=0.5)
c = b[:, 1:3]
d = c.sum(1)
e = 2 ** d
loss = e.mean()
loss.backward()
"""


def test_op_nodes_show_their_parameters(page, shot):
    if page.server_kind != "app":
        pytest.skip("tests the app's trace builder and layout")
    from app.trace.labels import op_text

    run_to_the_end(page, OPS_PROGRAM)
    graph = first_graph(api_trace(page, OPS_PROGRAM))["graph"]
    ops = [n for n in graph["nodes"] if n["kind"] == "op"]
    assert {n["op"]: n["params"] for n in ops}["pow_scalar"] == [2]
    drawn = {nid: txt for nid, txt in page.eval_on_selector_all(
        "svg.fg-graph g.fg-op", "els => els.map(e => [e.dataset.nodeId, e.querySelector('.fg-optext').textContent])")}
    for n in ops:  # the page and the server's sizing agree on the text
        assert drawn[n["id"]] == op_text(n["op"], n["label"], n["params"]), n
    texts = set(drawn.values())
    assert {"** 2", "clamp(min=0.5)", "[:, 1:3]", "sum(1)", "2 **", "mean"} <= texts, texts
    # the text fits its ellipse
    fits = page.eval_on_selector_all("svg.fg-graph g.fg-op", """els => els.map(e => {
      const t = e.querySelector('.fg-optext').getBBox(), s = e.querySelector('.fg-opshape').getBBox();
      return t.width <= s.width - 4; })""")
    assert all(fits)
    pow_id = next(n["id"] for n in ops if n["op"] == "pow_scalar")
    page.click(f'g[data-node-id="{pow_id}"]')
    insp = page.locator("#inspector")
    assert insp.locator("h2").inner_text().strip() == "** 2 (pow_scalar)"
    assert "exponent" in insp.inner_text()
    shot(page, "10_op_params")
    # unnamed results read as expressions with the parameter: "x ** 2", "… ** 2"
    labels = page.eval_on_selector_all("g.fg-node", "els => els.map(e => e.getAttribute('aria-label'))")
    assert any(lab.startswith("a ") for lab in labels)
    page.errors.check()


def test_example_title_follows_the_program(page):
    open_app(page)
    examples = page.request.get(page.base + "/api/examples").json()
    titles = {e["id"]: e["title"] for e in examples}
    title = page.locator("#example-title")
    assert title.inner_text() == titles[examples[0]["id"]]
    # another example's program, however it got into the editor: that example's title, not "(edited)"
    run_source(page, MLP)
    assert title.inner_text() == titles["16_two_layer_mlp"]
    page.evaluate("src => { window.__fg.editor.text = src; }", MLP + "# my change\n")
    assert title.inner_text() == titles["16_two_layer_mlp"] + " (edited)"
    page.evaluate("src => { window.__fg.editor.text = src; }", MLP)
    assert title.inner_text() == titles["16_two_layer_mlp"]
    # picked in the gallery
    page.get_by_role("button", name="Examples", exact=True).click()
    prev = page.evaluate("document.body.dataset.ready")
    page.locator('[data-example="03_polynomial"]').click()
    wait_ready(page, prev)
    assert title.inner_text() == titles["03_polynomial"]
    page.wait_for_function("location.hash.includes('example=03_polynomial')")
    page.errors.check()


def test_own_program_is_not_an_edited_example(page):
    open_app(page)
    title = page.locator("#example-title")
    run_source(page, OPS_PROGRAM)
    assert title.inner_text() == "Examples", "a program of one's own is not '<example> (edited)'"
    assert page.evaluate("document.getElementById('example-title').dataset.edited") == "false"
