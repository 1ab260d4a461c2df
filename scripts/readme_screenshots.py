"""The README's big-program screenshots, taken from the real app in headless Chromium.

  .venv/bin/python scripts/readme_screenshots.py [--out docs/img]

Starts the app (uvicorn app.main:app on a free port, as the browser tests do), runs the 200-step RNN
of bench/page.py with the Run button and steps to the end (every value and gradient computed, the loop
folded again, W and U beside it with their bundled "× 200" edges), fit to screen:
docs/img/big_program_rnn.png. Then the 150 × (Linear, Tanh) MLP the same way with its Sequential opened
one level (the 150 repetitions as one stacked card): docs/img/big_program_mlp.png (1280×720 each).
Prints what was on screen (nodes drawn, folded or not, the breadcrumb path) so a wrong picture is
noticed before it is committed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "bench"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _start_app  # noqa: E402
from page import BIG_PROGRAMS  # noqa: E402

# file: (program, groups to open by the start of their label after the run)
SHOTS = {"big_program_rnn.png": ("RNN, 200 steps", ()), "big_program_mlp.png": ("150 × (Linear(8, 8), Tanh)", ("model", "× 150"))}
VIEWPORT = {"width": 1280, "height": 720}


def take(page, name: str, program: str, open_groups: tuple, out: Path) -> dict:
    source = BIG_PROGRAMS[program][0]
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("p => document.body.dataset.ready && document.body.dataset.ready !== p", arg=prev, timeout=180_000)
    page.evaluate("window.__fg.stopPlaying()")
    # the last step: every value and gradient is there, and the folds playback opened are closed again
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length, {animate: false})")
    page.wait_for_timeout(400)
    for i, label in enumerate(open_groups):
        page.locator(f'svg.fg-graph .fg-group-node[aria-label^="Expand {label}"]').first.click()
        page.wait_for_function("n => document.querySelectorAll('svg.fg-graph .fg-group-box').length > n", arg=i, timeout=20_000)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the picture
    page.evaluate("window.__fg.graph.forceWhole = true; window.__fg.graph.fit(false)")
    page.wait_for_timeout(600)  # the fold's glide and the crisp repaint at rest
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
            for name, (program, open_groups) in SHOTS.items():
                seen = take(page, name, program, open_groups, out)
                print(f"{out / name}: {program}; {seen['nodes']} nodes drawn, "
                      f"{'folded' if seen['folded'] else 'not folded'}; breadcrumbs: {seen['crumbs']}")
            browser.close()
    finally:
        proc.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
