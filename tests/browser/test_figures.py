"""Figures in the output pane, in real Chromium: the linear-regression example's plot appears after its
printed lines, as an <img> (an image document: no script in the SVG can run). Screenshot in test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "19_linear_regression_plot.py").read_text()


def wait_ready(page, previous: str = ""):
    page.wait_for_function("prev => document.body.dataset.ready && document.body.dataset.ready !== prev",
                           arg=previous, timeout=30000)


def run_source(page, source: str):
    """Run ``source`` and wait until the run is over: a streamed run is drawn ("ready") at its first graph, and
    its ``done`` draws the output pane again (an image found before is then detached)."""
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    run = page.get_by_role("button", name="Run", exact=True)
    run.click()
    wait_ready(page, prev)
    expect(run).to_be_enabled(timeout=60000)


def test_the_plot_shows_in_the_output_pane(page, shot):
    if page.server_kind != "app":
        pytest.skip("figures need the real app (the fixture server has no matplotlib)")
    page.goto(page.base + "/")
    wait_ready(page)
    run_source(page, EXAMPLE)
    img = page.locator("#stdout img.figure")
    expect(img).to_have_count(1)
    page.wait_for_function("() => { const i = document.querySelector('#stdout img.figure');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30000)
    expect(img).to_have_attribute("src", re.compile(r"^blob:"))
    expect(img).to_have_attribute("alt", "Figure 1")
    # after the printed lines, in order
    pre_text = page.evaluate("() => { const pre = document.getElementById('stdout'); const parts = [];"
                             " for (const n of pre.childNodes) parts.push(n.nodeType === 3 ? n.textContent : '[IMG]');"
                             " return parts.join(''); }")
    assert pre_text.startswith("epoch 0: loss ") and pre_text.endswith("[IMG]")
    box = img.bounding_box()
    assert box["width"] > 100 and box["height"] > 80
    img.scroll_into_view_if_needed()
    shot(page, "figure_linear_regression")
    page.locator("section.output").screenshot(path=str(ROOT / "test-artifacts" / "figure_output_pane.png"))
    page.errors.check()


def test_svg_script_does_not_run(page):
    if page.server_kind != "app":
        pytest.skip("needs the real app")
    page.goto(page.base + "/")
    wait_ready(page)
    # a hostile figure handed to the renderer directly: its script must not run
    page.evaluate("""async () => {
        const { renderOutput } = await import('/static/js/figures.js');
        const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">' +
                    '<script>window.__pwned = 1</script><rect width="10" height="10"/></svg>';
        renderOutput(document.getElementById('stdout'), 'ab', [{ svg, at: 1 }]);
    }""")
    page.wait_for_function("() => { const i = document.querySelector('#stdout img.figure'); return i && i.complete; }")
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.getElementById('stdout').textContent") == "ab"


def test_figure_offsets_count_code_points(page):
    if page.server_kind != "app":
        pytest.skip("needs the real app")
    page.goto(page.base + "/")
    wait_ready(page)
    # Python counts '😀' as one character; JavaScript strings as two: `at` is Python's count
    parts = page.evaluate("""async () => {
        const { renderOutput } = await import('/static/js/figures.js');
        const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>';
        const pre = document.getElementById('stdout');
        renderOutput(pre, '😀ab\\n', [{ svg, at: 2 }, { svg, at: 4 }]);
        return Array.from(pre.childNodes, (n) => n.nodeType === 3 ? n.textContent : n.tagName);
    }""")
    assert parts == ["😀a", "IMG", "b\n", "IMG"]
    page.errors.check()


# the figure's box and the pane's: whole inside it, and nothing to scroll for
FIGURE_IN_PANE = """() => { const pre = document.getElementById('stdout'), img = pre.querySelector('img.figure');
    const p = pre.getBoundingClientRect(), i = img.getBoundingClientRect();
    return { top: i.top - p.top, bottom: p.bottom - i.bottom, width: i.width, height: i.height,
             natural: [img.naturalWidth, img.naturalHeight], scroll: pre.scrollHeight - pre.clientHeight,
             pane: p.height, text: pre.textContent }; }"""


@pytest.mark.parametrize("width,height", [(1366, 768), (1280, 720), (390, 844)])
def test_a_figure_below_printed_text_is_shown_whole(page, shot, width, height):
    if page.server_kind != "app":
        pytest.skip("figures need the real app (the fixture server has no matplotlib)")
    page.set_viewport_size({"width": width, "height": height})
    page.goto(page.base + "/")
    wait_ready(page)
    run_source(page, EXAMPLE)
    page.wait_for_function("() => { const i = document.querySelector('#stdout img.figure');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30000)
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    page.locator("section.output").scroll_into_view_if_needed()
    got = page.evaluate(FIGURE_IN_PANE)
    assert got["text"].startswith("epoch 0: loss ") and got["text"].count("\n") >= 4, got["text"]
    assert got["scroll"] <= 1, got  # the printed lines and the figure fit: no scroll
    assert got["top"] >= 0 and got["bottom"] >= 0, got
    # drawn at the figure's aspect ratio, big enough to read (a 640×480 plot at 160 px and more)
    assert got["height"] >= 160, got
    nw, nh = got["natural"]
    assert abs(got["width"] / got["height"] - nw / nh) < 0.02, got
    shot(page, f"figure_whole_{width}x{height}")
    page.errors.check()


def test_the_pane_shrinks_back_without_figures(page):
    if page.server_kind != "app":
        pytest.skip("figures need the real app")
    page.goto(page.base + "/")
    wait_ready(page)
    run_source(page, EXAMPLE)
    page.wait_for_selector("section.output.has-figures")
    run_source(page, "import torch\nprint(torch.ones(2))\n")
    page.wait_for_selector("section.output:not(.has-figures)", state="attached")
    assert page.evaluate("document.getElementById('layout').classList.contains('output-figures')") is False
