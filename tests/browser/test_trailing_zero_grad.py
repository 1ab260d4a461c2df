"""A loop that ends with `opt.zero_grad()` after `opt.step()` ends its last pass on its gradients (issue 23 §3):
End, a loss-curve click, a share link at the end and the exported animation's last frame show them; the
trailing clearing is one step further, captioned "cleared by zero_grad()". At 1366×768."""

from __future__ import annotations

from test_page import opened_elsewhere, pause, run_source, wait_ready

ZERO_LAST = ("import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(8, 3)\ny = torch.randn(8, 1)\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(4):\n"
             "    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n")

# the parameters' .grad in the state shown (null: None)
GRADS = """() => { const m = window.__fg.model, st = m.stateAt(+document.body.dataset.step);
    return m.graph.nodes.filter(n => n.role === 'parameter').map(n => st.nodes.get(n.id).grad ?? null); }"""


def step_and_result(page) -> tuple[int, int, int]:
    return page.evaluate("[+document.body.dataset.step, window.__fg.model.resultStep, window.__fg.model.steps.length]")


def open_last_pass(page) -> None:
    """The loop ending in zero_grad, run and paused, on its last pass's first step."""
    page.goto(page.base + "/")
    wait_ready(page)
    run_source(page, ZERO_LAST)
    pause(page)
    page.evaluate("window.__fg.openPass(3, { step: 0 })")
    page.wait_for_function("window.__fg.model.passIndex === 3")


def test_a_trailing_zero_grad_never_is_the_pass_result(page, shot):
    page.set_viewport_size({"width": 1366, "height": 768})
    open_last_pass(page)
    page.keyboard.press("End")
    k, result, n = step_and_result(page)
    assert k == result == n - 1, (k, result, n)
    grads = page.evaluate(GRADS)
    assert len(grads) == 2 and all(g is not None for g in grads), grads
    assert "None" not in page.evaluate("document.querySelector('svg.fg-graph').textContent")
    shot(page, "trailing_zero_grad_end")
    # one step further: the clearing, named, as a step of its own
    page.keyboard.press("ArrowRight")
    page.wait_for_function("+document.body.dataset.step === window.__fg.model.steps.length")
    assert all(g is None for g in page.evaluate(GRADS))
    caption = page.evaluate("window.__fg.model.describeStep(window.__fg.model.steps.length)")
    assert "cleared by zero_grad()" in caption, caption
    assert "cleared by zero_grad()" in page.locator("body").inner_text()
    shot(page, "trailing_zero_grad_cleared")
    # End again: back on the result; the link shared there carries no step and opens on the result
    page.keyboard.press("End")
    page.wait_for_function("+document.body.dataset.step === window.__fg.model.resultStep")
    page.wait_for_function("location.hash.includes('program=') && !location.hash.includes('step=')")
    with opened_elsewhere(page.context.browser, page.url) as other:
        pause(other)
        k, result, n = step_and_result(other)
        assert k == result == n - 1 and all(g is not None for g in other.evaluate(GRADS))
    # a click on the loss curve's last point opens that pass on its result
    page.keyboard.press("Home")
    chart = page.locator("#loss-chart .u-over")
    chart.wait_for(state="visible")
    box = chart.bounding_box()
    page.evaluate("window.__fg.openPass(0, { step: 0 })")
    page.wait_for_function("window.__fg.model.passIndex === 0")
    page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] / 2)
    page.mouse.click(box["x"] + box["width"] - 1, box["y"] + box["height"] / 2)
    page.wait_for_function("window.__fg.model.passIndex === 3")
    k, result, n = step_and_result(page)
    assert k == result == n - 1 and all(g is not None for g in page.evaluate(GRADS))
    # the exported animation stops on the result: its last step is the optimizer's, with the gradients
    plan = page.evaluate("""async () => { const { planAnimation } = await import('/static/js/animation.js');
        const p = planAnimation(); const last = p.steps[p.steps.length - 1];
        return { n: p.n, k: last.k, text: last.text, none: (last.svg.match(/>None</g) || []).length }; }""")
    assert plan["n"] == plan["k"] == result and "step()" in plan["text"] and plan["none"] == 0, plan
    page.errors.check()


def test_playback_stops_on_the_result(page):
    open_last_pass(page)
    page.evaluate("window.__fg.speed = 16; window.__fg.play()")
    page.wait_for_function("!window.__fg.playing", timeout=60000)
    k, result, n = step_and_result(page)
    assert k == result < n
    page.errors.check()
