"""The op that failed is drawn red beside the inputs it got, with their shapes, and the step says so."""

from __future__ import annotations

from test_page import open_app, pause, run_source

SOURCE = "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\nx = torch.ones(4, 5)\ny = layer(x)\n"


def test_a_shape_error_draws_the_failed_op(page, shot):
    if page.server_kind != "app":
        import pytest
        pytest.skip("needs the real app")
    open_app(page)
    run_source(page, SOURCE)
    pause(page)
    page.keyboard.press("End")
    failed = page.locator("svg.fg-graph g.fg-op.failed")
    assert failed.count() == 1
    assert "✗ 2, 4×5, 3×2" in failed.text_content()  # bias, x, weightᵀ
    assert "mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)" in page.locator("#caption").inner_text()
    assert "inner sizes 5 ≠ 3" in page.locator("#error .err-hint").inner_text()
    shot(page, "failed_op_red")
    page.errors.check()
