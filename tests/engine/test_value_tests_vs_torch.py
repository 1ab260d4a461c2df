"""torch.isnan/isinf/isfinite/isposinf/isneginf/isreal (functions and methods), nan_to_num, Tensor.histc and
torch.sign's grad node against PyTorch."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

VALUES = [1.0, float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -2.5, 3e38]
TESTS = "isnan isinf isfinite isposinf isneginf isreal".split()


@pytest.mark.parametrize("name", TESTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_value_tests_match_torch(name, dtype):
    values = VALUES if dtype.startswith("float") else [1, 0, 5] if dtype == "int64" else [True, False]
    ours, theirs = engine.tensor(values, dtype=getattr(engine, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))
    for a, b in ((getattr(engine, name)(ours), getattr(torch, name)(theirs)), (getattr(ours, name)(), getattr(theirs, name)())):
        assert a.dtype == engine.bool and a.tolist() == b.tolist()
        assert not a.requires_grad
    x = engine.tensor([1.0, float("nan")], requires_grad=True)
    assert not getattr(x, name)().requires_grad and getattr(x, name)().grad_fn is None


@pytest.mark.parametrize("kwargs", [{}, {"nan": 2.0}, {"nan": 1.0, "posinf": 5.0, "neginf": -7.0}])
def test_nan_to_num_and_its_gradient_match_torch(kwargs):
    out = []
    for lib in (engine, torch):
        x = lib.tensor(VALUES, requires_grad=True)
        y = lib.nan_to_num(x, **kwargs)
        z = x.nan_to_num(**kwargs)
        (y * lib.arange(8.0)).sum().backward()
        out.append((y.tolist(), z.tolist(), x.grad.tolist(), type(y.grad_fn).__name__))
    assert out[0] == out[1]


def test_histc_method_matches_torch():
    rng = np.random.default_rng(0)
    data = rng.standard_normal(1000).astype(np.float32)
    for kwargs in ({}, {"bins": 7}, {"bins": 5, "min": -1, "max": 1}):
        a = engine.tensor(data).histc(**kwargs)
        b = torch.tensor(data).histc(**kwargs)
        assert a.tolist() == b.tolist()
    edges_ours = engine.tensor(data).histogram(bins=4)
    edges_theirs = torch.tensor(data).histogram(bins=4)
    assert edges_ours.hist.tolist() == edges_theirs.hist.tolist()
    assert edges_ours.bin_edges.tolist() == edges_theirs.bin_edges.tolist()


def test_sign_has_torchs_grad_node_and_a_zero_gradient():
    for lib in (engine, torch):
        x = lib.tensor([-2.0, 0.0, 3.0], requires_grad=True)
        s = lib.sign(x)
        assert type(s.grad_fn).__name__ == "SignBackward0" and s.requires_grad
        (s * 5).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
        y = x.sign()
        assert type(y.grad_fn).__name__ == "SignBackward0"
