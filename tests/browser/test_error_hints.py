"""Errors that teach on the page: a hint under the message for the common beginner mistakes, and no
stale animation left from the last run."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_page import open_app, run_source

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)", "inner sizes 5 ≠ 3"),
    ("mat1 and mat2 shapes cannot be multiplied (4x3 and 2x3)", "Did you mean the second one transposed"),
    ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", "dimension 1 is 3"),
    ("element 0 of tensors does not require grad and does not have a grad_fn", "requires_grad=True"),
    ("Trying to backward through the graph a second time (or directly access saved tensors after they have already "
     "been freed).", "retain_graph=True"),
    ("grad can be implicitly created only for scalar outputs", ".sum() or .mean()"),
    ("Only Tensors of floating point and complex dtype can require gradients", "floats"),
    ("something else entirely", None),
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_hint_rules():
    script = ("import { hintFor } from './static/js/hints.js';\n"
              f"const msgs = {json.dumps([m for m, _ in CASES])};\n"
              "console.log(JSON.stringify(msgs.map((message) => hintFor({ message }))));")
    out = subprocess.run(["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for (message, want), got in zip(CASES, json.loads(out)):
        assert (got is None) if want is None else (want in got), (message, got)


def test_the_page_shows_the_hint_and_no_stale_pulse(page, shot):
    open_app(page)
    run_source(page, "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n")
    box = page.locator("#error")
    box.wait_for(state="visible")
    assert "grad can be implicitly created only for scalar outputs" in box.inner_text()
    assert "Hint: backward() needs one number" in box.locator(".err-hint").inner_text()
    run_source(page, "import torch\nx = torch.tensr([1.0])\n")
    assert "Did you mean: 'tensor'?" in box.inner_text()
    assert "closest name is `tensor`" in box.locator(".err-hint").inner_text()
    assert page.locator("svg.fg-overlay circle, svg.fg-overlay [class*=pulse]").count() == 0
    shot(page, "error_hint")
