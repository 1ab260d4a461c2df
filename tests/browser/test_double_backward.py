"""A second derivative on the page: the ops a create_graph backward runs are drawn as graph nodes, and the
second backward steps through them (Chromium; screenshots in test-artifacts/)."""

from __future__ import annotations

from test_page import api_trace, first_graph, open_app, pause, run_source, steps

DOUBLE = """import torch
x = torch.tensor(1.5, requires_grad=True)
y = x.sin() * x
dydx, = torch.autograd.grad(y, x, create_graph=True)
dydx.backward()
print(x.grad)
"""


def test_second_derivative_nodes_are_drawn_and_steppable(page, shot):
    open_app(page)
    run_source(page, DOUBLE)
    pause(page)
    trace = api_trace(page, DOUBLE)
    assert trace["error"] is None and trace["stdout"].startswith("tensor(")
    graph = first_graph(trace)["graph"]
    ops = {n["id"]: n for n in graph["nodes"] if n["kind"] == "op"}
    # d/dx sin(x) = cos(x): the cos node exists only because the first backward ran as recorded ops
    cos = [i for i, n in ops.items() if n["op"] == "cos"]
    assert len(cos) == 1, ops
    frames = first_graph(trace)["frames"]
    backward_ops = {f["id"] for f in frames if f["kind"] == "op" and f["line"] == 4}  # made by the create_graph grad
    assert cos[0] in backward_ops and len(backward_ops) >= 5, backward_ops
    drawn = set(page.eval_on_selector_all("svg.fg-graph [data-node-id]", "els => els.map(e => e.dataset.nodeId)"))
    assert set(ops) <= drawn
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("Home")
    _, n = steps(page)
    lit_backward = set()
    for _ in range(n):
        page.get_by_role("button", name="Step forward").click()
        lit_backward |= set(page.eval_on_selector_all(
            "[data-node-id].active-backward", "els => els.map(e => e.dataset.nodeId)"))
        if cos[0] in lit_backward and not (page.evaluate("window.__shot_taken || false")):
            shot(page, "20_double_backward_cos_step")
            page.evaluate("window.__shot_taken = true")
    # the second backward ran through the first backward's nodes, cos among them
    second = [f for f in frames if f["kind"] == "backward_step" and f.get("id")]
    assert cos[0] in {f["node"] for f in second}
    assert cos[0] in lit_backward, (cos, lit_backward)
    assert len(backward_ops & lit_backward) >= 3
    shot(page, "21_double_backward_end")
    page.errors.check()
