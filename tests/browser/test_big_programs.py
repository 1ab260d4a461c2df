"""The MNIST-sized MLP and LeNet-5 on a 64-image batch, run and drawn by the page (issue 9 §5-6).

Prints what the page downloaded and how long it took to its first drawn frame (figures for the README; no
timing asserts). Screenshots in test-artifacts/.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_page import open_app, pause, run_source

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "programs"  # shared with tests/app/test_big_programs_api.py
_ROUNDED = ("print(step, loss.item())", "print(step, round(loss.item(), 4))")
MNIST_MLP = (PROGRAMS_DIR / "mnist_mlp.py").read_text().replace(*_ROUNDED)
LENET5 = (PROGRAMS_DIR / "lenet5_batch64.py").read_text().replace(*_ROUNDED)

DOWNLOADED = """() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/api/stream') || e.name.includes('/api/run'))
    .map(e => e.encodedBodySize || e.transferSize || 0).reduce((a, b) => a + b, 0)"""


@pytest.mark.parametrize("name, source", [("mnist_mlp", MNIST_MLP), ("lenet5", LENET5)])
def test_big_networks_are_run_and_drawn(page, shot, name, source):
    if page.server_kind != "app":
        pytest.skip("needs the real app")
    open_app(page)
    page.evaluate("performance.clearResourceTimings()")
    started = time.monotonic()
    run_source(page, source)
    ready_s = time.monotonic() - started
    pause(page)
    assert page.locator("svg.fg-graph [data-node-id]").count() > 10
    out = page.evaluate("document.getElementById('stdout') ? document.getElementById('stdout').textContent : ''")
    assert "2 " in out or "1 " in out
    downloaded = page.evaluate(DOWNLOADED)
    print(f"\n{name}: first frame after {ready_s:.2f} s, downloaded {downloaded:,} bytes")
    shot(page, f"big_{name}")
    page.errors.check()
