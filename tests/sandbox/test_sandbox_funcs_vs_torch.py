"""A program using the tensor functions tutorials use (issue 9 section 5), run in the sandbox, prints what the same
program prints under the installed PyTorch: values (few digits, so float rounding cannot differ), grad_fn names,
torch.return_types printouts, gradients."""
import contextlib
import io

import pytest
from sandbox_testing import ok

torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch.nn.functional as F

x = torch.tensor([[3.0, 1.0, 2.0, 2.0], [0.0, 5.0, 4.0, -1.0], [1.0, 1.0, -2.0, 0.5]], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0, 1.0], requires_grad=True)
idx = torch.tensor([[0, 2, 1, 0], [2, 2, 0, 1]])
print(x.sort(dim=1, descending=True, stable=True))
print(torch.topk(x + torch.arange(4) * 0.125, 2))  # no ties: PyTorch leaves their order to the kernel
print(x.max(1))
print(torch.argsort(x, dim=0, stable=True))
print(x.gather(0, idx))
print(torch.zeros(3, 4).scatter_add(0, idx, torch.ones(2, 4)))
print(x.masked_fill(x > 2, 0.0))
print(x.cumsum(1), x.cumprod(1))
print(torch.einsum("ij,j->i", x, w))
print(torch.einsum("i,j->ij", w, w).tril(diagonal=-1))
print(x.repeat(1, 2).shape, [c.shape for c in x.chunk(2, dim=1)], [s.shape for s in x.split([1, 3], dim=1)])
print(torch.diag(w), torch.outer(w[:2], w[2:]))
print(x.flip(0), x.roll(1, 1), x.index_select(1, torch.tensor([3, 0])))
print(torch.nonzero(x > 2), torch.nonzero(x > 2, as_tuple=True))
print(torch.allclose(x, x + 1e-9), torch.isclose(x, x.round()), torch.equal(x, x.clone()))
print(x.clamp_min(1.0), x.clamp_max(1.0))
print(torch.floor(x / 3), torch.ceil(x / 3), torch.round(x / 3, decimals=2))
print(x.prod(1), x.var(1, correction=0), F.one_hot(torch.tensor([1, 0, 3]), 4))
print(F.pad(x[None], (2, 1), mode="reflect"))
print(F.pad(x[None], (1, 0), mode="replicate"))
print(F.leaky_relu(x, 0.5), F.hardtanh(x))
loss = (x.logsumexp(1).sum() + torch.einsum("ij,j->", x, w) + x.prod(1).sum() + x.cumprod(1).sum()
        + (x + torch.arange(4) * 0.125).topk(2).values.sum() + x.sort(0).values[0].sum() + x.gather(1, idx[:, :3].T).sum()
        + x.norm(1) + x.norm(dim=1).sum() + F.normalize(x).sum() + x.std(1).sum())
loss.backward()
print(loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name())
print(x.grad.round(decimals=3))
print(w.grad)
"""


def _torch_output(source):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(source, "<program>", "exec"), {})  # noqa: S102 — our own test program, under real torch
    return buf.getvalue()


def test_tensor_functions_program_prints_what_pytorch_prints():
    expected = _torch_output(PROGRAM)
    got = ok(PROGRAM)
    got_lines, expected_lines = got.splitlines(), expected.splitlines()
    assert got_lines == expected_lines
