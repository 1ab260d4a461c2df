"""Issue 10: a recurrent layer's time steps as child scopes of its module in the trace (docs/trace.md)."""
from __future__ import annotations

import pytest

import engine
from engine.recorder import Recorder


def record(build, steps=8, name="rnn"):
    """Run `build()`'s layer over `steps` steps under a recorder, the layer bound to `name` first."""
    engine.manual_seed(0)
    layer = build()
    rec = Recorder(value_limit=64, max_events=100_000)
    with rec:
        rec.name_tensor(layer, name)
        out, _ = layer(engine.randn(steps, 2, 3))
        out.sum().backward()
        names = rec.name_modules({name: layer})
    return rec.events, names


@pytest.mark.parametrize("cls", ["RNN", "GRU"])
def test_each_time_step_is_a_child_scope_of_the_layer(cls):
    events, names = record(lambda: getattr(engine.nn, cls)(3, 4), name="rnn")
    modules = {e["id"]: e for e in events if e["kind"] == "module"}
    layer = next(m for m, e in modules.items() if e["cls"] == cls)
    steps = {e["repr"]: m for m, e in modules.items() if e["cls"] == Recorder.STEP_CLS}
    assert list(steps) == [f"t={t}" for t in range(8)]
    assert all(modules[m]["parent"] == layer for m in steps.values())
    assert names[layer] == "rnn" and [names[steps[f"t={t}"]] for t in range(8)] == [f"rnn.t={t}" for t in range(8)]
    ops = [e for e in events if e["kind"] == "op"]
    per_step = {m: [e["grad_fn"] for e in ops if e["module"] == m] for m in steps.values()}
    cell = {"RNN": ["UnbindBackward0", "TBackward0", "AddmmBackward0", "AddBackward0", "TanhBackward0"],
            "GRU": ["UnbindBackward0", "UnsafeSplitBackward0", "UnsafeSplitBackward0", "UnsafeSplitBackward0"]}[cls]
    for m in steps.values():  # every step holds its own cell's ops
        assert per_step[m][:len(cell)] == cell, per_step[m]
    layer_ops = [e["grad_fn"] for e in ops if e["module"] == layer]
    assert "AddmmBackward0" in layer_ops and "StackBackward0" in layer_ops  # the whole-sequence projection, the stack


def test_steps_are_named_when_the_layer_is_named_after_it_ran():
    engine.manual_seed(0)
    gru = engine.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    rec = Recorder(value_limit=64, max_events=100_000)
    with rec:
        gru(engine.randn(3, 1, 3))
        rec.name_tensor(gru, "enc")
    named = {}
    for e in rec.events:
        if e["kind"] == "module_names":
            named.update(e["names"])
    labels = sorted(v for v in named.values() if v.startswith("enc."))
    assert labels == sorted(f"enc.l{layer}{sfx}.t={t}" for layer in range(2) for sfx in ("", "_reverse")
                            for t in range(3))


def test_same_layer_called_again_reuses_its_step_scopes():
    engine.manual_seed(0)
    rnn = engine.nn.RNN(3, 4)
    rec = Recorder(value_limit=64, max_events=100_000)
    with rec:
        for _ in range(3):
            rnn(engine.randn(4, 2, 3))
    steps = [e for e in rec.events if e["kind"] == "module" and e["cls"] == Recorder.STEP_CLS]
    assert len(steps) == 4


def test_lstm_stays_one_fused_node_per_layer():
    # PyTorch's CPU nn.LSTM is one MkldnnRnnLayerBackward0 per layer: no per-step ops to group
    events, _ = record(lambda: engine.nn.LSTM(3, 4), name="lstm")
    ops = [e["grad_fn"] for e in events if e["kind"] == "op"]
    assert ops.count("MkldnnRnnLayerBackward0") == 2  # the layer and its last cell state
    assert not [e for e in events if e["kind"] == "module" and e["cls"] == Recorder.STEP_CLS]
