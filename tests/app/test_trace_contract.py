"""The trace contract is written once: every event kind the engine's recorder and the runner emit is
defined in engine/trace_events.py and documented (with every field it carries) in docs/trace.md."""

import re
from pathlib import Path

import pytest

from app.core.config import Settings
from app.runner.capture import run_capture
from app.runner.protocol import End, Events
from app.runner.worker import sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.frames import NO_NODE, NODE_FIELD
from app.trace.policy import RunPolicy
from engine import trace_events
from engine.trace_events import json_number, opens_pass

ROOT = Path(__file__).resolve().parents[2]
POLICY = RunPolicy.from_settings(Settings())
# every pass drawn (and so recorded in full: a pass the recorder sends light leaves out what died with it)
DRAW_ALL = RunPolicy(head=1_000, tail=0, max_passes=10_000)

# what the examples may not reach: every recorder hook at least once
EXTRA = """import torch
import torch.nn as nn
w = torch.tensor([1.0, -2.0], requires_grad=True)
x = torch.ones(2)
x.requires_grad_()
h = w * x
h.retain_grad()
d = h.detach()
with torch.no_grad():
    z = w * 2
loss = (h * h).sum()
loss.backward(retain_graph=True)
w.grad.mul_(0.5)
w.grad.zero_()
with torch.no_grad():
    w -= 0.1 * x
model = nn.Linear(2, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
out = model(x).sum()
out.backward()
opt.step()
opt.zero_grad()
y = w.sum()
y.backward()
y.backward()
"""
# a loop long enough for its middle passes to run quietly (app/runner/quiet.py): the `quiet` kind
QUIET_EXTRA = """import torch
w = torch.ones(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.01)
for i in range(20):
    opt.zero_grad()
    loss = (w * w).sum()
    loss.backward()
    opt.step()
"""
# hooks and a custom autograd.Function (issue 9 §2): the `hook` kind and the fields a custom Function adds
AUTOGRAD_EXTRA = """import torch
import torch.nn as nn
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * 3
    @staticmethod
    def backward(ctx, ga, gb):
        x, = ctx.saved_tensors
        return ga * 2 + gb * 3
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g * 10)
x.register_post_accumulate_grad_hook(lambda t: None)
a, b = Two.apply(x)
a.register_hook(lambda g: print(g))
m = nn.Linear(2, 1)
m.register_forward_pre_hook(lambda mod, args: None)
m.register_forward_hook(lambda mod, args, out: None)
m.register_full_backward_hook(lambda mod, gi, go: None)
(m(a).sum() + b.sum()).backward()
"""


def documented() -> dict[str, set[str]]:
    """docs/trace.md's recorder table: kind -> the field names its row lists (in backticks)."""
    text = (ROOT / "docs" / "trace.md").read_text()
    rows = {}
    for line in text.split("## 2.")[0].splitlines():
        m = re.match(r"\| `(\w+)` \| (.*?) \| [^|]*\|$", line)
        if m:
            names = {part.strip() for group in re.findall(r"`([^`]*)`", m.group(2)) for part in group.split(",")}
            rows[m.group(1)] = {n for n in names if re.fullmatch(r"[a-z_]+", n)}
    return rows


@pytest.fixture(scope="module", params=[POLICY])
def runs(request) -> list[list[dict]]:
    """The events of each run: every example and the extras, streamed and not."""
    limits = sandbox_limits(Settings())
    sources = [p.read_text() for p in sorted((ROOT / "examples").glob("*.py"))] + [EXTRA]
    sources += [AUTOGRAD_EXTRA, QUIET_EXTRA]
    out: list[list[dict]] = []
    for source in sources:
        for stream in (True, False):
            msgs: list = []
            run_capture(source, limits, 256, 100_000, msgs.append, stream=stream, policy=request.param,
                        quiet_passes=True)
            assert isinstance(msgs[-1], End)
            out.append([e for m in msgs if isinstance(m, Events) for e in m.events])
    return out


@pytest.fixture(scope="module")
def emitted(runs) -> list[dict]:
    return [e for events in runs for e in events]


def test_every_emitted_kind_is_defined_and_documented(emitted):
    kinds = {e["kind"] for e in emitted}
    rows = documented()
    assert kinds <= trace_events.KINDS, f"not in engine/trace_events.py: {kinds - trace_events.KINDS}"
    assert trace_events.KINDS <= set(rows), f"not documented in docs/trace.md: {trace_events.KINDS - set(rows)}"
    assert set(rows) <= trace_events.KINDS, f"documented but not defined: {set(rows) - trace_events.KINDS}"
    assert kinds == trace_events.KINDS, f"never emitted here (extend EXTRA): {trace_events.KINDS - kinds}"


def test_every_emitted_field_is_documented(emitted):
    rows = documented()
    missing = {(e["kind"], k) for e in emitted for k in e if k != "kind" and k not in rows.get(e["kind"], ())}
    assert not missing, f"fields missing from docs/trace.md's table: {sorted(missing)}"


def test_the_contract_helpers():
    assert [json_number(x) for x in (float("nan"), float("inf"), float("-inf"), 1.5, 2, None)] == \
        ["nan", "inf", "-inf", 1.5, 2, None]
    assert opens_pass({"kind": "backward_begin"}) and opens_pass({"kind": "op", "grad_fn": "MulBackward0"})
    assert not opens_pass({"kind": "op", "grad_fn": None}) and not opens_pass({"kind": "inplace"})
    assert opens_pass({"kind": "zero_grad"}), "clearing the gradients starts the next step (issue 23 §3)"


@pytest.mark.parametrize("runs", [DRAW_ALL], indirect=True)
def test_every_frame_names_its_node(runs):
    """The server writes `node` on every frame (docs/trace.md §2): the graph node the frame is about, or null."""
    pass_kinds = trace_events.KINDS - trace_events.META_KINDS
    assert set(NODE_FIELD) | NO_NODE == pass_kinds and not set(NODE_FIELD) & NO_NODE
    seen = set()
    for events in runs:
        b = TraceBuilder(None, policy=DRAW_ALL)
        b.feed_all(events)
        b.finish()
        for p in b.passes:
            drawn = {n["id"] for n in p["graph"]["nodes"]} if p["graph"] else None
            prelude = bool(p["frames"]) and p["frames"][0]["kind"] == trace_events.ZERO_GRAD
            for f in p["frames"]:
                assert "node" in f, f
                kind, node = f["kind"], f["node"]
                seen.add(kind)
                if kind in NO_NODE or kind == trace_events.HOOK and f["tensor"] is None:
                    assert node is None, f
                    continue
                assert isinstance(node, str) and node[0] in "tn", f
                # a pass a zero_grad opened may edit other tensors before its forward (`w -= lr * x` under no_grad)
                prelude = prelude and not (kind == trace_events.OP and f.get("grad_fn"))
                if drawn is not None and f["phase"] != "update" and not prelude:
                    assert node in drawn, f  # forward and backward frames are about nodes of the pass's graph
    assert seen == pass_kinds, f"never in a frame here (extend EXTRA): {pass_kinds - seen}"
