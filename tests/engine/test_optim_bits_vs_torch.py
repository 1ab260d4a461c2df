"""Every optimizer's float32 update bit for bit against PyTorch's single-tensor (foreach=False) one, over 50 steps
on random gradients. The one operation PyTorch does not round correctly is its CPU sqrt (MKL's vsSqrt: within
0.75 ulp, by a CPU-dependent rule): with MKL present the engine calls the same function (engine/vml.py) and every
update matches as it is; without it, with the engine's sqrt swapped for PyTorch's, every other operation (lerp,
addcmul, addcdiv, add(alpha=), the bias corrections) must match exactly."""
import numpy as np
import pytest

import engine
import engine.optim as engine_optim
from engine import vml

torch = pytest.importorskip("torch")

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.03, weight_decay=0.2, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1, eps=1e-8)),
]
SHAPES = [(7, 5), (3,), (), (70, 80)]  # 5,600 elements: the big-array multiply-add paths too


def _torch_sqrt(x):
    return torch.from_numpy(np.ascontiguousarray(x)).sqrt().numpy().reshape(np.shape(x))


def _run(lib, name, kwargs, init, grads):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    extra = {"foreach": False} if lib is torch else {}
    opt = getattr(lib.optim, name)(params, **kwargs, **extra)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = lib.tensor(g.copy())
        opt.step()
    return [p.detach().numpy() if lib is torch else p._data for p in params], opt


@pytest.mark.parametrize("swap_sqrt", [False, True], ids=["as-is", "torchs-sqrt"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_fifty_steps_bit_exact(name, kwargs, swap_sqrt, monkeypatch):
    if swap_sqrt:
        monkeypatch.setattr(engine_optim, "_sqrt", _torch_sqrt)
    elif not vml.AVAILABLE:
        pytest.skip("no MKL here: the engine's sqrt is correctly rounded, PyTorch's is not")
    rng = np.random.default_rng(21)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(50)]
    ours, our_opt = _run(engine, name, kwargs, init, grads)
    theirs, their_opt = _run(torch, name, kwargs, init, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
    for (_, ours_state), (_, their_state) in zip(our_opt.state_dict()["state"].items(),
                                                 their_opt.state_dict()["state"].items()):
        for key, value in their_state.items():
            np.testing.assert_array_equal(np.asarray(ours_state[key]._data), value.numpy(), err_msg=key)


def test_the_sqrt_is_torchs_with_mkl_and_within_an_ulp_without(monkeypatch):
    x = (np.random.default_rng(0).random(10_000) + 0.1).astype(np.float32)
    if vml.AVAILABLE:
        np.testing.assert_array_equal(engine_optim._sqrt(x).view(np.int32), _torch_sqrt(x).view(np.int32))
    # NOTE: without MKL the engine's sqrt is correctly rounded; PyTorch's CPU one is faithful (one ulp off at most)
    monkeypatch.setattr(vml, "_KERNELS", {})
    monkeypatch.setattr(engine_optim, "_sqrt", vml._function("sqrt"))
    ours = engine_optim._sqrt(x)
    exact = np.sqrt(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(ours, exact)
    ulps = np.abs(ours.view(np.int32).astype(np.int64) - _torch_sqrt(x).view(np.int32))
    assert ulps.max() <= 1
