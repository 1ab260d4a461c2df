"""At tablet width the inspector opens as a bottom sheet of at least half the screen, in view."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SQUARE = (ROOT / "examples" / "01_square_of_sum.py").read_text()


def test_the_inspector_is_a_bottom_sheet_on_a_tablet(browser, server, shot):
    ctx = browser.new_context(viewport={"width": 820, "height": 1180})
    page = ctx.new_page()
    page.goto(server["url"] + "/")
    page.wait_for_function("document.body.dataset.ready")
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")
    node = page.evaluate("window.__fg.model.graph.nodes.find(n => n.kind === 'tensor').id")
    page.locator(f'svg.fg-graph [data-node-id="{node}"]').first.click()
    page.wait_for_function("window.__fg.selected")
    box = page.locator("#inspector").bounding_box()
    assert box["height"] >= 0.5 * 1180 and box["y"] >= 0 and box["y"] + box["height"] <= 1180 + 1
    assert page.get_by_role("button", name="Close inspector").is_visible() or page.locator("#inspector button").first.is_visible()
    shot(page, "tablet_inspector_sheet")
    page.keyboard.press("Escape")
    page.wait_for_function("!window.__fg.selected")
    assert page.locator("#inspector").is_hidden() or page.locator("#inspector").bounding_box() is None
    ctx.close()
