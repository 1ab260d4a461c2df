"""Folded passes on the page (issue 11): expanding a group, panning and playing, in headless Chromium.

  .venv/bin/python bench/folds_page.py

Serves the fold fixture (tests/browser/fold_fixture.py: the 3,300-iteration chain, the 200-step RNN) to
the real page through Playwright's route interception, so it measures the page alone. Prints figures
beside the issue's targets (expand ≤ 200 ms, ≥ 55 fps panning and playing); no asserts.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "browser"), str(ROOT)]

import fixture_server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from test_folds import serve  # noqa: E402
from test_page import open_app, pause, run_source  # noqa: E402

FPS = """ms => new Promise(done => { const g = window.__fg.graph; let n = 0; const t0 = performance.now();
  const tick = now => { n++; if (g && window.__pan) g.panTo(window.__pan.x + (now - t0) * 0.6, window.__pan.y);
    if (now - t0 < ms) requestAnimationFrame(tick); else done(n * 1000 / (now - t0)); };
  requestAnimationFrame(tick); })"""
EXPAND = """async gid => { const t0 = performance.now(); await window.__fg.graph.expand(gid);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); return performance.now() - t0; }"""


def main():
    srv, url = fixture_server.start()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"])
        # the reference: a tutorial graph panned on this machine, now (2 shared cores: figures move with the load)
        ref = b.new_page(viewport={"width": 1280, "height": 720})
        ref.base = url
        open_app(ref)
        pause(ref)
        ref.evaluate("() => { const n = window.__fg.graph.model.graph.nodes[0]; window.__pan = {x: n.x, y: n.y}; }")
        print(f"reference: a tutorial graph pans at {ref.evaluate(FPS, 3000):.0f} fps on this machine now")
        ref.close()
        # the last group of each list was never fetched before: fetch + draw (the others were on the page)
        for name, n, path in (("chain", 3300, ["g0_3300", "g0_100", "g0_10", "gi0", "gi1", "gi2", "g10_20", "gi10", "g1000_1100"]),
                              ("rnn", 200, ["g0_200", "g0_10", "gi0", "gi1", "g10_20", "gi10", "gi11", "g100_110"])):
            pg = b.new_page(viewport={"width": 1280, "height": 720})
            pg.base = url
            open_app(pg)
            run_source(pg, serve(pg, name, n)[1])
            pause(pg)
            pg.keyboard.press("Home")
            times = {gid: pg.evaluate(EXPAND, gid) for gid in path}
            drawn = pg.evaluate("window.__fg.graph.nodeEls.size")
            pg.evaluate("() => { const g = window.__fg.graph, n = g.nodeEls.get('n2').n; g.zoomBy(1.5); "
                        "window.__pan = {x: n.x, y: n.y}; }")
            pg.wait_for_timeout(300)
            pan = pg.evaluate(FPS, 3000)
            pg.evaluate("window.__pan = null")
            pg.evaluate("() => { window.__fg.speed = 4; window.__fg.play(); }")
            play = pg.evaluate(FPS, 4000)
            pause(pg)
            steps = pg.evaluate("window.__fg.step")
            print(f"{name}: expand " + ", ".join(f"{g} {t:.0f} ms" for g, t in times.items()) + " (target ≤ 200 ms)")
            print(f"{name}: {drawn} records drawn with {len(path)} groups open; panning {pan:.0f} fps, playing at 4× "
                  f"{play:.0f} fps to step {steps} (target ≥ 55 fps); median expand {statistics.median(times.values()):.0f} ms")
            pg.close()
        b.close()
    srv.shutdown()


if __name__ == "__main__":
    main()
