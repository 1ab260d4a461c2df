"""Small tensors show their numbers in the cells when they read at the current zoom (level of
detail), with the sign/magnitude colour behind; every cell tells its number on hover."""

from __future__ import annotations

import pytest
from test_page import open_app, pause, run_source


def visible_numbers(page, node):
    return page.evaluate("""id => [...document.querySelectorAll(`svg.fg-graph [data-node-id="${id}"] text.fg-num`)]
        .filter(t => !t.hasAttribute('display')).map(t => t.textContent)""", node)


def test_broadcast_tensors_show_their_numbers(page, shot):
    page.goto(page.base + "/#example=13_broadcast_bias")
    page.wait_for_function("document.body.dataset.ready")
    pause(page)
    page.keyboard.press("End")
    page.wait_for_timeout(300)
    x = page.evaluate("window.__fg.model.graph.nodes.find(n => n.name === 'x').id")
    b = page.evaluate("window.__fg.model.graph.nodes.find(n => n.name === 'b').id")
    xs = visible_numbers(page, x)
    assert len(xs) == 6  # the 2×3 value (x needs no gradient)
    assert xs[:6] == ["1", "2", "3", "4", "5", "6"]
    assert len(visible_numbers(page, b)) == 6  # the 3-element bias and its summed gradient
    titles = page.evaluate("""id => [...document.querySelectorAll(`svg.fg-graph [data-node-id="${id}"] rect.fg-cell title`)]
        .map(t => t.textContent)""", x)
    assert titles[:2] == ["[0, 0] = 1", "[0, 1] = 2"]
    shot(page, "numbers_in_cells")
    # zoomed far out the numbers give way to the colours; back in, they return
    page.evaluate("window.__fg.graph.zoomBy(0.25)")
    page.wait_for_timeout(500)
    assert visible_numbers(page, x) == []
    page.evaluate("window.__fg.graph.fit(false)")
    page.wait_for_timeout(300)
    assert len(visible_numbers(page, x)) == 6
    # a tensor past 24 elements: colours, and each cell's number with the tensor's range on hover
    open_app(page)
    run_source(page, "import torch\nw = torch.arange(30.0).reshape(5, 6).requires_grad_()\n(w * 2).sum().backward()\n")
    pause(page)
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    w = page.evaluate("window.__fg.model.graph.nodes.find(n => n.name === 'w').id")
    title = page.evaluate("""id => document.querySelector(`svg.fg-graph [data-node-id="${id}"] rect.fg-cell title`).textContent""", w)
    assert title == "[0, 0] = 0 (min 0, max 29)", title
    assert visible_numbers(page, w) == []
    page.errors.check()


# each number of node `name`: its text, font (graph units) and height on screen; the record's header font
NUMBERS = """name => { const m = window.__fg.model, n = m.graph.nodes.find(n => n.name === name);
    const g = document.querySelector(`svg.fg-graph [data-node-id="${n.id}"]`);
    const ts = [...g.querySelectorAll('text.fg-num')].filter(t => !t.hasAttribute('display'));
    return { texts: ts.map(t => t.textContent), fonts: ts.map(t => +t.getAttribute('font-size')),
             px: Math.min(...ts.map(t => t.getBoundingClientRect().height)),
             head: +g.querySelector('.fg-head-text').getAttribute('font-size'), h: n.h }; }"""


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_small_2d_tensors_write_their_numbers_at_the_record_font_in_every_mode(page, shot, width, height):
    """Issue 23 §1: example 13's 2×3 tensors get records tall and wide enough for their numbers (3 significant
    digits) at the record's own font, so the numbers read wherever the record does: normal, inspector open,
    projector."""
    page.set_viewport_size({"width": width, "height": height})
    page.goto(page.base + "/#example=13_broadcast_bias")
    page.wait_for_function("document.body.dataset.ready")
    pause(page)
    page.keyboard.press("End")
    page.wait_for_function("+document.body.dataset.step === +document.body.dataset.steps")

    def check(mode):
        # the camera settles (a mode switch refits it): numbers show once they read at its zoom
        page.wait_for_function(f"() => ({NUMBERS})('x').texts.length === 6 && ({NUMBERS})('b').texts.length === 6")
        for name, want in (("x", ["1", "2", "3", "4", "5", "6"]), ("b", ["0.5", "-1", "2", "12", "10", "26"])):
            got = page.evaluate(NUMBERS, name)
            assert got["texts"] == want, (mode, name, got)
            assert all(f == got["head"] for f in got["fonts"]), (mode, name, got)  # the record's font, not smaller
        y = page.evaluate(NUMBERS, "y")
        assert len(y["texts"]) == 12 and y["h"] > 54, (mode, y)  # 2 rows of numbers in each of its 2 rows
        shot(page, f"numbers_2d_{mode}_{width}x{height}")

    check("normal")
    page.evaluate("id => window.__fg.select(id)", page.evaluate("window.__fg.model.graph.nodes.find(n => n.name === 'y').id"))
    page.wait_for_selector("#inspector .none-val, #inspector h2, #inspector", state="visible")
    if width > 1000:  # on a phone the inspector is a sheet over the graph: the graph is not what is read then
        page.wait_for_function("() => getComputedStyle(document.getElementById('inspector')).display !== 'none'")
        check("inspector")
    page.evaluate("window.__fg.select(null)")
    page.get_by_role("button", name="Projector").click()
    page.wait_for_function("document.body.classList.contains('projector')")
    check("projector")
    page.errors.check()
