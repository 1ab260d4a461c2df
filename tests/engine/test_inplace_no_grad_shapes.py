"""In-place ops without autograd (`a -= lr * g` on a 0-d leaf, broadcasts, int targets) against PyTorch:
the no-grad branch of _inplace reads the result's shape directly, so every kind of result is pinned here."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

TARGETS = [((), "float32"), ((3,), "float32"), ((2, 3), "float64"), ((3,), "int64"), ((), "int64")]
OTHERS = [2, 0.5, "tensor0d", "tensor_row", True]
METHODS = ["add_", "sub_", "mul_", "div_"]


def _make(lib, shape, dtype):
    values = np.arange(1, 1 + int(np.prod(shape, dtype=np.int64)), dtype=dtype).reshape(shape) * 3
    return lib.tensor(values.tolist() if shape else values.item(), dtype=getattr(lib, dtype))


def _other(lib, kind, shape):
    if kind == "tensor0d":
        return lib.tensor(1.25)
    if kind == "tensor_row":
        return lib.tensor([0.5, 1.5, 2.5])
    return kind


def _cases():
    for method in METHODS:
        for kind in OTHERS:
            for shape, dtype in TARGETS:
                yield pytest.param(shape, dtype, kind, method)


@pytest.mark.parametrize("shape,dtype,kind,method", list(_cases()))
def test_inplace_without_grad_matches_torch(shape, dtype, kind, method):
    results = []
    for lib in (torch, engine):
        target = _make(lib, shape, dtype)
        alias = target.view(-1) if shape else target
        try:
            with lib.no_grad():
                out = getattr(target, method)(_other(lib, kind, shape))
        except RuntimeError as e:  # PyTorch refuses a float result into an int64 tensor, a result that outgrows it
            results.append(("error", type(e).__name__, str(e).splitlines()[0]))
            continue
        assert out is target
        results.append((str(target.dtype), tuple(target.shape), target.tolist(), alias.tolist()))
    assert results[0] == results[1]
