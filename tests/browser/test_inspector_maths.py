"""The inspector's maths reads right: names keep their case, the local derivative gets this step's
numbers, broadcasting is a sum over named dims of the broadcast product, and a None .grad says why."""

from __future__ import annotations

from test_page import open_app, pause, run_source

POW = "import torch\ns = torch.tensor(5.0, requires_grad=True)\nz = s ** 2\nz.backward()\n"
ZERO = ("import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
        "loss = (w * w).sum()\nloss.backward()\nopt.step()\nopt.zero_grad()\n")


def run(page, source):
    open_app(page)
    run_source(page, source)
    pause(page)
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")


def select(page, name):
    node = page.evaluate("n => window.__fg.model.graph.nodes.find(x => x.name === n).id", name)
    page.evaluate("id => window.__fg.select(id)", node)
    return node


def annotations(page):
    page.wait_for_selector("#inspector .katex", timeout=10000)
    return page.eval_on_selector_all("#inspector annotation", "els => els.map(e => e.textContent)")


def test_the_local_derivative_gets_the_numbers(page, shot):
    run(page, POW)
    select(page, "s")
    tex = " ".join(annotations(page))
    assert "c\\,a^{c-1} = 2\\cdot 5^{2-1} = 10" in tex, tex
    headings = page.eval_on_selector_all("#inspector h3", "els => els.map(e => e.innerText)")
    assert ".grad" in headings  # not ".GRAD": names and attributes keep their case
    shot(page, "inspector_numbers_in_the_rule")
    page.errors.check()


def test_broadcasting_is_a_sum_over_rows(page, shot):
    page.goto(page.base + "/#example=13_broadcast_bias")
    page.wait_for_function("document.body.dataset.ready")
    pause(page)
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    select(page, "b")
    tex = " ".join(annotations(page))
    assert "\\text{rows}:\\ [2, 3]\\to[3]" in tex, tex
    shot(page, "inspector_broadcast_rows")
    # nothing is cut at the right edge: every equation fits the inspector's width
    assert page.evaluate("""[...document.querySelectorAll('#inspector .katex-line')].every(d => d.scrollWidth <= d.clientWidth + 2)""")
    page.errors.check()


def test_a_none_grad_says_why(page):
    run(page, ZERO)
    select(page, "w")
    text = page.locator("#inspector").inner_text()
    assert "None (cleared by zero_grad() on line 7)" in text, text
