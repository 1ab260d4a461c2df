"""The widget's ES module in Chromium as anywidget runs it: imported from a Blob URL, ``render({model, el})`` with
a model holding a recorded trace; the page inside steps forward and back, the inspector shows a node's maths.
Screenshots: test-artifacts/notebook-widget-*.png."""

from __future__ import annotations

import pytest

from tests.notebook.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

SOURCE = """import torch
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
s = x + y
z = s ** 2
z.backward()
print(z, x.grad)
"""

# anywidget's model as render() sees it: get, set, on/off "change:<name>", save_changes
HARNESS = """async ({ esm, state }) => {
  const listeners = {};
  const model = {
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; (listeners["change:" + k] || []).forEach((f) => f()); },
    on: (e, f) => { (listeners[e] = listeners[e] || []).push(f); },
    off: (e, f) => { listeners[e] = (listeners[e] || []).filter((g) => g !== f); },
    save_changes: () => {},
  };
  window.fakeModel = model;
  const mod = await import(URL.createObjectURL(new Blob([esm], { type: "text/javascript" })));
  const el = document.getElementById("output");
  window.cleanup = mod.default.render({ model, el });
}"""


@pytest.fixture(scope="module")
def recorded():
    pytest.importorskip("anywidget")
    import flowgrad
    from flowgrad.page import widget_esm

    t = flowgrad.trace(SOURCE)
    assert t.error is None
    return widget_esm(), t


def widget_page(browser, esm: str, t, width=860, **state):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    pg = ctx.new_page()
    pg.requests, pg.errors = [], []
    pg.on("request", lambda r: pg.requests.append(r.url))
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(f"console: {m.text}"))
    pg.set_content('<!doctype html><body style="margin:12px;font-family:sans-serif">'
                   '<div class="cell">In [1]: %%flowgrad</div><div id="output"></div></body>')
    pg.evaluate(HARNESS, {"esm": esm, "state": {"trace": t.json.decode(), "source": t.source, "view": {},
                                                "height": 620, **state}})
    return ctx, pg


def frame_of(pg):
    pg.wait_for_selector("iframe.flowgrad-widget")
    frame = pg.frame_locator("iframe.flowgrad-widget")
    f = pg.frames[1]
    f.wait_for_function("document.body.dataset.ready != null", timeout=20000)
    return frame, f


def step_info(f) -> tuple[int, int]:
    return int(f.evaluate("document.body.dataset.step")), int(f.evaluate("document.body.dataset.steps"))


def test_widget_steps_forward_and_back_and_inspects(browser, recorded):
    esm, t = recorded
    ctx, pg = widget_page(browser, esm, t)
    try:
        frame, f = frame_of(pg)
        f.evaluate("window.__fg.playing && document.getElementById('play').click()")
        frame.get_by_role("button", name="Reset").click()
        k, n = step_info(f)
        assert k == 0 and n > 4
        assert frame.locator("#run").is_hidden() and frame.locator("#export-html").is_hidden()
        graph = next(p for p in t.passes if p.get("graph"))["graph"]
        drawn = set(f.eval_on_selector_all("g[data-node-id]", "els => els.map(e => e.dataset.nodeId)"))
        assert drawn == {m["id"] for m in graph["nodes"]}
        lit = set()
        for i in range(1, n + 1):
            frame.get_by_role("button", name="Step forward").click()
            assert step_info(f)[0] == i
            lit |= set(f.eval_on_selector_all("[data-node-id].active-forward, [data-node-id].active-backward",
                                              "els => els.map(e => e.dataset.nodeId)"))
            if i == n // 2:
                pg.screenshot(path=str(ARTIFACTS / "notebook-widget-midway.png"))
        assert {m["id"] for m in graph["nodes"]} <= lit, "every node lit up at some step"
        # the end: x's gradient is 2 (x + y) = 10, in the node's label as on the page
        x_id = next(m["id"] for m in graph["nodes"] if m.get("name") == "x")
        assert "grad 10;" in f.get_attribute(f'g[data-node-id="{x_id}"]', "aria-label")
        frame.get_by_role("button", name="Step back").click()
        frame.get_by_role("button", name="Step back").click()
        assert step_info(f)[0] == n - 2
        frame.get_by_role("button", name="Jump to end").click()
        s_id = next(m["id"] for m in graph["nodes"] if m.get("name") == "s")
        f.click(f'g[data-node-id="{s_id}"]')
        f.wait_for_selector("#inspector .katex", timeout=10000)
        text = frame.locator("#inspector").inner_text()
        assert "AddBackward0" in text and "5" in text
        assert frame.locator('#inspector button[aria-label="Check gradient"]').count() == 0 or \
            frame.locator('#inspector button[aria-label="Check gradient"]').is_hidden()
        pg.screenshot(path=str(ARTIFACTS / "notebook-widget-inspector.png"))
        # no network: the harness page, the module's and the page's Blob URLs, data: fonts
        assert all(u.startswith(("blob:", "data:", "about:")) for u in pg.requests), pg.requests
        assert not pg.errors, pg.errors
    finally:
        ctx.close()


def test_a_new_trace_redraws_and_a_dark_view(browser, recorded):
    esm, t = recorded
    import flowgrad

    ctx, pg = widget_page(browser, esm, t, view={"theme": "dark"})
    try:
        _, f = frame_of(pg)
        assert f.evaluate("document.documentElement.dataset.theme") == "dark"
        other = flowgrad.trace("import torch\nw = torch.ones(3, requires_grad=True)\nq = (w * w).sum()\nq.backward()\n")
        pg.evaluate("([t, s]) => { window.fakeModel.set('source', s); window.fakeModel.set('trace', t); }",
                    [other.json.decode(), other.source])
        f = pg.frames[1]  # the same frame, a new document in it
        f.wait_for_function("document.body && document.body.dataset.ready != null && [...document.querySelectorAll("
                            "'g.fg-node')].some((g) => (g.getAttribute('aria-label') || '').startsWith('q'))", timeout=20000)
        names = f.eval_on_selector_all("g.fg-node[data-node-id]", "els => els.map(e => e.getAttribute('aria-label'))")
        assert any(lab.startswith("w") for lab in names) and any(lab.startswith("q") for lab in names), names
        pg.evaluate("window.fakeModel.set('height', 400)")
        assert pg.evaluate("document.querySelector('iframe.flowgrad-widget').getBoundingClientRect().height") == 400
        pg.screenshot(path=str(ARTIFACTS / "notebook-widget-dark.png"))
        assert not pg.errors, pg.errors
    finally:
        ctx.close()


def test_a_program_cannot_end_the_widgets_script(browser, recorded):
    """Source, output and names are data in the widget's document: `</script>` in them ends nothing."""
    esm, _ = recorded
    import flowgrad

    hostile = ('import torch\n# </script><script>parent.hacked = 1</script>\n'
               'x = torch.tensor(1.0, requires_grad=True)\n(x * 2).backward()\n'
               'print("</script><script>parent.hacked = 2</script><!--")\n')
    t = flowgrad.trace(hostile)
    assert t.error is None and "</script>" in t.stdout
    ctx, pg = widget_page(browser, esm, t)
    try:
        _, f = frame_of(pg)
        assert f.evaluate("document.getElementById('stdout').textContent") == t.stdout
        assert f.evaluate("window.__fg.editor.text") == hostile
        assert pg.evaluate("window.hacked") is None
        # the widget's document has an origin of its own: the notebook's page is out of its reach
        assert f.evaluate("(() => { try { return parent.document.title; } catch (e) { return e.name; } })()") == "SecurityError"
        assert not pg.errors, pg.errors
    finally:
        ctx.close()
