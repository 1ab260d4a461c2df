"""Figures stream into the output pane in order with the printed text while the program still runs (`figure`
events, docs/trace.md §3): text, figure, then the later text once it is printed. Screenshot in test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_page import open_app, wait_ready

ROOT = Path(__file__).resolve().parents[2]

# a figure, then 0.8 s (of the clock, however loaded the machine) of work with no graph (no passes: the run is not a "long loop"),
# then more text. NumPy work: not recorded, and each iteration is long enough (~2 ms) that a fast machine stays far
# below max_loop_iterations (a 64×64 torch matmul loop passed 10,000 iterations in CI)
SOURCE = """import time
import torch
import numpy as np
import matplotlib.pyplot as plt
print('before the figure')
plt.imshow(np.arange(16.0).reshape(4, 4), cmap='viridis')
plt.colorbar()
plt.title('weights')
plt.show()
a = np.ones((384, 384))
t0 = time.perf_counter()
while time.perf_counter() - t0 < 0.8:
    b = a @ a
print('after the work')
"""

PANE = ("() => Array.from(document.getElementById('stdout').childNodes, "
        "(n) => n.nodeType === 3 ? n.textContent : '[' + n.tagName + ']').join('')")


def test_a_figure_shows_while_the_program_still_runs(page, shot):
    if page.server_kind != "app":
        pytest.skip("figures need the real app (the fixture server has no matplotlib)")
    open_app(page)
    prev = page.evaluate("document.body.dataset.ready || ''")
    page.evaluate("src => { window.__fg.editor.text = src; }", SOURCE)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("() => { const i = document.querySelector('#stdout img.figure');"
                           " return i && i.complete && i.naturalWidth > 0; }", timeout=30000)
    during = page.evaluate(PANE)
    running = page.evaluate("document.getElementById('run').disabled")
    shot(page, "figure_streamed_mid_run")
    page.locator("section.output").screenshot(path=str(ROOT / "test-artifacts" / "figure_streamed_output_pane.png"))
    assert running, "the run ended before the figure was seen: it did not stream"
    assert during == "before the figure\n[IMG]", during
    wait_ready(page, prev, timeout=60000)
    assert page.evaluate(PANE) == "before the figure\n[IMG]after the work\n", page.evaluate("document.getElementById('status').textContent")
    assert page.locator("#stdout img.figure").count() == 1
    page.errors.check()
