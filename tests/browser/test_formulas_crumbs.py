"""Breadcrumbs follow what is centred (issue 23 §4): after a pan or a search takes the view away from the
step's node, the crumbs name the module at the centre of the view, not the step's."""

from __future__ import annotations

from test_page import open_app, pause, run_source

DEEP = ("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 6), nn.Tanh(),\n"
        "                      nn.Linear(6, 7), nn.Tanh(), nn.Linear(7, 1))\n"
        "x = torch.randn(2, 3)\nloss = model(x).sum()\nloss.backward()\n")


def crumbs(page):
    return page.locator("#crumbs .crumb").all_inner_texts()


def test_crumbs_follow_the_centre_of_the_view(page):
    open_app(page)
    run_source(page, DEEP)
    pause(page)
    assert not page.evaluate("!!window.__fg.model.folded")
    k = page.evaluate("""() => { const m = window.__fg.model;
        return m.steps.findIndex(s => s.main.kind === 'op' && (m.nodes.get(s.main.node) || {}).module === 'model.0') + 1; }""")
    assert k > 0
    page.evaluate(f"window.__fg.setStep({k}, {{animate: false}})")
    page.wait_for_function("[...document.querySelectorAll('#crumbs .crumb')].some(c => c.textContent.startsWith('model.0'))")
    # the view goes to the last layer's weight, close up: the step's node is out of view
    page.evaluate("""() => { const g = window.__fg.graph, n = window.__fg.model.graph.nodes.find(x => x.name === 'model.8.weight');
        g.frameBox({x: n.x - 30, y: n.y - 20, w: 60, h: 40}, false); }""")
    page.wait_for_function("[...document.querySelectorAll('#crumbs .crumb')].some(c => c.textContent.startsWith('model.8'))")
    assert crumbs(page)[-1].startswith("model.8"), crumbs(page)
    page.errors.check()
