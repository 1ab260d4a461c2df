"""The Tensor methods the sandbox allowed but the engine lacked (engine/tensor_methods.py, Tensor.narrow): one
program printed by the engine and by PyTorch, gradients included, errors in PyTorch's words."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import engine

PROGRAM = '''
x = torch.tensor([[1., -2., 3.], [0.5, 2., -1.]], requires_grad=True)
y = torch.tensor([[1., 2., 3.], [0., 2., 1.]])
print(x.eq(y), x.ne(y), x.lt(1), x.le(y), x.gt(0.5), x.ge(y), torch.eq(x, y), torch.gt(x, 0), torch.less(x, y))
print(torch.ge(x, y), torch.le(x, 1), torch.ne(x, y), torch.lt(x, y), torch.greater_equal(x, 0), torch.not_equal(x, y))
print(x.new_zeros(2, 3), x.new_ones((2,)), x.new_full((2, 2), 7), x.new_tensor([1, 2]), x.new_zeros(3, dtype=torch.int64))
print(x.new_empty(2, 0).shape, x.new_ones(2, requires_grad=True))
a, b = x.unbind()
print(a, b, torch.unbind(x, 1))
print(x.select(1, 2), x.select(0, -1), x.narrow(1, 1, 2), torch.narrow(x, 0, 1, 1), x.narrow(-1, -2, 2))
print(x.where(x > 0, y), x.maximum(y), x.minimum(y))
z = 0
for name in ("exp_", "sigmoid_", "tanh_", "abs_", "neg_", "relu_", "sign_"):
    t = x * 1
    getattr(t, name)()
    print(t)
    z = z + t
t = x * 1
t.pow_(2)
t.clip_(0, 3)
z = z + t
(z.sum() + sum(t.sum() for t in x.unbind(1)) + x.select(0, 1).sum() + x.maximum(y).sum() + x.narrow(1, 0, 2).sum()).backward()
print(x.grad)
for bad in ("x.eq('a')", "x.select(2, 0)", "x.select(1, 5)", "torch.unbind(x, 3)", "x.new_zeros(-1)",
            "x.narrow(1, 2, 2)", "x.narrow(1, -4, 1)", "x.narrow(1, 0, -1)", "x.narrow(2, 0, 1)"):
    try:
        eval(bad)
    except Exception as e:
        print(type(e).__name__, str(e).split(chr(10))[0])
'''


def _stdout(lib) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(PROGRAM, {"torch": lib})  # noqa: S102 - the test's own program
    return buf.getvalue()


def test_methods_print_what_pytorch_prints():
    torch = pytest.importorskip("torch")
    assert _stdout(engine) == _stdout(torch)


def test_a_numpy_scalar_keeps_its_dtype_as_in_torch():
    torch = pytest.importorskip("torch")
    for value in (np.float64(1.5), np.float32(1.5), np.float16(1.5), np.int32(3), np.uint8(3), np.int64(3),
                  np.bool_(True), 1.5, 3, True):
        ours, theirs = engine.tensor(value), torch.tensor(value)
        assert str(ours.dtype) == str(theirs.dtype), value
        assert ours.item() == theirs.item()
