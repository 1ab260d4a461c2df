"""Conv and pooling nodes are written as PyTorch's calls with keywords, defaults left out,
by app/trace/labels.py (which sizes the nodes) and static/js/oplabels.js (which draws them) alike."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import engine as torch
from app.trace.labels import op_text
from engine.recorder import Recorder, op_table

JS = Path(__file__).resolve().parents[2] / "static" / "js" / "oplabels.js"
F = torch.nn.functional


def recorded_params(fn) -> tuple[str, str, list]:
    """(op, label, params) of the last op `fn` records, as the trace carries them."""
    x = torch.randn(1, 2, 8, 8, requires_grad=True)
    with Recorder(value_limit=16, max_events=10_000) as rec:
        fn(x)
    op = [e for e in rec.events if e["kind"] == "op"][-1]
    return op["op"], op["label"], op["params"]


w = torch.randn(4, 2, 3, 3)
CASES = [
    (lambda x: F.conv2d(x, w), "conv2d"),
    (lambda x: F.conv2d(x, w, stride=2, padding=1), "conv2d(stride=2, padding=1)"),
    (lambda x: F.conv2d(x, w, stride=(1, 2), dilation=2), "conv2d(stride=(1, 2), dilation=2)"),
    (lambda x: F.conv2d(x, torch.randn(4, 1, 3, 3), groups=2), "conv2d(groups=2)"),
    (lambda x: F.conv1d(x[:, :, 0], torch.randn(3, 2, 3), padding=1), "conv1d(padding=1)"),
    (lambda x: F.max_pool2d(x, 2), "max_pool2d(kernel_size=2)"),
    (lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
     "max_pool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True)"),
    (lambda x: F.max_pool2d(x, (2, 3), stride=1), "max_pool2d(kernel_size=(2, 3), stride=1)"),
    (lambda x: F.avg_pool2d(x, 2), "avg_pool2d(kernel_size=2)"),
    (lambda x: F.avg_pool2d(x, 2, stride=1, count_include_pad=False, divisor_override=3),
     "avg_pool2d(kernel_size=2, stride=1, count_include_pad=False, divisor_override=3)"),
    (lambda x: F.adaptive_avg_pool2d(x, (4, 2)), "adaptive_avg_pool2d(output_size=(4, 2))"),
    (lambda x: torch.nn.Conv2d(2, 3, 3, padding=1)(x), "conv2d(padding=1)"),
    (lambda x: torch.nn.MaxPool2d(2, 2)(x), "max_pool2d(kernel_size=2)"),
]


@pytest.mark.parametrize(("fn", "text"), CASES, ids=[c[1] for c in CASES])
def test_conv_and_pool_nodes_read_as_pytorch_calls(fn, text):
    op, label, params = recorded_params(fn)
    assert op_text(op, label, params) == text


def test_keyword_expressions_on_the_page_match_the_server():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    table = op_table()
    cases = []
    for fn, _ in CASES:
        op, label, params = recorded_params(fn)
        cases.append((op, label, params, table[op]["params"]))
    script = (f"import {{ opText, opExpr }} from {json.dumps(JS.as_uri())};"
              "const cs = JSON.parse(process.argv[1]);"
              "console.log(JSON.stringify([cs.map((c) => opText(...c)), "
              "cs.map(([op, label, p, f]) => opExpr(op, label, p, ['x', 'w'], f))]));")
    out = subprocess.run([node, "--input-type=module", "-e", script, json.dumps(cases)],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    texts, exprs = json.loads(out)
    assert texts == [c[1] for c in CASES]
    # an unnamed result reads as the call: "conv2d(x, w, stride=2, padding=1)", "max_pool2d(x, w, kernel_size=2)"
    assert exprs[1] == "conv2d(x, w, stride=2, padding=1)" and exprs[0] == "conv2d(x, w)"
