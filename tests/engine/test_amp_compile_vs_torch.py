"""torch.amp / torch.cuda.amp and torch.compile (engine/amp.py, engine/compiled.py) against a CPU-only PyTorch:
CUDA mixed precision disables itself, a CPU GradScaler scales, unscales, skips and grows as PyTorch's, bit for bit,
and a compiled module is PyTorch's OptimizedModule wrapper running the module eagerly."""
import warnings

import numpy as np
import pytest

import engine
import engine.nn as enn
import engine.nn.functional as EF

torch = pytest.importorskip("torch")


def _train(lib, nn, F, scaler_args, steps=5, poison=(2,)):
    """A small classifier trained with a GradScaler; a gradient set to inf at the steps in `poison`."""
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    X, y = lib.randn(16, 4), lib.randint(0, 2, (16,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = lib.amp.GradScaler(*scaler_args[0], **scaler_args[1])
    seen = []
    for step in range(steps):
        loss = F.cross_entropy(model(X), y)
        opt.zero_grad()
        scaled = scaler.scale(loss)
        scaled.backward()
        if step in poison:
            model[0].weight.grad[0, 0] = float("inf")
        scaler.unscale_(opt)
        seen.append((scaled.item(), model[2].bias.grad.tolist(), scaler.step(opt)))
        scaler.update()
        seen.append((scaler.get_scale(), scaler.state_dict(), scaler.is_enabled()))
    return seen, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("args", [(("cpu",), {"init_scale": 1024.0, "growth_interval": 2}), (("cpu",), {}),
                                  (("cuda",), {}), (("cpu",), {"enabled": False})])
def test_a_grad_scaler_trains_as_torchs(args):
    ours, our_params = _train(engine, enn, EF, args)
    theirs, their_params = _train(torch, torch.nn, torch.nn.functional, args)
    assert repr(ours) == repr(theirs)  # (a disabled scaler steps on the inf: nan, compared as text)
    for a, b in zip(our_params, their_params):
        assert np.array_equal(a, b, equal_nan=True)


def test_scaler_misuse_fails_as_torchs():
    for lib in (engine, torch):
        scaler = lib.amp.GradScaler("cpu")
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(AssertionError, match="did not use"):
            scaler.unscale_(opt)
        scaler.scale(lib.ones(()))
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called on this optimizer"):
            scaler.unscale_(opt)
        with pytest.raises(AssertionError, match="growth factor"):
            lib.amp.GradScaler("cpu", growth_factor=0.5)


def test_cuda_mixed_precision_disables_itself_with_torchs_warnings():
    for lib in (engine, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ctx = lib.autocast(device_type="cuda", dtype=lib.float16)
        with ctx:
            y = lib.nn.Linear(2, 2)(lib.ones(1, 2))
        assert y.dtype == lib.float32
        with pytest.warns(FutureWarning, match="deprecated"):
            scaler = lib.cuda.amp.GradScaler()
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
        loss = lib.ones(())
        assert scaler.scale(loss) is loss
    with pytest.raises(NotImplementedError, match="enabled=False"):
        with engine.autocast("cpu"):
            pass
    with engine.autocast("cpu", enabled=False):
        pass
    with pytest.raises(RuntimeError, match="device string: tpu"):
        engine.autocast("tpu")


def test_a_compiled_module_is_torchs_wrapper_around_the_same_module():
    for lib, nn in ((engine, enn), (torch, torch.nn)):
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        compiled = lib.compile(model)
        assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
        assert [n for n, _ in compiled.named_parameters()] == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
        assert list(compiled.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias"] and len(compiled) == 2
        compiled.note = 3  # written through to the module, as PyTorch's __setattr__ does
        assert model.note == 3 and compiled.note == 3
        assert lib.compile(model, disable=True) is model
        f = lib.compile(mode="reduce-overhead")(lambda x: x + 1)
        assert lib.equal(f(lib.ones(1)), lib.ones(1) * 2)
        with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
            lib.compile(model, mode="fast")
        with pytest.raises(AssertionError, match="A callable function is expected"):
            lib.compile(3)
    assert repr(engine.compile(enn.Linear(1, 1))) == repr(torch.compile(torch.nn.Linear(1, 1)))


def test_a_compiled_module_computes_as_the_eager_one():
    engine.manual_seed(0)
    model = enn.Linear(3, 2)
    x = engine.randn(4, 3)
    assert engine.equal(engine.compile(model)(x), model(x))
