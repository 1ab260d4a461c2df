"""torch.std_mean / torch.var_mean (issue 21 §3) against torch 2.13: values, dtypes, shapes, grad_fn names, the
gradients of a loss using both outputs, and the error for integer tensors. The finite-difference checks of their
op-table rows are in test_gradcheck.py."""
import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(213)

ARGUMENTS = [((), {}), ((1,), {}), ((), {"dim": 0, "keepdim": True}), ((), {"dim": 1, "unbiased": False}),
             ((), {"dim": (0, 1), "correction": 0}), ((True,), {}), ((False,), {}), ((), {"dim": -1, "correction": 2}),
             ((), {"dim": [0], "keepdim": True, "correction": 1})]


@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
@pytest.mark.parametrize("args, kwargs", ARGUMENTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_both_outputs_match_torch_and_carry_gradient(fn, args, kwargs, dtype):
    data = rng.normal(size=(3, 4))
    got = {}
    for lib in (torch, fg):
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib, fn)(x, *args, **kwargs)
        assert type(out) is tuple and len(out) == 2
        spread, mean = out
        (spread * 2 + mean ** 2).sum().backward()  # a loss using both: both gradients reach x
        got[lib] = (spread, mean, x.grad)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for t, e in zip(got[torch], got[fg]):
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    for t, e in zip(got[torch][:2], got[fg][:2]):
        assert e.grad_fn.name() == t.grad_fn.name() == ("StdMeanBackward0" if fn == "std_mean" else "VarMeanBackward0")


@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
def test_integer_tensors_are_refused_in_torchs_words(fn):
    words = []
    for lib in (torch, fg):
        with pytest.raises(RuntimeError) as info:
            getattr(lib, fn)(lib.tensor([1, 2, 3]))
        words.append(str(info.value))
    assert words[0] == words[1] == f"{fn} only support floating point and complex dtypes"


def test_a_non_tensor_is_a_type_error_naming_the_function():
    for lib in (torch, fg):  # (torch lists its overloads; the engine names the argument)
        with pytest.raises(TypeError, match=r"^std_mean\(\):? .*list"):
            lib.std_mean([1.0, 2.0])
