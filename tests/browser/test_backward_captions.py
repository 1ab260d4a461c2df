"""Backward captions state the chain rule with the numbers in, and the op's source line lights up."""

from __future__ import annotations

from test_page import open_app, pause, run_source

SOURCE = "import torch\ns = torch.tensor(5.0, requires_grad=True)\nz = s ** 2\nz.backward()\n"


def test_the_backward_caption_has_the_numbers_and_the_line(page, shot):
    open_app(page)
    run_source(page, SOURCE)
    pause(page)
    k = page.evaluate("window.__fg.model.steps.findIndex(s => s.main.kind === 'backward_step') + 1")
    assert k > 0
    page.evaluate("k => window.__fg.setStep(k)", k)
    text = page.locator("#caption .cap-text").inner_text()
    assert "PowBackward0: ∂L/∂s = ∂L/∂z · ∂z/∂s = 1 · 2·5^(2−1) = 1 · 10 = 10" in text, text
    assert page.locator("#caption .cap-line").inner_text().startswith("line 3:")
    assert page.locator(".cm-step-line").inner_text().strip() == "z = s ** 2"
    shot(page, "backward_caption_numbers")
    page.errors.check()
