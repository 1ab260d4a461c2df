"""Hostile programs against the names engine/tensor_stats.py added (median, nansum, nanmean, dist, bincount,
addcmul / addcdiv, add / sub with alpha, movedim / moveaxis, take_along_dim, repeat_interleave, tril / triu_indices,
Tensor.multinomial): a program using them prints what PyTorch prints; wrong arguments raise with the program's
line; sizes a program picks (bins, repeats, indices) are bounded before anything is allocated; what they return
reaches nothing outside."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

PROGRAM = """import torch
x = torch.tensor([[3., 1., 2., 2.], [2., 2., 5., 2.]], requires_grad=True)
m = x.median(dim=1)
print(torch.median(x), m, m.values, m.indices, x.median(0, keepdim=True).values)
print(torch.nansum(torch.tensor([1., float('nan'), 2.])), torch.tensor([1., float('nan')]).nanmean())
d = torch.dist(x, torch.ones(4))
d.backward()
print(d, x.grad, d.grad_fn.name())
print(torch.bincount(torch.tensor([0, 1, 1, 3])), torch.tensor([2, 2]).bincount(minlength=4))
p = torch.zeros(3)
g = torch.tensor([0.1, -0.2, 0.3])
p.add_(g, alpha=-0.5)
p.sub_(g, alpha=2)
print(p, torch.add(p, g, alpha=3), torch.sub(p, g, alpha=0.25))
v = torch.zeros(3)
v.mul_(0.9).addcmul_(g, g, value=0.1)
p.addcdiv_(g, v.add(1e-8), value=-0.01)
print(v, p, torch.addcmul(p, g, g), torch.addcdiv(p, g, g + 1, value=2))
print(torch.movedim(torch.zeros(2, 3, 4), 0, -1).shape, torch.zeros(2, 3, 4).moveaxis((0, 1), (2, 0)).shape)
print(torch.take_along_dim(x.detach(), x.detach().argsort(1), 1), x.detach().take_along_dim(torch.tensor([0, 7])))
print(torch.repeat_interleave(torch.tensor([1, 2]), 2), torch.tensor([[1, 2]]).repeat_interleave(torch.tensor([2]), 0))
print(torch.repeat_interleave(torch.tensor([1, 3])), torch.tril_indices(3, 3), torch.triu_indices(3, 3, 1))
print(torch.tensor([0.1, 0.9]).multinomial(4, True, generator=torch.Generator().manual_seed(0)))
print(x.unfold(1, 2, 1), x.stride(), x.t().stride(0), torch.arange(6).unfold(0, 3, 2))
up = torch.nn.Upsample(scale_factor=2)
print(up, up(torch.arange(4.).view(1, 1, 2, 2)), torch.nn.functional.interpolate(torch.arange(5.).view(1, 1, 5), size=7))
pool = torch.nn.AdaptiveAvgPool1d(2)
print(pool, pool(torch.arange(12.).view(2, 6)), torch.nn.functional.adaptive_avg_pool1d(torch.ones(1, 2, 5), 1))
try:
    torch.tensor([1, 2]).add(torch.tensor([1, 1]), alpha=0.5)
except RuntimeError as e:
    print("refused:", e)
"""


def test_a_program_using_them_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind, words", [
    ("torch.median(x, 10**9)", "IndexError", "Dimension out of range"),
    ("x.median('a')", "TypeError", "must be int"),
    ("torch.median([1, 2])", "TypeError", "must be Tensor"),
    ("torch.bincount(torch.tensor([-1, 2]))", "RuntimeError", "non-negative"),
    ("torch.bincount(x)", "RuntimeError", "integral"),
    ("torch.bincount(torch.tensor([1]), minlength=-1)", "RuntimeError", "minlength"),
    ("torch.dist(x, 'a')", "TypeError", "must be Tensor"),
    ("torch.dist(torch.tensor([1]), torch.tensor([2]))", "RuntimeError", "floating"),
    ("torch.addcmul(x, x, x, value='a')", "TypeError", "value"),
    ("torch.addcdiv(x, torch.tensor([1]), torch.tensor([2]))", "RuntimeError", "Integer division"),
    ("x.add(x, alpha=x)", "TypeError", "alpha"),
    ("torch.movedim(x, (0, 1), (1,))", "RuntimeError", "movedim"),
    ("torch.take_along_dim(x, torch.tensor([[0]], dtype=torch.int32), 1)", "RuntimeError", "Long"),
    ("torch.repeat_interleave(x, -1)", "RuntimeError", "negative"),
    ("torch.repeat_interleave(x, torch.tensor([1.5]))", "RuntimeError", "Long or Int"),
    ("torch.tril_indices(-1, 2)", "RuntimeError", "non-negative"),
    ("torch.nn.functional.adaptive_avg_pool1d(x, 'a')", "TypeError", "output_size"),
    ("torch.nn.AdaptiveAvgPool1d(2)(torch.ones(2, 2, 2, 2))", "RuntimeError", "Expected 2D or 3D"),
    ("x.unfold(1, 5, 1)", "RuntimeError", "maximum size for tensor at dimension 1 is 3"),
    ("x.unfold(1, 2, 0)", "RuntimeError", "step is 0"),
    ("x.stride(5)", "IndexError", "Dimension out of range"),
    ("torch.nn.functional.interpolate(x, scale_factor=2)", "NotImplementedError", "Only 3D, 4D and 5D"),
    ("torch.nn.functional.interpolate(x[None], scale_factor=2, mode='bilinear')", "NotImplementedError", "bilinear"),
    ("torch.nn.functional.interpolate(x[None])", "ValueError", "either size or scale_factor"),
    ("torch.nn.Upsample(size=(1, 2, 3))(x[None])", "ValueError", "same number of spatial dimensions"),
    ("x.multinomial(4)", "RuntimeError", "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nx = torch.ones(2, 3, requires_grad=True)\ny = {line}\n")
    assert e["line"] == 3, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "torch.bincount(torch.tensor([10**12]))",  # one bin per value up to the largest: 10**12 bins
    "torch.tensor([1, 2]).bincount(minlength=10**12)",
    "torch.repeat_interleave(torch.ones(4), 10**11)",
    "torch.ones(3).repeat_interleave(torch.tensor([10**11, 1, 1]))",
    "torch.repeat_interleave(torch.tensor([10**11]))",
    "torch.tril_indices(10**6, 10**6)",
    "torch.ones(10**5).unfold(0, 10**4, 1)",  # 10**9 elements of overlapping windows
    "torch.nn.functional.interpolate(torch.ones(1, 1, 4, 4), scale_factor=10**5)",
    "torch.nn.Upsample(size=(10**5, 10**5))(torch.ones(1, 1, 2, 2))",
    "torch.triu_indices(10**7, 3)",
])
def test_sizes_a_program_picks_are_refused_before_they_are_made(line):
    e = err(f"import torch\ny = {line}\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 2, e


@pytest.mark.parametrize("line", [
    "torch.median(x, 0).__class__.__bases__", "torch.median(x, 0)._asdict()", "torch.median.__globals__",
    "torch.median(x, 0).values.grad_fn.__class__.__mro__", "x.addcmul.__func__", "torch.bincount.__code__",
    "type(torch.median(x, 0)).__init__", "torch.dist(x, x).grad_fn.__dict__",
])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import torch\nx = torch.ones(2, 3, requires_grad=True)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])


@pytest.mark.parametrize("source, expected", [
    ("print(bin(5), hex(255), oct(8), bin(-3), hex(10**30))", "0b101 0xff 0o10 -0b11 0xc9f2c9cd04674edea40000000\n"),
    ("f = frozenset([1, 2, 2])\nprint(f, len(f), 1 in f, f | {3}, sorted(f), frozenset(), type(f))",
     "frozenset({1, 2}) 2 True frozenset({1, 2, 3}) [1, 2] frozenset() <class 'frozenset'>\n"),
])
def test_bin_hex_oct_and_frozenset_print_what_python_prints(source, expected):
    assert same_as_cpython(source + "\n") == expected


@pytest.mark.parametrize("line, kind", [
    ("bin(2**100000)", "LimitExceeded"),  # the int itself is past max_int_bits
    ("frozenset(range(10**9))", "LimitExceeded"),
    ("hex(1.5)", "TypeError"),
    ("frozenset(5)", "TypeError"),
    ("frozenset([1]).__class__.__subclasses__()", "AttributeError"),
    ("bin.__self__", "AttributeError"),
])
def test_bin_and_frozenset_refuse_what_they_must(line, kind):
    e = err(f"x = 1\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 2, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line, kind", [
    ("torch.quantile(torch.ones(10), torch.rand(10**8))", "LimitExceeded"),
    ("torch.quantile(torch.ones(3000, 3000), torch.rand(3000), dim=1)", "LimitExceeded"),
    ("torch.quantile(torch.ones(3), 2.0)", "RuntimeError"),
    ("torch.quantile(torch.ones(3), 'a')", "TypeError"),
    ("torch.ones(3).quantile(0.5, dim='a')", "TypeError"),
    ("torch.ones(3).nanquantile(0.5, interpolation='x')", "RuntimeError"),
    ("torch.quantile.__globals__", "AttributeError"),
])
def test_quantile_is_bounded_and_sealed(line, kind):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 3, e
    assert not leaks(e["message"])


def test_quantile_in_a_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython("import torch\ntorch.manual_seed(0)\nx = torch.randn(5, 4)\n"
                    "print(torch.quantile(x, 0.5), x.quantile(torch.tensor([0.25, 0.75]), dim=0), "
                    "torch.nanquantile(torch.tensor([1.0, float('nan'), 3.0]), 0.5, interpolation='lower'))\n")
