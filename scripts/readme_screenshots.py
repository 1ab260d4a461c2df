"""The README's big-program screenshot, taken from the real app in headless Chromium.

  .venv/bin/python scripts/readme_screenshots.py [--out docs/img]

Starts the app (uvicorn app.main:app on a free port, as the browser tests do), runs the 200-step RNN
of bench/page.py with the Run button, steps into the loop, searches for `W` and shows it (then zooms
out to the program around it), with the minimap and the breadcrumbs on; writes
docs/img/big_program_rnn.png (1280×720). Prints what was on screen (nodes drawn, folded or not, the
breadcrumb path) so a wrong picture is noticed before it is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "bench"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _start_app  # noqa: E402
from page import BIG_PROGRAMS  # noqa: E402

SHOTS = {"big_program_rnn.png": ("RNN, 200 steps", "W")}
VIEWPORT = {"width": 1280, "height": 720}
ZOOM_OUT = 0.5  # after the search has centred the node: the shape of the program around it


def take(page, name: str, program: str, query: str, out: Path) -> dict:
    source = BIG_PROGRAMS[program][0]
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("p => document.body.dataset.ready && document.body.dataset.ready !== p", arg=prev, timeout=180_000)
    page.evaluate("window.__fg.stopPlaying()")
    # a step inside the loop: the breadcrumbs name the fold and the iteration
    page.evaluate("window.__fg.setStep(Math.round(window.__fg.model.steps.length * 0.2), {animate: false})")
    page.wait_for_timeout(400)
    if page.locator("#minimap").is_hidden():
        page.get_by_role("button", name="Show minimap").click()
    box = page.get_by_role("combobox", name="Search the graph by tensor name or op")
    box.fill(query)
    page.wait_for_selector("#search-results .search-result", timeout=30_000)
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)  # the reveal's pan
    # step back to see the shape around it (the highlight lasts 2 s)
    page.evaluate(f"window.__fg.graph.zoomBy({ZOOM_OUT})")
    page.wait_for_timeout(500)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / name))
    return page.evaluate("""() => ({
        nodes: document.querySelectorAll('svg.fg-graph [data-node-id]').length,
        folded: !!(window.__fg.model && window.__fg.model.graph.folded),
        crumbs: [...document.querySelectorAll('#crumbs .crumb')].map((b) => b.textContent).join(' › '),
    })""")


def main() -> int:
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else ROOT / "docs" / "img"
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} missing: cannot take screenshots")
        return 1
    started = _start_app()
    if not started:
        print("the app did not start (app/main.py, POST /api/run)")
        return 1
    proc, url = started
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.goto(url + "/")
            page.wait_for_function("document.body.dataset.ready", timeout=30_000)
            for name, (program, query) in SHOTS.items():
                seen = take(page, name, program, query, out)
                print(f"{out / name}: {program}; {seen['nodes']} nodes drawn, "
                      f"{'folded' if seen['folded'] else 'not folded'}; breadcrumbs: {seen['crumbs']}")
            browser.close()
    finally:
        proc.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
