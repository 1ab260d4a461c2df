"""A custom autograd.Function and a hook on the page (issue 9 §2): the Function is one node named after it, the
step that runs its backward lights the program's backward lines and says what it returned, and the hook is a
step of its own with a mark on the timeline. Screenshots in test-artifacts/."""

from __future__ import annotations

import pytest
from test_page import open_app, pause, run_source, steps

CUBE = '''import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 3 * x ** 2

x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g * 10)
y = Cube.apply(x)
loss = y.sum()
loss.backward()
'''


def _caption(page) -> str:
    return page.inner_text("#caption")


def test_custom_function_and_hook_steps(page, shot):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    open_app(page)
    run_source(page, CUBE)
    pause(page)
    labels = page.eval_on_selector_all("g.fg-node[data-node-id]", "els => els.map(e => e.textContent)")
    assert any("Cube" in t for t in labels), labels  # one node for the whole Function, named after it
    assert page.locator(".phases .ev.hook").count() == 1  # the hook's mark on the timeline
    page.locator("body").click(position={"x": 5, "y": 700})
    page.keyboard.press("Home")
    n = steps(page)[1]
    seen = {}
    for _ in range(n):
        page.get_by_role("button", name="Step forward").click()
        cap = _caption(page)
        lit = page.eval_on_selector_all(".cm-step-line", "els => els.map(e => e.textContent)")
        if "CubeBackward: your backward" in cap:
            seen["backward"] = (cap, lit)
            shot(page, "autograd_custom_backward_step")
        if "tensor hook <lambda> on x" in cap:
            seen["hook"] = (cap, lit)
            shot(page, "autograd_hook_step")
    cap, lit = seen["backward"]
    lines = CUBE.splitlines()
    assert lit == lines[9:12], lit  # def backward … return: the program's backward, all of it
    assert "lines 10–12" in cap and "returned x: [3, 12]" in cap, cap
    cap, lit = seen["hook"]
    assert lit == [lines[14]] and "got [3, 12]" in cap and "returned [30, 120]" in cap, cap
    page.errors.check()


def test_custom_function_node_in_the_inspector(page, shot):
    if page.server_kind == "fixture":
        pytest.skip("needs the engine")
    open_app(page)
    run_source(page, CUBE)
    pause(page)
    page.keyboard.press("End")
    node = page.eval_on_selector_all("g.fg-op[data-node-id]", "els => els.filter(e => e.textContent.includes('Cube'))"
                                     ".map(e => e.dataset.nodeId)")[0]
    page.click(f'g[data-node-id="{node}"]')
    insp = page.locator("#inspector")
    page.wait_for_selector("#inspector .katex", timeout=10000)
    text = insp.inner_text()
    assert "CubeBackward" in text and "Cube.backward" in text, text  # its step: upstream × the program's backward
    shot(page, "autograd_custom_function_inspector")
    page.errors.check()
