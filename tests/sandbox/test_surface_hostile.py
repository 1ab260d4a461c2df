"""Hostile programs against the torch surface of issue 21 §3: sizes a program names are refused before numpy
allocates them, and zero divisors behave as PyTorch's do (an integer one raises, a float one gives inf/nan)."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, err, ok


@pytest.mark.parametrize("expr, shape", [
    ("torch.Tensor(10**9, 10**9)", "[1000000000, 1000000000]"),
    ("torch.Tensor(torch.Size([10**5, 10**5]))", "[100000, 100000]"),
    ("torch.FloatTensor(10**6, 10**6)", "[1000000, 1000000]"),
    ("torch.LongTensor(10**4, 10**4)", "[10000, 10000]"),
    ("torch.BoolTensor(10**12)", "[1000000000000]"),
    ("torch.histc(torch.rand(3), bins=10**9)", "[1000000001]"),
    ("torch.histogram(torch.rand(3), bins=10**9)", "[1000000001]"),
    ("torch.linspace(0, 1, 10**10)", "[10000000000]"),
])
def test_sizes_a_program_names_are_refused_before_numpy_allocates(expr, shape):
    e = err(f"import torch\nx = {expr}\n")
    assert e["type"] == "LimitExceeded" and shape in e["message"], e


def test_meshgrid_of_big_vectors_is_refused_at_its_grids():
    e = err("import torch\nv = torch.arange(10**5)\na, b = torch.meshgrid(v, v, indexing='ij')\n")
    assert e["type"] == "LimitExceeded" and "[100000, 100000]" in e["message"], e


def test_meshgrid_within_the_limits_runs():
    out = ok("import torch\na, b = torch.meshgrid(torch.arange(300), torch.arange(200), indexing='xy')\n"
             "print(a.shape, b.shape, int(a.sum()), int(b.sum()))\n")
    assert out == "torch.Size([200, 300]) torch.Size([200, 300]) 8970000 5970000\n"


def test_remainder_and_floor_divide_by_zero_behave_as_torch():
    e = err("import torch\nprint(torch.tensor([5, 3]) % 0)\n")
    assert (e["type"], e["message"]) == ("RuntimeError", "ZeroDivisionError")
    e = err("import torch\nprint(torch.tensor([5, 3]) // torch.tensor([1, 0]))\n")
    assert (e["type"], e["message"]) == ("RuntimeError", "ZeroDivisionError")
    e = err("import torch\nx = torch.tensor([5, 3])\nx %= 0\n")
    assert e["message"] == "ZeroDivisionError"
    out = ok("import torch\nx = torch.tensor([5., -3.])\nprint(x % 0, x // 0, torch.fmod(x, 0), 7 % torch.tensor([0.]))\n")
    assert out == "tensor([nan, nan]) tensor([inf, -inf]) tensor([nan, nan]) tensor([nan])\n"


def test_histogram_arguments_are_checked_before_counting():
    assert err("import torch\ntorch.histc(torch.rand(3), bins=-1)\n")["message"] == (
        "torch.histogram(): bins must be > 0, but got -1 for dimension 0")
    assert err("import torch\ntorch.histc(torch.tensor([1., float('inf')]))\n")["message"] == (
        "torch.histc: range of [1, inf] is not finite")
    assert err("import torch\ntorch.histc(torch.tensor([1, 2]))\n")["message"] == (
        "\"histogram_cpu\" not implemented for 'Long'")


def test_legacy_constructor_errors_are_pytorchs():
    assert err("import torch\ntorch.Tensor(-1)\n")["message"] == "Trying to create tensor with negative dimension -1: [-1]"
    assert err("import torch\ntorch.Tensor(3.5)\n")["message"] == "new(): data must be a sequence (got float)"
    assert err("import torch\ntorch.ones(2).type('torch.Foo')\n")["message"] == "invalid type: 'torch.Foo'"
    e = err("import torch\ntorch.ones(2).type('torch.cuda.FloatTensor')\n")
    assert e["message"].startswith("Cannot initialize CUDA without ATen_cuda library.") and "CPU only" in e["message"]


def test_many_small_legacy_tensors_count_against_the_live_limit():
    e = err("import torch\nkeep = []\nfor i in range(100):\n    keep.append(torch.FloatTensor(100, 200))\n",
            limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded", e


def test_the_new_names_are_reachable_and_print_as_torch():
    out = ok("import torch\nx = torch.tensor([[1.5, -2.0], [3.0, 4.0]])\n"
             "print(x.type(), isinstance(x, torch.FloatTensor), isinstance(x, torch.LongTensor))\n"
             "print(x.sum(axis=0, keepdims=True), torch.all(x > -3), x.any(dim=1))\n"
             "print(torch.__version__, torch.__version__.split('.')[0])\n"
             "from torch.autograd import Variable\nfrom torch.autograd.function import FunctionCtx\n"
             "print(Variable(torch.ones(1)), torch.Tensor(x.shape).shape)\n")
    assert out == ("torch.FloatTensor True False\ntensor([[4.5000, 2.0000]]) tensor(True) tensor([True, True])\n"
                   "2.13.0+cpu 2\ntensor([1.]) torch.Size([2, 2])\n")
