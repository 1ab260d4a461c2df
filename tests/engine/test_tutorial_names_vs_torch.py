"""Issue 21 §3 names tutorials call (engine/tensor_tutorial_names.py, tensor_shape.py): values, grad_fn names and
gradients against PyTorch, gradients against finite differences, and PyTorch's errors word for word."""
from __future__ import annotations

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

rng = np.random.default_rng(21)
A34, B45, C35, V4 = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(3, 5)), rng.normal(size=4)


def _idx(lib, values):
    return lib.tensor(values)


# name -> (inputs, f(lib, *tensors) -> tensor); every input requires grad (float64)
CASES = {
    "H": ((A34,), lambda lib, a: (a * 1).H),
    "mH_batched": ((rng.normal(size=(2, 3, 4)),), lambda lib, a: (a * 1).mH),
    "mT": ((A34,), lambda lib, a: (a * 1).mT),
    "addmm": ((C35, A34, B45), lambda lib, c, a, b: lib.addmm(c, a, b)),
    "addmm_bias_row": ((rng.normal(size=5), A34, B45), lambda lib, c, a, b: lib.addmm(c, a, b)),
    "addmm_beta_alpha": ((C35, A34, B45), lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=-2)),
    "addmm_beta_zero": ((C35, A34, B45), lambda lib, c, a, b: c.addmm(a, b, beta=0, alpha=3)),
    "addmm_": ((C35, A34, B45), lambda lib, c, a, b: (c * 1).addmm_(a, b, alpha=0.25)),
    "index_add": ((A34, rng.normal(size=(3, 4))),
                  lambda lib, a, s: a.index_add(0, _idx(lib, [2, 0, 2]), s)),
    "index_add_alpha_dim1": ((A34, rng.normal(size=(3, 2))),
                             lambda lib, a, s: lib.index_add(a, 1, _idx(lib, [3, 3]), s, alpha=1.5)),
    "index_add_": ((A34, rng.normal(size=(2, 4))),
                   lambda lib, a, s: (a * 1).index_add_(0, _idx(lib, [1, 1]), s)),
    "masked_select": ((A34,), lambda lib, a: a.masked_select(a > 0)),
    "masked_select_broadcast": ((V4,), lambda lib, a: lib.masked_select(a, lib.tensor([[True, False, True, True],
                                                                                       [False, True, True, False]]))),
    "unflatten": ((A34,), lambda lib, a: a.unflatten(1, (2, -1))),
    "torch_unflatten": ((A34,), lambda lib, a: lib.unflatten(a, -1, [2, 2])),
    "nn_Unflatten": ((A34,), lambda lib, a: lib.nn.Unflatten(1, (2, 2))(a)),
    "squeeze_": ((rng.normal(size=(3, 1, 4)),), lambda lib, a: (a * 1).squeeze_()),
    "squeeze_dim": ((rng.normal(size=(3, 1, 4)),), lambda lib, a: (a * 1).squeeze_(1)),
    "squeeze_dims": ((rng.normal(size=(1, 3, 1)),), lambda lib, a: (a * 1).squeeze_((0, 2))),
    "unsqueeze_": ((A34,), lambda lib, a: (a * 1).unsqueeze_(-1)),
    "hstack": ((A34, C35), lambda lib, a, c: lib.hstack([a, c])),
    "vstack": ((V4, A34), lambda lib, v, a: lib.vstack((v, a))),
    "broadcast_to": ((V4,), lambda lib, v: lib.broadcast_to(v, (3, 4))),
    "tile": ((A34,), lambda lib, a: lib.tile(a, (2,))),
    "tile_method": ((V4,), lambda lib, v: v.tile(2, 1)),
    "multiply": ((A34, V4), lambda lib, a, v: lib.multiply(a, v)),
    "subtract": ((A34, V4), lambda lib, a, v: lib.subtract(a, v)),
    "divide": ((A34, V4), lambda lib, a, v: lib.divide(a, v + 3)),
    "negative": ((A34,), lambda lib, a: lib.negative(a)),
    "concatenate": ((A34, A34), lambda lib, a, b: lib.concatenate([a, b], 1)),
    "trace": ((A34,), lambda lib, a: lib.trace(a)),
    "trace_method": ((rng.normal(size=(3, 3)),), lambda lib, a: (a * 2).trace()),
    "lerp_small": ((A34, C35[:, :4]), lambda lib, a, b: lib.lerp(a, b, 0.25)),
    "lerp_large": ((V4, A34), lambda lib, a, b: a.lerp(b, 0.8)),
    "lerp_tensor": ((A34, C35[:, 1:], rng.uniform(size=4)), lambda lib, a, b, w: lib.lerp(a, b, w)),
    "lerp_": ((A34, C35[:, :4]), lambda lib, a, b: (a * 1).lerp_(b, 0.6)),
    "diff": ((A34,), lambda lib, a: lib.diff(a)),
    "selu": ((A34,), lambda lib, a: lib.selu(a)),
    "celu": ((A34,), lambda lib, a: lib.celu(a, 0.5)),
    "broadcast_tensors": ((V4, rng.normal(size=(3, 1))), lambda lib, v, c: lib.broadcast_tensors(v, c)[0] * 2
                          + lib.broadcast_tensors(v, c)[1]),
    "diff_twice_prepend": ((A34, V4), lambda lib, a, v: a.diff(n=2, dim=0, prepend=v.unsqueeze(0))),
}


def _run(lib, name, arrays):
    inputs, fn = CASES[name]
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    return tensors, fn(lib, *tensors)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_names_and_gradients_match_pytorch(name):
    arrays = CASES[name][0]
    (ins_e, out_e), (ins_t, out_t) = _run(engine, name, arrays), _run(torch, name, arrays)
    assert tuple(out_e.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-13, atol=1e-14)
    assert type(out_e.grad_fn).__name__ == type(out_t.grad_fn).__name__
    weights = rng.normal(size=tuple(out_t.shape))
    (out_e * engine.tensor(weights)).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    for e, t in zip(ins_e, ins_t):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-13)
    # the engine's gradient against central differences of its own function
    eps = 1e-6
    for k, (arr, e) in enumerate(zip(arrays, ins_e)):
        fd = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            values = []
            for step in (eps, -eps):
                moved = [a.copy() for a in arrays]
                moved[k][i] += step
                with engine.no_grad():
                    values.append(float((_run(engine, name, moved)[1] * engine.tensor(weights)).sum()))
            fd[i] = (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(e.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


def test_float32_values_match_pytorch_bit_for_bit():
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 5)).astype(np.float32)
    c = rng.normal(size=5).astype(np.float32)
    for lib_e, lib_t in ((engine, torch),):
        te = [lib_e.tensor(x) for x in (c, a, b)]
        tt = [lib_t.tensor(x) for x in (c, a, b)]
        # NOTE: addmm runs the engine's one product (as nn.Linear does): numpy's BLAS blocks the k sums differently
        # from MKL's sgemm for more than one row, so only index_add and masked_select are compared bit for bit
        np.testing.assert_allclose(lib_e.addmm(*te).numpy(), lib_t.addmm(*tt).numpy(), rtol=1e-6)
        src = rng.normal(size=(5, 4)).astype(np.float32)
        idx = [0, 2, 0, 1, 0]
        e = lib_e.tensor(a).index_add(0, lib_e.tensor(idx), lib_e.tensor(src))
        t = lib_t.tensor(a).index_add(0, lib_t.tensor(idx), lib_t.tensor(src))
        assert e.numpy().tobytes() == t.numpy().tobytes()
        mask = a > 0
        assert (lib_e.tensor(a).masked_select(lib_e.tensor(mask)).numpy().tobytes()
                == lib_t.tensor(a).masked_select(lib_t.tensor(mask)).numpy().tobytes())


def test_lerp_logspace_unique_and_half_match_pytorch_bit_for_bit():
    start, end = rng.normal(size=200).astype(np.float32), rng.normal(size=200).astype(np.float32)
    weights = np.linspace(-0.5, 1.5, 200).astype(np.float32)
    for w in (0.3, 0.5, 0.9, -0.2):
        assert (engine.lerp(engine.tensor(start), engine.tensor(end), w).numpy().tobytes()
                == torch.lerp(torch.tensor(start), torch.tensor(end), w).numpy().tobytes())
    assert (engine.lerp(engine.tensor(start), engine.tensor(end), engine.tensor(weights)).numpy().tobytes()
            == torch.lerp(torch.tensor(start), torch.tensor(end), torch.tensor(weights)).numpy().tobytes())
    for args, kwargs in (((-3, 0, 1000), {}), ((0, 2, 7), {"base": 2}), ((-1, 1, 13), {}), ((1, 5, 33), {"base": 3.5}),
                         ((-2, 2, 9), {"dtype": "float64"})):
        kw_e = {k: getattr(engine, v) if k == "dtype" else v for k, v in kwargs.items()}
        kw_t = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        e, t = engine.logspace(*args, **kw_e), torch.logspace(*args, **kw_t)
        assert str(e.dtype) == str(t.dtype) and e.numpy().tobytes() == t.numpy().tobytes(), (args, kwargs)
    labels = np.array([3, 1, 2, 3, 1, 7])
    for kwargs in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True},
                   {"sorted": False}):
        e, t = engine.unique(engine.tensor(labels), **kwargs), torch.unique(torch.tensor(labels), **kwargs)
        for a, b in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    rows = np.array([[1, 2], [1, 2], [0, 1]])
    np.testing.assert_array_equal(engine.tensor(rows).unique(dim=0).numpy(), torch.tensor(rows).unique(dim=0).numpy())
    e, t = engine.tensor(start).half(), torch.tensor(start).half()
    assert str(e.dtype) == str(t.dtype) and e.numpy().tobytes() == t.numpy().tobytes()
    for name in ("relu_", "sigmoid_", "tanh_"):
        e, t = engine.tensor(start), torch.tensor(start)
        assert getattr(engine, name)(e) is e and getattr(torch, name)(t) is t
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=4e-7, atol=1e-7)


def test_torch_dropout_matches_pytorch_with_the_same_seed():
    values = rng.normal(size=(4, 50)).astype(np.float32)
    outs = []
    for lib in (engine, torch):
        lib.manual_seed(3)
        x = lib.tensor(values, requires_grad=True)
        y = lib.dropout(x, 0.3, True)
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__, lib.dropout(x, 0.3, False) is x))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_layout_queries_match_pytorch():
    for dtype in ("float32", "float64", "int64", "bool"):
        xe, xt = engine.zeros(3, 4, dtype=getattr(engine, dtype)), torch.zeros(3, 4, dtype=getattr(torch, dtype))
        for f in (lambda x: x.is_contiguous(), lambda x: x.t().is_contiguous(), lambda x: x[:, 1].is_contiguous(),
                  lambda x: x[1].is_contiguous(), lambda x: x.unsqueeze(0).expand(2, 3, 4).is_contiguous(),
                  lambda x: x.element_size(), lambda x: x.nbytes, lambda x: x.itemsize, lambda x: x[:, :2].nbytes,
                  lambda x: x.t().contiguous().is_contiguous()):
            assert f(xe) == f(xt)


def test_in_place_shape_ops_without_autograd_match_pytorch():
    for lib in (engine, torch):
        x = lib.ones(2, 1, 3)
        assert x.squeeze_() is x and tuple(x.shape) == (2, 3)
        assert tuple(x.unsqueeze_(0).shape) == (1, 2, 3)
        assert tuple(x.squeeze_(1).shape) == (1, 2, 3)  # not size 1: unchanged, as in PyTorch


def test_logical_family_and_counts_match_pytorch():
    values = np.array([[0.0, 1.5, -2.0], [np.nan, 0.0, 3.0]])
    other = np.array([[1, 0, 0], [1, 1, 0]])
    for f in (lambda lib, a, b: lib.logical_and(a, b), lambda lib, a, b: lib.logical_or(a, b),
              lambda lib, a, b: lib.logical_xor(a, b), lambda lib, a, b: lib.logical_not(a),
              lambda lib, a, b: a.logical_not(), lambda lib, a, b: a.logical_xor(b),
              lambda lib, a, b: lib.count_nonzero(a), lambda lib, a, b: lib.count_nonzero(a, dim=1),
              lambda lib, a, b: a.count_nonzero((0, 1)), lambda lib, a, b: lib.empty_like(a).shape,
              lambda lib, a, b: lib.is_floating_point(a), lambda lib, a, b: lib.is_floating_point(b)):
        e = f(engine, engine.tensor(values), engine.tensor(other))
        t = f(torch, torch.tensor(values), torch.tensor(other))
        if isinstance(t, torch.Tensor):
            assert str(e.dtype) == str(t.dtype)
            np.testing.assert_array_equal(e.numpy(), t.numpy())
        else:
            assert tuple(e) == tuple(t) if isinstance(t, torch.Size) else e == t


ERRORS = [
    lambda lib: lib.ones(3).mT,
    lambda lib: lib.ones(3).mH,
    lambda lib: lib.ones(2, 3, 4).H,
    lambda lib: lib.ones(3).H,
    lambda lib: lib.addmm(lib.ones(3, 4), lib.ones(3), lib.ones(3, 4)),
    lambda lib: lib.addmm(lib.ones(3, 4), lib.ones(3, 5), lib.ones(4, 4)),
    lambda lib: lib.addmm(lib.ones(2, 4), lib.ones(3, 5), lib.ones(5, 4)),
    lambda lib: lib.addmm(lib.ones(3, 4), lib.ones(3, 5), lib.ones(5, 4, dtype=lib.float64)),
    lambda lib: lib.addmm(lib.ones(3, 4), lib.ones(3, 5), 3),
    lambda lib: lib.ones(3, 4).addmm_(lib.ones(3, 5), lib.ones(5, 2)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([0, 5]), lib.ones(2, 4)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([0.0, 1.0]), lib.ones(2, 4)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([0, 1]), lib.ones(3, 4)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([[0, 1]]), lib.ones(2, 4)),
    lambda lib: lib.ones(3, 4).index_add(2, lib.tensor([0, 1]), lib.ones(2, 4)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([0, 1]), lib.ones(2, 4, dtype=lib.float64)),
    lambda lib: lib.ones(3, 4).index_add(0, lib.tensor([1]), lib.ones(1, 3)),
    lambda lib: lib.ones(3, 4).masked_select(lib.ones(3, 4)),
    lambda lib: lib.ones(3, 4).masked_select(lib.ones(2, 4, dtype=lib.bool)),
    lambda lib: lib.ones(3, 4).unflatten(1, (2, 3)),
    lambda lib: lib.ones(3, 4).unflatten(1, ()),
    lambda lib: lib.ones(3, 4).unflatten(2, (2, 2)),
    lambda lib: lib.ones(3, 4).unflatten(1, 2),
    lambda lib: lib.ones(3, 4).squeeze_(5),
    lambda lib: lib.ones(3, 4).unsqueeze_(5),
    lambda lib: lib.logical_and(lib.ones(2), 3),
    lambda lib: lib.hstack(lib.ones(2)),
    lambda lib: lib.hstack([]),
    lambda lib: lib.vstack([lib.ones(2), 3]),
    lambda lib: lib.ones(2, requires_grad=True).index_add_(0, lib.tensor([0]), lib.ones(1)),
    lambda lib: lib.ones(3, 4, requires_grad=True)[0].unsqueeze_(0),
    lambda lib: lib.trace(lib.ones(2, 2, 2)),
    lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
    lambda lib: lib.lerp(lib.ones(2), lib.ones(2), "a"),
    lambda lib: lib.diff(lib.tensor(1.0)),
    lambda lib: lib.diff(lib.ones(3), n=-1),
    lambda lib: lib.broadcast_tensors(lib.ones(2), lib.ones(3)),
    lambda lib: lib.broadcast_tensors(lib.ones(2), 3),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_pytorchs(case):
    caught = []
    for lib in (engine, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 — the type is compared with PyTorch's below
            ERRORS[case](lib)
        caught.append(info.value)
    e, t = caught
    assert type(e) is type(t) or issubclass(type(t), type(e)), (e, t)
    assert str(e).splitlines()[0] == str(t).splitlines()[0]
