"""The MNIST-sized MLP and LeNet-5 on a 64-image batch, run and drawn by the page (issue 9 §5-6).

Prints what the page downloaded and how long it took to its first drawn frame (figures for the README; no
timing asserts). Screenshots in test-artifacts/.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_page import open_app, pause, run_source

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "programs"  # shared with tests/app/test_big_programs_api.py
_ROUNDED = ("print(step, loss.item())", "print(step, round(loss.item(), 4))")
MNIST_MLP = (PROGRAMS_DIR / "mnist_mlp.py").read_text().replace(*_ROUNDED)
LENET5 = (PROGRAMS_DIR / "lenet5_batch64.py").read_text().replace(*_ROUNDED)

DOWNLOADED = """() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/api/stream') || e.name.includes('/api/run'))
    .map(e => e.encodedBodySize || e.transferSize || 0).reduce((a, b) => a + b, 0)"""


@pytest.mark.parametrize("name, source", [("mnist_mlp", MNIST_MLP), ("lenet5", LENET5)])
def test_big_networks_are_run_and_drawn(page, shot, name, source):
    if page.server_kind != "app":
        pytest.skip("needs the real app")
    open_app(page)
    page.evaluate("performance.clearResourceTimings()")
    started = time.monotonic()
    run_source(page, source)
    ready_s = time.monotonic() - started
    pause(page)
    assert page.locator("svg.fg-graph [data-node-id]").count() > 10
    out = page.evaluate("document.getElementById('stdout') ? document.getElementById('stdout').textContent : ''")
    assert "2 " in out or "1 " in out
    downloaded = page.evaluate(DOWNLOADED)
    print(f"\n{name}: first frame after {ready_s:.2f} s, downloaded {downloaded:,} bytes")
    shot(page, f"big_{name}")
    page.errors.check()


# ---- issue 11: big programs fold (the real server's folded passes, end to end) -------------------------
# the issue's three programs (as in bench/page.py); the RNN's and the MLP's full sizes run in well under a second
RNN = ("import torch\ntorch.manual_seed(0)\nx = torch.randn(200, 4)\nU = torch.randn(4, 8, requires_grad=True)\n"
       "W = torch.randn(8, 8, requires_grad=True)\nh = torch.zeros(8)\nfor t in range({T}):\n"
       "    h = torch.tanh(x[t] @ U + h @ W)\nloss = h.sum()\nloss.backward()\nprint(loss)\n")
MLP = ("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\nlayers = []\nfor i in range(150):\n"
       "    layers += [nn.Linear(8, 8), nn.Tanh()]\nmodel = nn.Sequential(*layers)\nx = torch.randn(4, 8)\n"
       "loss = model(x).sum()\nloss.backward()\nprint(loss)\n")
SIN_CHAIN = ("import torch\nx = torch.tensor(0.5, requires_grad=True)\ny = x\nfor i in range(3300):\n"
             "    y = y + torch.sin(y) * 0.001\ny.backward()\nprint(x.grad)\n")

# the step numbers (1-based, as setStep takes them) of the forward `op` frames of one op, in order
OP_STEPS = """(op) => window.__fg.model.steps.map((s, i) => [i + 1, s.main])
    .filter(([, m]) => m.kind === 'op' && m.op === op && m.phase === 'forward').map(([k]) => k)"""
# is every node of the current step drawn inside the free part of the view (not under the caption, legend or minimap)?
STEP_IN_VIEW = """() => {
  const app = window.__fg, g = app.graph, st = app.model.stateAt(app.step);
  const ids = st.effects ? Object.keys(st.effects.active) : [];
  const wrap = g.svg.getBoundingClientRect(), free = g.insets();
  const covers = ['minimap', 'legend'].map((id) => document.getElementById(id)).filter((e) => e && !e.hidden)
    .map((e) => e.getBoundingClientRect());
  const out = [];
  for (const id of ids) {
    const elm = g.svg.querySelector(`[data-node-id="${id}"]`);
    if (!elm) { out.push([id, 'not drawn']); continue; }
    const r = elm.getBoundingClientRect();
    const inside = r.left >= wrap.left && r.right <= wrap.right && r.top >= wrap.top + free.top - 1 && r.bottom <= wrap.bottom - free.bottom + 1;
    const hidden = covers.some((c) => r.left < c.right && r.right > c.left && r.top < c.bottom && r.bottom > c.top);
    out.push([id, inside && !hidden ? 'ok' : `off: ${[r.left, r.top, r.right, r.bottom].map(Math.round)}`]);
  }
  return out;
}"""
SEARCH_BOX = "Search the graph by tensor name or op"


@pytest.fixture
def app_page(page):
    if page.server_kind != "app":
        pytest.skip("needs the real app (folded passes, the group and search endpoints)")
    open_app(page)
    return page


def run_folded(page, source: str):
    run_source(page, source)
    pause(page)
    assert page.evaluate("window.__fg.model.graph.folded") is True


def step_value(page, k: int) -> str:
    """The values the caption shows at step k, once the step's fold has come (lazy frames fill in)."""
    page.evaluate("k => window.__fg.setStep(k)", k)
    page.wait_for_function("() => /\\[[-0-9]/.test(document.getElementById('caption').textContent)", timeout=20000)
    text = page.locator("#caption .cap-text").inner_text()
    return text[text.index("["):]


def assert_step_in_view(page):
    page.wait_for_timeout(450)  # the follow pan (DURATIONS.pan)
    seen = page.evaluate(STEP_IN_VIEW)
    assert seen and all(s == "ok" for _, s in seen), seen


@pytest.mark.parametrize("name, source, label", [
    ("rnn", RNN.format(T=200), "Expand t = 0 … 199"),
    ("mlp", MLP, "Expand model (Sequential)"),
    ("sin_chain_10k", SIN_CHAIN, "Expand i = 0 … 3299"),
])
def test_the_issues_programs_start_folded(app_page, shot, name, source, label):
    page = app_page
    run_folded(page, source)
    button = page.get_by_role("button", name=label)
    assert button.count() == 1
    assert button.get_attribute("data-node-id")
    aria = button.get_attribute("aria-label")
    assert "min " in aria and "max " in aria or " = " in aria  # the value summary rides in the name
    # a few dozen records at most are drawn for hundreds to ten thousand ops
    assert page.locator("svg.fg-graph [data-node-id]").count() < 60
    shot(page, f"big_folded_{name}")
    # the step timeline still walks every op: into the fold, with the view following
    n = int(page.evaluate("document.body.dataset.steps"))
    assert n > (9000 if name == "sin_chain_10k" else 1000)
    page.evaluate("k => window.__fg.setStep(k)", n // 4)
    page.wait_for_function("() => document.querySelectorAll('svg.fg-graph .fg-group-box').length > 0", timeout=20000)
    page.wait_for_function("() => document.querySelectorAll('#crumbs .crumb').length >= 3", timeout=20000)
    assert_step_in_view(page)
    shot(page, f"big_folded_{name}_stepped")
    page.errors.check()


def test_rnn_draws_w_and_u_beside_the_fold_with_one_bundled_edge(app_page, shot):
    page = app_page
    run_folded(page, RNN.format(T=200))
    got = page.evaluate("""() => {
      const g = window.__fg.graph, byName = {};
      for (const [id, r] of g.nodeEls) if (r.n.name) byName[r.n.name] = r.n;
      const fold = [...g.nodeEls.values()].find((r) => r.kind === 'group').n;
      const into = (src) => [...g.edgeEls.values()].filter((r) => r.e.source === src && r.e.target === fold.id).map((r) => r.e.count);
      return { fold: [fold.x - fold.w / 2, fold.id], W: [byName.W.x + byName.W.w / 2, into(byName.W.id)],
               U: [byName.U.x + byName.U.w / 2, into(byName.U.id)],
               badges: [...document.querySelectorAll('svg.fg-graph .fg-bundle-count text')].map((t) => t.textContent) };
    }""")
    for p in ("W", "U"):
        right, edges = got[p]
        assert right < got["fold"][0], got  # beside the fold, not inside it
        assert edges == [200], got  # one edge standing for the 200 reads
    assert got["badges"].count("× 200") >= 2, got
    # each "× 200" sits on its edge clear of every card and of the other badges (dot leaves room: BUNDLE_MINLEN)
    boxes = page.evaluate("""() => {
      const r = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
      return { badges: [...document.querySelectorAll('svg.fg-graph .fg-bundle-count rect')].map(r),
               cards: [...document.querySelectorAll('svg.fg-graph [data-node-id]')].filter((e) => !e.closest('.fg-bundle-count')).map(r) };
    }""")

    def overlap(a, b):
        return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1

    for i, b in enumerate(boxes["badges"]):
        assert not any(overlap(b, c) for c in boxes["cards"]), (b, boxes)
        assert not any(overlap(b, o) for o in boxes["badges"][i + 1:]), (b, boxes)
    shot(page, "big_rnn_shared_weights")
    page.errors.check()


def test_a_fold_opens_by_click_and_by_keyboard(app_page, shot):
    page = app_page
    run_folded(page, RNN.format(T=60))
    button = page.get_by_role("button", name="Expand t = 0 … 59")
    gid = button.get_attribute("data-node-id")
    button.click()
    box = page.locator(f'svg.fg-graph .fg-group-box[data-group-id="{gid}"]')
    box.wait_for()
    shot(page, "big_rnn_expanded_click")
    page.get_by_role("button", name="Collapse t = 0 … 59").click()
    box.wait_for(state="detached")
    # the keyboard: focus the stack, Enter opens it and focus lands on its collapse button; Enter folds it again
    page.get_by_role("button", name="Expand t = 0 … 59").focus()
    page.keyboard.press("Enter")
    box.wait_for()
    page.wait_for_function("() => (document.activeElement.getAttribute('aria-label') || '').startsWith('Collapse t = 0')")
    page.keyboard.press("Enter")
    box.wait_for(state="detached")
    page.wait_for_function("() => (document.activeElement.getAttribute('aria-label') || '').startsWith('Expand t = 0')")
    # Space works too
    page.keyboard.press(" ")
    box.wait_for()
    page.errors.check()


def test_stepping_into_the_fold_shows_the_values_the_unfolded_run_shows(app_page, shot):
    """h at t = 17: the folded 200-step run (its lazy frame filled from the group payload) and an 18-step
    run that is small enough not to fold (the same seed, the same x) must show the same numbers."""
    page = app_page
    run_source(page, RNN.format(T=18))
    pause(page)
    assert not page.evaluate("!!window.__fg.model.graph.folded")
    unfolded = page.evaluate(OP_STEPS, "tanh")
    assert len(unfolded) == 18
    want = step_value(page, unfolded[17])
    run_folded(page, RNN.format(T=200))
    folded = page.evaluate(OP_STEPS, "tanh")
    assert len(folded) == 200
    assert step_value(page, folded[17]) == want
    assert_step_in_view(page)
    crumbs = page.get_by_role("navigation", name="Current group").locator(".crumb")
    texts = crumbs.all_inner_texts()
    assert texts[:2] == ["graph", "t = 0 … 199"] and texts[-1] == "t = 17", texts
    assert crumbs.last.get_attribute("aria-current") == "location"
    shot(page, "big_rnn_step_into_fold")
    # a step further on moves the crumbs along and folds what playback opened and left
    assert step_value(page, folded[42]) != want
    page.wait_for_function("() => [...document.querySelectorAll('#crumbs .crumb')].pop().textContent === 't = 42'")
    assert not page.evaluate("[...document.querySelectorAll('svg.fg-graph .fg-group-box')].some((b) => b.textContent.startsWith('−t = 17'))")
    page.errors.check()


def test_search_reveals_w_and_a_node_inside_the_fold(app_page, shot):
    page = app_page
    run_folded(page, RNN.format(T=60))
    box = page.get_by_role("combobox", name=SEARCH_BOX)
    box.fill("W")
    page.wait_for_selector("#search-results .search-result")
    page.keyboard.press("Enter")
    page.wait_for_selector("svg.fg-graph .fg-found[data-node-id]")
    found = page.evaluate("document.querySelector('svg.fg-graph .fg-found').dataset.nodeId")
    assert page.evaluate("id => window.__fg.graph.nodeEls.get(id).n.name", found) == "W"
    # inside the fold: the groups on its path open, the node is centred and marked
    box.fill("")
    box.fill("TanhBackward")
    page.wait_for_function("() => (document.querySelector('#search-results .search-result') || {}).textContent?.includes('t = 0 … 59')",
                           timeout=20000)
    first = page.get_by_role("listbox", name="Search results").get_by_role("option").first
    assert "t = 0 … 59" in first.inner_text(), first.inner_text()
    page.keyboard.press("Enter")
    inside = "w => [...document.querySelectorAll('svg.fg-graph .fg-found[data-node-id]')].find((e) => e.dataset.nodeId !== w)"
    page.wait_for_function(f"w => !!({inside})(w)", arg=found, timeout=20000)
    assert page.evaluate("document.querySelectorAll('svg.fg-graph .fg-group-box').length") >= 3  # fold › chunk › iteration
    page.wait_for_timeout(500)  # the reveal's pan
    seen = page.evaluate(f"""w => {{ const r = ({inside})(w).getBoundingClientRect(),
                                    v = document.querySelector('svg.fg-graph').getBoundingClientRect();
                                    return r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom; }}""", found)
    assert seen
    shot(page, "big_rnn_search_revealed")
    page.errors.check()


def test_minimap_of_a_folded_run_pans_by_keyboard_and_keeps_clear_of_the_overlays(app_page, shot):
    page = app_page
    run_folded(page, RNN.format(T=200))
    page.evaluate("k => window.__fg.setStep(k)", 300)
    page.wait_for_function("() => document.querySelectorAll('svg.fg-graph .fg-group-box').length > 0", timeout=20000)
    page.wait_for_timeout(300)  # the map is drawn a frame after the graph
    if page.locator("#minimap").is_hidden():
        page.locator("#minimap-toggle").click()
    page.locator("#minimap").wait_for()
    boxes = page.evaluate("""() => Object.fromEntries(['minimap', 'legend', 'caption', 'breadcrumbs', 'search-input']
      .map((id) => document.getElementById(id)).filter((e) => e && !e.hidden && e.offsetParent)
      .map((e) => [e.id, (({left, top, right, bottom}) => [left, top, right, bottom])(e.getBoundingClientRect())]))""")
    m = boxes.pop("minimap")
    for other, r in boxes.items():
        assert m[2] <= r[0] or m[0] >= r[2] or m[3] <= r[1] or m[1] >= r[3], (other, m, r)
    canvas = page.get_by_role("application", name="Minimap: click, drag or use the arrow keys to move the view")
    canvas.focus()
    step = page.evaluate("document.body.dataset.step")
    before = page.evaluate("window.__fg.graph.viewBox()")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    after = page.evaluate("window.__fg.graph.viewBox()")
    assert after["x"] > before["x"] + 1 and after["y"] > before["y"] + 1, (before, after)
    assert page.evaluate("document.body.dataset.step") == step  # the arrows moved the view, not the player
    shot(page, "big_rnn_minimap_keyboard")
    page.errors.check()


def test_offline_export_of_a_folded_run_expands_from_its_inline_payloads(app_page, browser, tmp_path, shot):
    page = app_page
    r = page.request.post(page.base + "/api/export/html", data={"source": RNN.format(T=60)})
    assert r.ok, r.text()[:300]
    path = tmp_path / "rnn.html"
    path.write_bytes(r.body())
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        ctx.set_offline(True)
        asked, errors = [], []
        ctx.route("http*://**/*", lambda route: (asked.append(route.request.url), route.abort()))
        pg = ctx.new_page()
        pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        pg.goto(path.as_uri())
        pg.wait_for_function("document.body.dataset.ready != null", timeout=20000)
        assert pg.evaluate("window.__fg.model.graph.folded") is True
        pg.evaluate("window.__fg.playing && window.__fg.stopPlaying()")
        button = pg.get_by_role("button", name="Expand t = 0 … 59")
        gid = button.get_attribute("data-node-id")
        button.click()
        pg.locator(f'svg.fg-graph .fg-group-box[data-group-id="{gid}"]').wait_for(timeout=10000)
        # stepping into the fold reads its values from the file too
        k = pg.evaluate(OP_STEPS, "tanh")[17]
        pg.evaluate("k => window.__fg.setStep(k)", k)
        pg.wait_for_function("() => /\\[[-0-9]/.test(document.getElementById('caption').textContent)", timeout=10000)
        pg.screenshot(path=str(Path(__file__).resolve().parents[2] / "test-artifacts" / "big_rnn_offline_expanded.png"))
        assert not asked, asked
        assert not errors, errors
    finally:
        ctx.close()
