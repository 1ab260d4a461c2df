"""Issue 21 (speed): the middle passes of a long loop run quietly (app/runner/quiet.py). A differential test: the
answer built from a quiet run equals the one full recording gives, up to ids, for loops of every shape the
tutorials write; where it cannot (a loop that makes fewer backwards than forecast, a backward through graphs the
quiet passes built), the answer says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import test_pruned_first_pass as pruned_first_pass
from flowgrad_testing import built, canonical_ids

from app.core.config import Settings
from app.runner.capture import StreamingRecorder, run_capture
from app.runner.protocol import Events
from app.runner.quiet import PassForecast, QuietPasses, scalar_loss
from app.runner.worker import sandbox_limits
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy
from app.trace.quiet import QUIET_REASON, SMALLER_REASON

ROOT = Path(__file__).resolve().parents[2]
POLY = (ROOT / "bench" / "programs" / "polynomial_autograd.py").read_text().replace("range(2000)", "range(60)")

NN_ADAM = """import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.MSELoss()
for epoch in range(50):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(epoch, loss.item())
print(model(x[:2]))
"""

CUSTOM_FN = """import torch
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g
torch.manual_seed(1)
w = torch.randn(4, requires_grad=True)
for i in range(40):
    loss = Cube.apply(w).sum() + (w ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad.zero_()
print(w)
"""

# a state carried through detach, an edit through `.data`, gradients accumulated over two steps, a loss of shape [1]
CARRIED = """import torch
torch.manual_seed(2)
W = torch.randn(3, 3, requires_grad=True)
opt = torch.optim.SGD([W], lr=0.05, momentum=0.9)
h = torch.zeros(3)
for i in range(60):
    x = torch.randn(3)
    h = torch.tanh(W @ x + h.detach())
    loss = (h ** 2).sum().reshape(1)
    loss.backward()
    if i % 2 == 1:
        opt.step()
        opt.zero_grad()
        W.data.clamp_(-1.5, 1.5)
print(W.sum().item(), h)
"""

PROGRAMS = {"poly": POLY, "nn_adam": NN_ADAM, "custom_fn": CUSTOM_FN, "carried": CARRIED}


def run(source: str, *, quiet: bool, stream: bool = False, policy: RunPolicy | None = None,
        max_nodes: int | None = None):
    """The trace built from what a run ships, its end, and how many events it shipped; ``max_nodes``: the builder's
    node limit of a drawn pass (and the recorder's max_pass_nodes)."""
    s = Settings()
    max_nodes = max_nodes or s.max_drawn_nodes
    return built(source, policy=policy or RunPolicy(3, 2, 10_000), max_nodes=max_nodes, stream=stream,
                 value_budget=s.max_answer_bytes, max_pass_nodes=max_nodes, quiet_passes=quiet)


def same_answer(quiet, full) -> None:
    (bq, eq, _), (bf, ef, _) = quiet, full
    assert bq.steps == bf.steps  # every pass's loss and norms
    assert len(bq.passes) == len(bf.passes)
    for pq, pf in zip(bq.passes, bf.passes):
        assert canonical_ids(pq) == canonical_ids(pf), pq["index"]
    assert (eq.stdout, eq.variables, eq.error, eq.truncated, eq.reasons) == \
        (ef.stdout, ef.variables, ef.error, ef.truncated, ef.reasons)
    assert bq.ops_used == bf.ops_used and list(bq.reasons) == list(bf.reasons)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_quiet_run_answers_as_full_recording_does(name, stream):
    quiet, full = run(PROGRAMS[name], quiet=True, stream=stream), run(PROGRAMS[name], quiet=False, stream=stream)
    same_answer(quiet, full)
    assert quiet[2] < full[2] * 0.6, (quiet[2], full[2])  # the middle passes shipped (almost) nothing
    drawn = [p for p in quiet[0].passes if p["graph"] is not None]
    assert [p["index"] for p in drawn] == [0, 1, 2, len(quiet[0].passes) - 2, len(quiet[0].passes) - 1]


def test_every_pass_has_its_loss_when_the_loss_has_shape_one():
    # NOTE: float() of a 1-element array that is not 0-d raises on numpy >= 2.4; the loss curve lost those points
    b, _, _ = run(CARRIED, quiet=False)
    assert all(type(s["loss"]) is float for s in b.steps)
    import engine as torch
    assert scalar_loss(torch.tensor([2.5])) == 2.5 and scalar_loss(torch.ones(2)) is None


def test_passes_asked_for_are_recorded_in_full():
    policy = RunPolicy(3, 2, 10_000, frozenset({20, 31}))
    quiet, full = run(POLY, quiet=True, policy=policy), run(POLY, quiet=False, policy=policy)
    same_answer(quiet, full)
    assert quiet[0].passes[20]["graph"] is not None and quiet[0].passes[31]["graph"] is not None


def test_the_last_passes_before_max_passes_are_drawn_as_full_recording_draws_them():
    policy = RunPolicy(3, 2, 30)  # the run makes 60 passes: the builder keeps 30 and draws 28 and 29
    quiet, full = run(POLY, quiet=True, policy=policy), run(POLY, quiet=False, policy=policy)
    same_answer(quiet, full)
    assert [p["index"] for p in quiet[0].passes if p["graph"] is not None] == [0, 1, 2, 28, 29]
    values = [n["value"] for n in quiet[0].passes[29]["graph"]["nodes"] if n.get("name") == "d"]
    assert values and values[0] is not None


def test_a_loop_that_can_leave_early_is_recorded_in_full():
    source = POLY.replace("    if t % 100 == 99:", "    if loss.item() < 0:\n        break\n    if t % 100 == 99:")
    quiet, full = run(source, quiet=True), run(source, quiet=False)
    same_answer(quiet, full)
    assert quiet[2] == full[2]


def test_a_loop_that_makes_fewer_backwards_than_forecast_says_so():
    source = CUSTOM_FN.replace("    loss.backward()", "    if i < 30:\n        loss.backward()").replace(
        "        w.grad.zero_()", "        if w.grad is not None:\n            w.grad.zero_()")
    (bq, eq, _), (bf, _, _) = run(source, quiet=True), run(source, quiet=False)
    assert [s["loss"] for s in bq.steps[:30]] == [s["loss"] for s in bf.steps[:30]]  # the loss curve is whole
    last = bq.passes[29]  # a summary, as a middle pass is: the page records it when it is opened
    assert last["graph"] is None and "folded" not in last and eq.error is None
    assert f"pass 29: {QUIET_REASON}" in bq.reasons


def test_a_backward_through_graphs_made_quietly_says_so():
    source = POLY + "\nlosses = []\nfor i in range(40):\n    l = (a * x).sum()\n    losses.append(l)\n" \
        "    l.backward(retain_graph=True)\ntotal = torch.stack(losses).sum()\ntotal.backward()\n"
    (bq, eq, _) = run(source, quiet=True)
    assert eq.error is None and any("recorded nothing" in r for r in eq.reasons), (eq.error, eq.reasons)
    assert bq.passes[-1]["graph"] is not None  # drawn all the same, without the nodes it was not told of


def test_no_pass_runs_quietly_once_half_the_time_is_spent():
    s = Settings()

    def shipped(**kw) -> int:
        import engine
        from sandbox import backend_for, run_program
        count = [0]
        rec = StreamingRecorder(lambda m: count.__setitem__(0, count[0] + len(getattr(m, "events", ()))),
                                policy=RunPolicy(3, 2, 10_000), stream=False, value_limit=s.value_limit,
                                max_events=s.max_events, **kw)
        run_program(POLY, sandbox_limits(s), backend_for(engine), recorder=rec)
        rec.flush(final=True)
        return count[0], rec.quiet_count

    assert shipped(quiet_passes=True, quiet_cpu_s=0.0) == shipped(quiet_passes=False)
    # all but the head (3), the pass whose backward tells the loop's pattern, the tail (2), the pass before it, a margin (2)
    assert shipped(quiet_passes=True, quiet_cpu_s=None)[1] == 60 - 3 - 1 - 2 - 1 - 2


def test_the_forecast_follows_the_outermost_loop():
    f, loop, other = PassForecast(), object(), object()
    # one backward an iteration: known once two iterations in a row ran one
    assert [f.remaining((loop, 10, i)) for i in (1, 2, 3, 4)] == [None, None, 7, 6]
    assert f.remaining((loop, 10, 5)) == 5 and f.remaining(None) is None
    # two backwards an iteration (a GAN's): the second one of the iteration leaves one fewer to come
    f = PassForecast()
    got = [f.remaining((loop, 10, i)) for i in (1, 1, 2, 2, 3, 3)]
    assert got == [None, None, None, None, 15, 14]
    # an iteration without a backward breaks the pattern; another loop starts over
    assert f.remaining((loop, 10, 5)) is None and f.remaining((other, 10, 6)) is None
    assert f.remaining((other, 10, 1)) is None


def test_the_stand_in_answers_every_call_the_engine_makes_on_a_recorder():
    calls = set()
    for path in (ROOT / "engine").rglob("*.py"):
        if path.name != "recorder.py":
            calls |= set(re.findall(r"\brec\.([a-z_]+)\(", path.read_text()))
    assert calls and {c for c in calls if not hasattr(QuietPasses, c)} == set()


def test_a_long_quiet_stretch_ships_as_it_goes(monkeypatch):
    import app.runner.quiet as quiet

    monkeypatch.setattr(quiet, "QUIET_BATCH", 16)  # so that 51 quiet passes go in four events
    quiet = run(POLY, quiet=True)
    same_answer(quiet, run(POLY, quiet=False))
    events = []
    s = Settings()
    run_capture(POLY, sandbox_limits(s), s.value_limit, s.max_events, events.append, stream=False,
                policy=RunPolicy(3, 2, 10_000), quiet_passes=True)
    sizes = [len(e["passes"]) for m in events if isinstance(m, Events) for e in m.events if e["kind"] == "quiet"]
    assert sizes == [16, 16, 16, 3]


def test_a_tensor_made_quietly_and_held_by_name_is_drawn_with_its_name_and_value():
    source = POLY.replace("    loss.backward()", "    if t == 30:\n        snap = d.detach() * 2\n"
                          "    loss.backward()") + "final = (d * snap).sum()\nfinal.backward()\n"
    (bq, eq, nq), (bf, _, _) = run(source, quiet=True), run(source, quiet=False)
    assert eq.error is None and bq.steps == bf.steps and nq < 500

    def snap_node(b):
        return next(n for n in b.passes[-1]["graph"]["nodes"] if n.get("name") == "snap")

    assert snap_node(bq)["value"] == snap_node(bf)["value"] is not None


# a first pass too big to draw (300 nodes here): its rest runs quietly; what later passes draw of it, they draw alike
TENSOR_LOOP = pruned_first_pass.PROGRAMS["polynomial_tensor"]
# a first pass whose tensors later graphs draw (tests/app/test_pruned_first_pass.py), but for a backward through a
# graph it made (test_a_backward_through_graphs_made_quietly_says_so)
OUTLIVING = pruned_first_pass.OUTLIVING.replace(
    "    if i == 110:\n        early = w * h\n        t = h\n        t = keep\n", "").replace("early.sum().backward()\n", "")


# a first pass of counting loops, then training: the head passes after it draw W as full recording does
BIGRAM = pruned_first_pass.PROGRAMS["bigram"]


@pytest.mark.parametrize("name", ["tensor_loop", "outliving", "bigram"])
def test_the_rest_of_a_pass_too_big_to_draw_runs_quietly(name):
    source = {"tensor_loop": TENSOR_LOOP, "outliving": OUTLIVING, "bigram": BIGRAM}[name]
    quiet, full = run(source, quiet=True, max_nodes=300), run(source, quiet=False, max_nodes=300)
    same_answer(quiet, full)  # tensors made quietly are drawn later with their name, value, line and role
    assert quiet[2] < full[2] * 0.8, (quiet[2], full[2])
    assert quiet[0].passes[0]["graph"] is None and quiet[0].passes[0]["folded"] == full[0].passes[0]["folded"]


def test_in_process_a_pass_too_big_to_draw_wakes_at_its_backward():
    """No interpreter tells the recorder about loops (``import engine as torch``): only a pass too big to draw runs
    quietly, to its backward's end."""
    import engine as torch

    def build(quiet: bool):
        b = TraceBuilder(None, policy=RunPolicy(3, 2, 10_000), max_nodes=300)
        rec = StreamingRecorder(lambda m: b.feed_all(m.events) if isinstance(m, Events) else None,
                                policy=RunPolicy(3, 2, 10_000), stream=False, value_limit=64, max_events=100_000,
                                max_pass_nodes=300, quiet_passes=quiet)
        torch.reset_run_state()
        with rec:
            x = torch.linspace(0, 1, 8)
            w = torch.ones(8, requires_grad=True)
            for i in range(200):
                x = x * 0.5 + i
            for _ in range(6):
                loss = (w * x).sum()
                loss.backward()
        rec.flush(final=True)
        b.finish()
        return b, rec

    (bq, rq), (bf, _) = build(True), build(False)
    assert bq.steps == bf.steps and len(bq.steps) == 6 and rq.quiet_count == 1  # the first pass's own backward
    assert bq.passes[0]["graph"] is None and all(p["graph"] is not None for p in bq.passes[1:3] + bq.passes[4:])

    def drawn(b):  # the nodes each pass draws, with their values and gradients (their order follows first sight)
        return [sorted(repr((n["kind"], n["label"], n.get("role"), n.get("value"), n.get("grad")))
                       for n in p["graph"]["nodes"]) for p in b.passes[1:3] + b.passes[4:]]

    assert drawn(bq) == drawn(bf)


# a first pass whose loop adds 6 graph nodes an iteration (two ops, their outputs and numbers): 18,000 in all, or
# 3,600 when it stops adding at 600
NODES_LOOP = """import torch
x = torch.ones(3)
for i in range(3000):
    if i < STOP:
        y = x * 2 + 1
w = torch.ones(3, requires_grad=True)
(w * y).sum().backward()
"""


def test_a_pass_forecast_too_big_to_draw_runs_quietly_from_its_loop():
    source = NODES_LOOP.replace("STOP", "3000")
    quiet, full = run(source, quiet=True), run(source, quiet=False)  # drawn with 5,000 nodes at most
    same_answer(quiet, full)
    assert full[0].passes[0]["graph"] is None and quiet[2] < full[2] * 0.5, (quiet[2], full[2])


def test_a_pass_forecast_too_big_that_is_not_comes_as_a_summary_recorded_when_opened():
    source = NODES_LOOP.replace("STOP", "600")
    (bq, eq, _), (bf, _, _) = run(source, quiet=True), run(source, quiet=False)
    assert bf.passes[0]["graph"] is not None  # 3,600 nodes: full recording draws it
    assert bq.passes[0]["graph"] is None and "folded" not in bq.passes[0] and f"pass 0: {SMALLER_REASON}" in bq.reasons
    assert bq.steps == bf.steps and eq.error is None
    asked = RunPolicy(3, 2, 10_000, frozenset({0}))  # opened: the page records it, asking for it
    same_answer(run(source, quiet=True, policy=asked), run(source, quiet=False, policy=asked))
