"""The quick bound `Limits.before_op` puts on a broadcasting op's output: inputs of one shape count once, and
an output it cannot bound is still measured (np.broadcast_shapes) and refused before numpy allocates."""
from __future__ import annotations

import pytest

import engine as torch
from engine import op_table
from engine.limits import LimitExceeded, limited

LIMITS = {"max_tensor_elements": 100_000, "max_live_elements": 1_000_000, "max_graph_nodes": 10_000}


class _CountingNumpy:
    """numpy for engine.op_table, counting the shapes its `broadcast_sizes` reads (the slow path)."""

    def __init__(self, real):
        self.real = real
        self.shapes_read = 0

    def shape(self, a):
        self.shapes_read += 1
        return self.real.shape(a)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _measured(monkeypatch):
    counting = _CountingNumpy(op_table.np)
    monkeypatch.setattr(op_table, "np", counting)
    return counting


def test_inputs_of_one_shape_are_bounded_by_their_size(monkeypatch):
    with limited(**LIMITS):
        x = torch.ones(60_000)  # 60,000 x 60,000 is past max_tensor_elements: the product alone would not do
        s = torch.tensor(2.0)
        calls = _measured(monkeypatch)
        assert float((x * x).sum()) == 60_000.0
        assert float((x + s * x).sum()) == 180_000.0
        assert torch.where(x > 0, x, x).shape == (60_000,)
        assert calls.shapes_read == 0


def test_an_output_that_grows_is_still_refused():
    with limited(**LIMITS):
        col = torch.ones(1_000, 1)
        row = torch.ones(1, 1_000)
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            col * row  # (1,000, 1,000): each input 1,000 elements, the output a million
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            col + row + col  # a shape seen again after another still multiplies the bound


def test_single_elements_of_any_shape_add_nothing(monkeypatch):
    with limited(**LIMITS):
        x = torch.ones(60_000)
        one = torch.ones(1, 1, 1)
        calls = _measured(monkeypatch)
        y = x * one
        assert y.shape == (1, 1, 60_000) and calls.shapes_read == 0
        with pytest.raises(LimitExceeded, match="max_tensor_elements"):
            torch.ones(1_000, 1, 1) * torch.ones(1, 1, 1_000)
