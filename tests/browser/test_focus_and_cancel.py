"""Keys after a run drive the player, not the editor; a long run can be cancelled (button and Esc)
and the last result stays."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()
FOREVER = "import torch\nx = torch.tensor(1.0, requires_grad=True)\nwhile True:\n    y = x * 2\n"


def ready(page, prev=""):
    page.wait_for_function("p => document.body.dataset.ready && document.body.dataset.ready !== p", arg=prev)


def test_ctrl_enter_moves_focus_to_the_graph_so_space_plays(page):
    page.goto(page.base + "/")
    ready(page)
    page.evaluate("src => { window.__fg.editor.text = src; }", SQUARE)
    page.locator(".cm-content").click()
    prev = page.evaluate("document.body.dataset.ready")
    page.keyboard.press("Control+Enter")
    ready(page, prev)
    assert page.evaluate("document.activeElement.id") == "graph-wrap"
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    page.keyboard.press(" ")
    assert page.evaluate("window.__fg.editor.text") == SQUARE  # Space did not type into the program
    page.wait_for_function("window.__fg.playing")
    page.errors.check()


def test_a_long_run_can_be_cancelled_and_the_last_result_stays(page, shot):
    if page.server_kind != "app":
        import pytest
        pytest.skip("cancelling needs the real app")
    page.goto(page.base + "/")
    ready(page)
    page.evaluate("src => { window.__fg.editor.text = src; }", SQUARE)
    prev = page.evaluate("document.body.dataset.ready")
    page.get_by_role("button", name="Run", exact=True).click()
    ready(page, prev)
    nodes = page.locator("svg.fg-graph [data-node-id]").count()
    assert page.get_by_role("button", name="Cancel run").is_hidden()  # a quick run never shows it
    page.evaluate("src => { window.__fg.editor.text = src; }", FOREVER)
    page.get_by_role("button", name="Run", exact=True).click()
    cancel = page.get_by_role("button", name="Cancel run")
    cancel.wait_for(state="visible", timeout=3000)
    shot(page, "cancel_visible_while_running")
    cancel.click()
    page.wait_for_function("document.getElementById('status').textContent.startsWith('cancelled')")
    assert cancel.is_hidden() and page.get_by_role("button", name="Run", exact=True).is_enabled()
    assert page.locator("svg.fg-graph [data-node-id]").count() == nodes  # the last result is still shown
    # Esc cancels too
    page.get_by_role("button", name="Run", exact=True).click()
    cancel.wait_for(state="visible", timeout=3000)
    page.keyboard.press("Escape")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('cancelled')")
    page.errors.check()
