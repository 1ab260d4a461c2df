"""torch.nn.utils.rnn.pad_sequence (engine/nn/utils.py): values, gradients and the CopySlices node as PyTorch's (both
sides, batch_first or not), reachable from a sandboxed program under its import path; bounded and sealed."""
import numpy as np
import pytest
from sandbox_testing import err, leaks, same_as_cpython

import engine as E

PROGRAM = """import torch
from torch.nn.utils.rnn import pad_sequence
seqs = [torch.tensor([1, 2, 3]), torch.tensor([4]), torch.tensor([5, 6])]
print(pad_sequence(seqs, batch_first=True), pad_sequence(seqs, padding_value=-1))
torch.manual_seed(0)
x = [torch.randn(2, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)]
p = torch.nn.utils.rnn.pad_sequence(x, batch_first=True, padding_side="left")
p.sum().backward()
print(p.shape, type(p.grad_fn).__name__, p.grad_fn.name(), x[0].grad)
"""


def test_a_program_pads_as_pytorch_does():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_values_and_gradients_are_pytorchs(batch_first, side):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    seqs_t = [torch.randn(n, 2, requires_grad=True) for n in (3, 1, 4)]
    seqs_e = [E.tensor(s.detach().numpy(), requires_grad=True) for s in seqs_t]
    out_t = torch.nn.utils.rnn.pad_sequence(seqs_t, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    out_e = E.nn.utils.rnn.pad_sequence(seqs_e, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    weights = torch.randn(*out_t.shape)
    (out_t * weights).sum().backward()
    (out_e * E.tensor(weights.numpy())).sum().backward()
    assert np.array_equal(out_e.detach().numpy(), out_t.detach().numpy())
    assert out_e.grad_fn.name() == out_t.grad_fn.name()
    for a, b in zip(seqs_e, seqs_t):
        assert np.array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("line, kind", [
    ("pad_sequence([torch.ones(10**7), torch.ones(1)] * 100)", "LimitExceeded"),
    ("pad_sequence([])", "RuntimeError"),
    ("pad_sequence([torch.ones(2, 3), torch.ones(2, 4)])", "RuntimeError"),
    ("pad_sequence([1, 2])", "TypeError"),
    ("pad_sequence([torch.ones(2)], padding_side='middle')", "ValueError"),
    ("pad_sequence.__globals__", "AttributeError"),
    ("torch.nn.utils.rnn.pack_padded_sequence.__code__", "AttributeError"),
])
def test_pad_sequence_is_bounded_and_sealed(line, kind):
    e = err(f"import torch\nfrom torch.nn.utils.rnn import pad_sequence\nx = 1\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])
