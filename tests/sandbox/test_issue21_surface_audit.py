"""Issue 21 §3 audit: the items tests/sandbox/test_section3_checklist.py checked only in part, each cross-checked
against PyTorch 2.13 here (the checklist's docstring maps every other item to its test; the report of the names
session has the whole table). In-process cases compare engine with torch; program cases run in the sandbox and in
CPython with torch and must print the same text."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest
from sandbox_testing import run, same_as_cpython

import engine

torch = pytest.importorskip("torch")


def test_every_legacy_typed_constructor_matches_pytorch():
    """`torch.FloatTensor`/`LongTensor`/… from data, from sizes and empty: dtype, shape and values."""
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor"):
        for args in (([1, 0, 3],), ([[1.0, 2.0], [0.0, 4.0]],), ()):
            e, t = getattr(engine, name)(*args), getattr(torch, name)(*args)
            assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape), (name, args)
            np.testing.assert_array_equal(e.numpy(), t.numpy())
        e, t = getattr(engine, name)(2, 3), getattr(torch, name)(2, 3)  # sizes: uninitialised, compared by shape
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape) == (2, 3)
    e, t = engine.Tensor(engine.zeros(4, 5).shape), torch.Tensor(torch.zeros(4, 5).shape)
    assert str(e.dtype) == str(t.dtype) == "torch.float32" and tuple(e.shape) == tuple(t.shape) == (4, 5)


ALIASES = [
    lambda x: x.sum(axis=1, keepdims=True), lambda x: x.mean(axis=0), lambda x: x.std(axis=1, keepdims=True),
    lambda x: x.var(axis=0), lambda x: x.prod(axis=1), lambda x: x.logsumexp(axis=1, keepdims=True),
    lambda x: x.max(axis=1).values, lambda x: x.min(axis=0, keepdims=True).indices, lambda x: x.argmax(axis=1),
    lambda x: x.argmin(axis=0, keepdims=True), lambda x: x.amax(axis=1), lambda x: x.amin(axis=(0, 1)),
    lambda x: x.cumsum(axis=1), lambda x: x.cumprod(axis=0), lambda x: x.softmax(axis=1),
    lambda x: x.log_softmax(axis=0), lambda x: (x > 0).all(axis=1), lambda x: (x > 0).any(axis=0, keepdims=True),
    lambda x: x.norm(dim=1, keepdim=True), lambda x: x.sort(axis=1).values, lambda x: x.argsort(axis=0),
    lambda x: x.flip(1), lambda x: x.unsqueeze(axis=0), lambda x: x.topk(2, axis=1).values,
]


@pytest.mark.parametrize("case", range(len(ALIASES)))
def test_numpy_style_aliases_match_pytorch(case):
    values = np.array([[0.5, -1.0, 2.0, 3.5], [1.5, 0.25, -2.0, 1.0], [4.0, -3.0, 0.0, 2.5]], dtype=np.float32)
    e, t = ALIASES[case](engine.tensor(values)), ALIASES[case](torch.tensor(values))
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy().astype(np.float64), t.numpy().astype(np.float64), rtol=1e-6)


ELEMENTWISE = ("abs acos acosh asin asinh atan atanh ceil cos cosh deg2rad erf exp exp2 expm1 floor frac log log10 "
               "log1p log2 neg rad2deg reciprocal round rsqrt sigmoid sign sin sinh sqrt square tan tanh trunc "
               "arcsin arccos arctan arcsinh arccosh arctanh fix relu isnan isinf isfinite").split()


# correctly rounded in both libraries: the same bits; the transcendental ones differ by an ulp or two between numpy's
# libm and PyTorch's SLEEF kernels (NOTE: never a promise of the issue, which asks bits of optimizers and linspace)
EXACT = set("abs ceil floor frac neg round sign square trunc fix relu isnan isinf isfinite deg2rad rad2deg".split())


def _same(e, t, name):
    if name in EXACT:
        assert e.tobytes() == t.tobytes(), name
    else:
        np.testing.assert_allclose(e, t, rtol=4e-7, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_the_elementwise_family_matches_pytorch(name):
    """Every elementwise function as torch.f(x), x.f() and (where torch has one) x.f_(): float32 values (bits
    where both round correctly), grad_fn names and gradients."""
    domain = {"acosh": 1.5, "arccosh": 1.5}.get(name, 0.0)
    values = (np.linspace(-0.95, 0.95, 41) + domain).astype(np.float32)
    if name in ("log", "log10", "log2", "sqrt", "rsqrt", "acosh", "arccosh"):
        values = np.abs(values) + np.float32(0.5) + np.float32(domain)
    e_in, t_in = engine.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    e, t = getattr(engine, name)(e_in), getattr(torch, name)(t_in)
    _same(e.detach().numpy(), t.detach().numpy(), name)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    _same(getattr(engine.tensor(values), name)().numpy(), getattr(torch.tensor(values), name)().numpy(), name)
    if t.is_floating_point() and t.requires_grad:
        e.sum().backward()
        t.sum().backward()
        np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), rtol=2e-6, atol=1e-7)
    if hasattr(torch.Tensor, name + "_") and hasattr(engine.Tensor, name + "_"):
        e2, t2 = engine.tensor(values), torch.tensor(values)
        getattr(e2, name + "_")()
        getattr(t2, name + "_")()
        _same(e2.numpy(), t2.numpy(), name)


def test_autograd_functional_vhp_and_func_vjp_match_pytorch():
    values = np.array([0.5, -1.0, 2.0])
    for_lib = {}
    for lib in (engine, torch):
        x, v = lib.tensor(values), lib.tensor([1.0, 0.5, -2.0], dtype=lib.float64)
        f = lambda t: (t.sin() * t * t).sum()  # noqa: E731 — the same function for both libraries
        _, vhp = lib.autograd.functional.vhp(f, x, v)
        out, vjp_fn = lib.func.vjp(lambda t: t.exp() * t, x)
        for_lib[lib] = (vhp.numpy(), out.numpy(), vjp_fn(v)[0].numpy())
    for a, b in zip(for_lib[engine], for_lib[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-13)


GRADCHECK_WRONG = """import torch
class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t ** 2
    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 3 * t * g
x = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False))
print(torch.autograd.gradcheck(lambda t: t ** 2, (x,)))
try:
    torch.autograd.gradcheck(Wrong.apply, (x,))
except RuntimeError as e:
    print(isinstance(e, RuntimeError), str(e).splitlines()[0])
"""


def test_gradcheck_finds_a_wrong_backward_as_pytorch_does():
    same_as_cpython(GRADCHECK_WRONG)
    for lib in (engine, torch):  # in-process, the class is PyTorch's too
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.autograd.gradcheck(lambda t: t.detach().requires_grad_() * t, (x,))
        assert type(info.value).__name__ == "GradcheckError"
        assert type(info.value).__module__ == "torch.autograd.gradcheck"


def test_a_caught_gradcheck_error_is_named_as_in_pytorch():
    same_as_cpython(GRADCHECK_WRONG.replace("isinstance(e, RuntimeError)", "type(e).__name__"))


IN_PROCESS_IMPORTS = """from torch.autograd import Variable
from torch.autograd.function import FunctionCtx, Function
import torch.autograd.function
v = Variable(torch.ones(2), requires_grad=True)
print(v.requires_grad, FunctionCtx.__name__, Function.__name__)
"""


def test_in_process_import_statements_run_as_under_pytorch():
    """The statements themselves, not only the attributes (`import engine as torch` in a real interpreter)."""
    outputs = []
    for lib in (engine, torch):
        lines = []
        namespace = {"torch": lib, "print": lambda *a, lines=lines: lines.append(" ".join(map(str, a)))}
        source = IN_PROCESS_IMPORTS.replace("torch.autograd", lib.__name__ + ".autograd")
        exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102 — the test's own program
        outputs.append(lines)
    assert outputs[0] == outputs[1] == ["True FunctionCtx Function"]


PLOTS_WITH_TENSORS = """import torch
import matplotlib.pyplot as plt
fig, (ax, right) = plt.subplots(1, 2)
x = torch.linspace(0, 2, 5)
ax.plot(x, x ** 2)
ax.scatter(torch.tensor([0.5, 1.5]), torch.tensor([3.0, 1.0]))
ax.hist(torch.tensor([0.0, 1.0, 1.0, 2.0]), bins=2)
ax.bar(torch.arange(3), torch.tensor([1.0, 2.5, 0.5]))
right.imshow(torch.arange(6.).reshape(2, 3))
plt.show()
"""

_SHAPE = re.compile(r'<g id="((?:line2d|patch|PathCollection)_\d+)">\s*<path d="([^"]*)"')
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_IMAGE = re.compile(r'<image [^>]*xlink:href="([^"]*)"')


def test_plotting_calls_take_tensors_as_under_pytorch():
    """`plot`/`scatter`/`hist`/`bar`/`imshow` on tensors draw what matplotlib draws from PyTorch's tensors: the
    same paths and the same image, read from the sandbox's SVG and from CPython's savefig of the same figure."""
    drawn = run(PLOTS_WITH_TENSORS)
    assert drawn.error is None, drawn.error
    sandbox_svg = drawn.figures[0]["svg"]
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    plt = pytest.importorskip("matplotlib.pyplot")
    plt.close("all")
    namespace = {}
    exec(compile(PLOTS_WITH_TENSORS.replace("plt.show()", ""), "<program>", "exec"), namespace)  # noqa: S102
    buffer = io.StringIO()
    plt.gcf().savefig(buffer, format="svg")
    plt.close("all")
    reference = buffer.getvalue()
    drawn_shapes, reference_shapes = _SHAPE.findall(sandbox_svg), _SHAPE.findall(reference)
    assert [i for i, _ in drawn_shapes] == [i for i, _ in reference_shapes] and len(reference_shapes) > 8
    for (_, d), (_, r) in zip(drawn_shapes, reference_shapes):  # SVG writes 6 decimals: the last may round apart
        assert re.sub(_NUMBER, "#", d) == re.sub(_NUMBER, "#", r)
        np.testing.assert_allclose(np.array(_NUMBER.findall(d), float), np.array(_NUMBER.findall(r), float), atol=2e-6)
    assert _IMAGE.findall(sandbox_svg) == _IMAGE.findall(reference) and _IMAGE.findall(reference)
