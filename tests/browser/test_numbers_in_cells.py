"""Small tensors show their numbers in the cells when they read at the current zoom (level of
detail), with the sign/magnitude colour behind; every cell tells its number on hover."""

from __future__ import annotations

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
