"""The exported .html file opened from disk (file://, origin "null") in Chromium: no network request,
and stepping, keyboard, inspector with KaTeX and the loss curve work as on the served page.
Screenshots in test-artifacts/export_*.png."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = lambda stem: (ROOT / "examples" / f"{stem}.py").read_text()  # noqa: E731

# every step's caption and step line, read through the page's own setStep
READ_ALL_STEPS = """() => {
  const app = window.__fg, out = [];
  if (app.playing) app.stopPlaying();
  const n = app.model.steps.length;
  for (let k = 0; k <= n; k++) {
    app.setStep(k);
    out.push([document.body.dataset.step, document.getElementById('caption').textContent,
              document.getElementById('step-text').textContent]);
  }
  return out;
}"""


@pytest.fixture(autouse=True)
def needs_the_app(server):
    if server["kind"] != "app":
        pytest.skip("the export route needs the real app")


def wait_ready(page, timeout: float = 20000):
    page.wait_for_function("document.body.dataset.ready != null", timeout=timeout)


def export_file(page, tmp_path: Path, source: str, name: str = "flowgrad.html", **view) -> Path:
    r = page.request.post(page.base + "/api/export/html", data={"source": source, **view})
    assert r.ok, r.text()[:300]
    assert r.headers["content-disposition"].startswith("attachment;")
    path = tmp_path / name
    path.write_bytes(r.body())
    return path


@contextlib.contextmanager
def offline(browser, path: Path, viewport=(1280, 720)):
    """`path` opened from disk in a fresh context; yields the page with .requests and .errors filled as it runs."""
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    pg = ctx.new_page()
    pg.requests, pg.errors = [], []
    pg.on("request", lambda r: pg.requests.append(r.url))
    pg.on("requestfailed", lambda r: pg.errors.append(f"failed: {r.url}"))
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(f"console: {m.text}"))
    try:
        pg.goto(path.as_uri())
        wait_ready(pg)
        yield pg
    finally:
        ctx.close()


def assert_no_network(pg, path: Path):
    """Only the file itself and the Blob URLs its loader made: nothing over the network, no file beside it."""
    others = [u for u in pg.requests if u != path.as_uri() and not u.startswith("blob:null/") and not u.startswith("data:")]
    assert not others, others
    assert pg.requests.count(path.as_uri()) == 1
    assert not pg.errors, pg.errors


def served_steps(page, source: str) -> list:
    page.goto(page.base + "/")
    wait_ready(page)
    prev = page.evaluate("document.body.dataset.ready")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("p => document.body.dataset.ready !== p", arg=prev)
    return page.evaluate(READ_ALL_STEPS)


def test_offline_file_steps_exactly_as_the_page(page, browser, tmp_path, shot):
    source = EXAMPLE("16_two_layer_mlp")
    on_page = served_steps(page, source)
    path = export_file(page, tmp_path, source)
    with offline(browser, path) as pg:
        assert pg.evaluate(READ_ALL_STEPS) == on_page
        assert len(on_page) > 10
        # the transport and the keyboard
        pg.locator("#graph-wrap").focus()
        pg.keyboard.press("Home")
        assert pg.evaluate("document.body.dataset.step") == "0"
        pg.keyboard.press("ArrowRight")
        pg.keyboard.press("ArrowRight")
        assert pg.evaluate("document.body.dataset.step") == "2"
        pg.keyboard.press("ArrowLeft")
        assert pg.evaluate("document.body.dataset.step") == "1"
        pg.get_by_role("button", name="Step forward").click()
        assert pg.evaluate("document.body.dataset.step") == "2"
        pg.keyboard.press("End")
        assert pg.evaluate("document.body.dataset.step") == str(len(on_page) - 1)
        # what needs the server is hidden; the program and its output are there
        for name in ("Run", "Examples", "Start class session", "Copy link", "Download HTML"):
            assert pg.get_by_role("button", name=name, exact=True).is_hidden(), name
        assert "grad norm" in pg.locator("#stdout").inner_text()
        assert "nn.Sequential" in pg.evaluate("window.__fg.editor.text")
        # the inspector, with KaTeX set in its own (inlined) fonts
        node = pg.evaluate("window.__fg.model.pass.graph.nodes.find(n => n.name === 'loss').id")
        pg.evaluate("window.__fg.graph.overview(false)")  # the whole graph (the page opens readable on the step)
        pg.click(f'g[data-node-id="{node}"]')
        pg.wait_for_selector("#inspector .katex", timeout=10000)
        assert pg.locator("#inspector h2").inner_text().strip() == "loss"
        assert pg.evaluate("document.fonts.ready.then(() => document.fonts.check('16px KaTeX_Main'))")
        assert pg.evaluate("[...document.fonts].some(f => f.family === 'KaTeX_Main' && f.status === 'loaded')")
        assert all(b.is_hidden() for b in pg.locator('#inspector button[aria-label="Check gradient"]').all())
        shot(pg, "export_offline_inspector")
        assert_no_network(pg, path)


def test_offline_loss_curve_and_passes(page, browser, tmp_path, shot):
    path = export_file(page, tmp_path, EXAMPLE("17_linear_regression"))
    with offline(browser, path) as pg:
        pg.wait_for_selector("#training:not([hidden])")
        pg.wait_for_selector("#loss-chart canvas")
        pg.evaluate("window.__fg.playing && document.getElementById('play').click()")
        first = pg.evaluate("window.__fg.passIndex")
        pg.locator("#graph-wrap").focus()
        pg.keyboard.press("PageDown")
        assert pg.evaluate("window.__fg.passIndex") != first
        # a middle pass (a summary: the server records it when opened) is not in the file: nothing is fetched
        middle = pg.evaluate("window.__fg.trace.passes.find(p => !p.graph).index")
        shown = pg.evaluate("window.__fg.passIndex")
        pg.evaluate("i => window.__fg.openPass(i)", middle)
        assert pg.evaluate("window.__fg.passIndex") == shown
        shot(pg, "export_offline_training")
        assert_no_network(pg, path)


def test_download_html_button_keeps_the_view(page, browser, tmp_path):
    source = EXAMPLE("01_square_of_sum")
    served_steps(page, source)
    page.evaluate("window.__fg.setStep(3)")
    node = page.evaluate("window.__fg.model.pass.graph.nodes.find(n => n.name === 's').id")
    page.evaluate("id => window.__fg.select(id)", node)
    theme = page.evaluate("window.__fg.theme")
    with page.expect_download() as got:
        page.get_by_role("button", name="Download HTML", exact=True).click()
    download = got.value
    assert re.fullmatch(r"flowgrad-pass\d+-step3\.html", download.suggested_filename)
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    data = re.search(r'<script type="application/json" id="fg-offline">(.*?)</script>', path.read_text(), re.S)
    view = json.loads(data.group(1))["view"]
    assert view["step"] == 3 and view["node"] == node and view["theme"] == theme
    with offline(browser, path) as pg:
        assert pg.evaluate("document.body.dataset.step") == "3"
        assert pg.evaluate("window.__fg.selected") == node
        assert pg.locator("#inspector h2").inner_text().strip() == "s"
        assert pg.evaluate("window.__fg.theme") == theme
        assert_no_network(pg, path)
    page.errors.check()


def test_offline_file_in_dark_projector_mode(page, browser, tmp_path, shot):
    path = export_file(page, tmp_path, EXAMPLE("03_polynomial"), theme="dark", projector=True, step=1)
    with offline(browser, path) as pg:
        assert pg.evaluate("[window.__fg.theme, window.__fg.projector, document.body.dataset.step]") == ["dark", True, "1"]
        shot(pg, "export_offline_dark_projector")
        # "Export animation" is the page's own work: it runs in the offline file too
        got = pg.evaluate("window.__fg.exportAnimation({ format: 'gif' }).then(r => [r.blob.type, r.width, r.height, r.pictures])")
        assert got[:3] == ["image/gif", 1280, 720] and got[3] > 10
        assert_no_network(pg, path)
