"""A 400-step training run streams without rebuilding the page per message: each pass's entry in the pass
selector is added once (rebuilding all of them per message froze the page for ~0.9 s)."""

from __future__ import annotations

import pytest

SOURCE = ("import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
          "model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))\n"
          "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(16, 2)\ny = x[:, :1] * x[:, 1:]\n"
          "for step in range(400):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n"
          "    loss.backward()\n    opt.step()\n")


def test_the_pass_selector_grows_instead_of_being_rebuilt(page):
    if page.server_kind != "app":
        pytest.skip("streams from the real app")
    page.goto(page.base + "/")
    page.wait_for_function("document.body.dataset.ready")
    page.evaluate("""() => { window.__added = 0; new MutationObserver((ms) => { for (const m of ms) window.__added += m.addedNodes.length; })
        .observe(document.getElementById('pass-select'), { childList: true }); }""")
    page.evaluate("src => { window.__fg.editor.text = src; }", SOURCE)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("window.__fg.trace && window.__fg.trace.passes.length === 400 && !window.__fg.trace.streaming",
                           timeout=60000)
    page.wait_for_timeout(300)
    assert page.locator("#pass-select option").count() == 400
    assert page.evaluate("window.__added") <= 400 + 5  # once each (the few of the page's first program aside)
    labels = page.eval_on_selector_all("#pass-select option", "os => os.map(o => o.textContent)")
    assert labels[0].startswith("0 · loss ") and labels[-1].startswith("399 · loss ")
    page.errors.check()
