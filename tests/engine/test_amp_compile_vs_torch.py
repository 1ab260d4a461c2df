"""torch.amp / torch.cuda.amp and torch.compile (engine/amp.py, engine/compiled.py) against a CPU-only PyTorch:
CUDA mixed precision disables itself, a CPU GradScaler scales, unscales, skips and grows as PyTorch's, bit for bit,
and a compiled module is PyTorch's OptimizedModule wrapper running the module eagerly."""
import json
import subprocess
import sys
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


# NOTE: PyTorch's side runs in a process of its own: torch.compile changes torch's global state for the rest of a
# process (distributions stop validating their arguments, eager results of later tests differ)
_TORCH_COMPILE_FACTS = """
import json, torch
from torch import nn
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
compiled = torch.compile(model)
compiled.note = 3
facts = {"type": type(compiled).__name__, "orig": compiled._orig_mod is model,
         "names": [n for n, _ in compiled.named_parameters()], "keys": list(compiled.state_dict()), "len": len(compiled),
         "note": [model.note, compiled.note], "disabled": torch.compile(model, disable=True) is model,
         "repr": repr(torch.compile(nn.Linear(1, 1))), "errors": []}
for call in (lambda: torch.compile(model, mode="fast"), lambda: torch.compile(3)):
    try:
        call()
    except Exception as e:
        facts["errors"].append([type(e).__name__, str(e)])
print(json.dumps(facts))
"""


def test_a_compiled_module_is_torchs_wrapper_around_the_same_module():
    done = subprocess.run([sys.executable, "-c", _TORCH_COMPILE_FACTS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.splitlines()[-1])
    model = enn.Sequential(enn.Linear(2, 3), enn.ReLU())
    compiled = engine.compile(model)
    compiled.note = 3  # written through to the module, as PyTorch's __setattr__ does
    ours = {"type": type(compiled).__name__, "orig": compiled._orig_mod is model,
            "names": [n for n, _ in compiled.named_parameters()], "keys": list(compiled.state_dict()),
            "len": len(compiled), "note": [model.note, compiled.note],
            "disabled": engine.compile(model, disable=True) is model, "repr": repr(engine.compile(enn.Linear(1, 1))),
            "errors": []}
    for call in (lambda: engine.compile(model, mode="fast"), lambda: engine.compile(3)):
        try:
            call()
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            ours["errors"].append([type(e).__name__, str(e)])
    assert ours == theirs
    f = engine.compile(mode="reduce-overhead")(lambda x: x + 1)
    assert engine.equal(f(engine.ones(1)), engine.ones(1) * 2)


def test_a_compiled_module_computes_as_the_eager_one():
    engine.manual_seed(0)
    model = enn.Linear(3, 2)
    x = engine.randn(4, 3)
    assert engine.equal(engine.compile(model)(x), model(x))


def test_bfloat16_is_named_as_torchs_and_refused_as_a_tensor():
    assert (repr(engine.bfloat16), engine.bfloat16.is_floating_point, engine.bfloat16.itemsize) == \
           (repr(torch.bfloat16), torch.bfloat16.is_floating_point, torch.bfloat16.itemsize)
    assert engine.bfloat16 != engine.float16 and engine.cuda.is_bf16_supported() == torch.cuda.is_bf16_supported()
    with pytest.raises(TypeError, match="numpy has no bfloat16"):
        engine.ones(2, dtype=engine.bfloat16)
