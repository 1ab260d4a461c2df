"""Hostile programs against the names engine/tensor_tutorial_names.py and tensor_shape.py made reachable (addmm,
index_add, masked_select, unflatten, H/mH, squeeze_/unsqueeze_, is_contiguous/nbytes, hstack/vstack, tile,
logical_*) and against view replay: sizes are refused before numpy allocates, wrong types raise PyTorch's errors
with the program's line, nothing reaches the host; the same program prints what PyTorch prints."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, err, leaks, run, same_as_cpython


@pytest.mark.parametrize("line", [
    "torch.tile(x, (10**6, 10**6))",
    "x.tile(10**5, 10**5)",
    "torch.ones(10**4, 1).masked_select(torch.ones(1, 10**5, dtype=torch.bool))",
    "torch.broadcast_to(x, (10**6, 10**6, 2, 3)).clone()",
    "torch.addmm(torch.zeros(1), torch.ones(3000, 3000), torch.ones(3000, 3000))",
    "torch.hstack([x] * 10**6)",
    "torch.logspace(0, 1, 10**10)",
])
def test_huge_results_are_refused_by_the_budgets(line):
    out = run(f"import torch\nx = torch.ones(2, 3)\ny = {line}\n", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error
    assert out.error["line"] == 3


@pytest.mark.parametrize("line, kind, words", [
    ("x.addmm('a', x)", "TypeError", "addmm(): argument 'mat1' (position 2) must be Tensor, not str"),
    ("torch.addmm(x, x, x)", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ("x.index_add(0, [0], x)", "TypeError", "must be Tensor, not list"),
    ("x.index_add(0, torch.tensor([10**12]), torch.ones(1, 3))", "RuntimeError", "out of bounds for dimension 0"),
    ("torch.ones(2, 3, requires_grad=True).index_add_(0, torch.tensor([0]), torch.ones(1, 3))", "RuntimeError",
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("x.masked_select([True])", "TypeError", "must be Tensor, not list"),
    ("x.masked_select(x)", "RuntimeError", "masked_select: expected BoolTensor for mask"),
    ("x.unflatten(1, 'ab')", "TypeError", "must be tuple of ints, not str"),
    ("x.unflatten(1, (10**12, -1))", "RuntimeError", "don't multiply up to the size of dim 1"),
    ("x.unflatten(1, (-1, -1))", "RuntimeError", "only one dimension can be inferred"),
    ("torch.ones(3).H", "RuntimeError", "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."),
    ("torch.ones(3).mH", "RuntimeError", "tensor.mH is only supported on matrices or batches of matrices."),
    ("x.squeeze_(10**9)", "IndexError", "Dimension out of range"),
    ("x.unsqueeze_(-10**9)", "IndexError", "Dimension out of range"),
    ("torch.logical_and(x, 'a')", "TypeError", "logical_and(): argument 'other' (position 2) must be Tensor, not str"),
    ("torch.vstack(x)", "TypeError", "must be tuple of Tensors, not Tensor"),
    ("torch.hstack([])", "RuntimeError", "hstack expects a non-empty TensorList"),
    ("torch.count_nonzero(x, dim=5)", "IndexError", "Dimension out of range"),
    ("torch.trace(torch.ones(2, 2, 2))", "RuntimeError", "trace: expected a matrix, but got tensor with dim 3"),
    ("x.lerp(x, 'a')", "TypeError", "lerp() received an invalid combination of arguments"),
    ("x.lerp(x.double(), 0.5)", "RuntimeError", "expected dtype float for `end` but got dtype double"),
    ("torch.diff(x, n=-1)", "RuntimeError", "order must be non-negative but got -1"),
    ("torch.unique(x, dim=9)", "IndexError", "Dimension out of range"),
    ("torch.unique('abc')", "TypeError", "must be Tensor, not str"),
    ("torch.broadcast_tensors(x, 'a')", "TypeError", "expected Tensor as element 1 in argument 0, but got str"),
    ("torch.broadcast_tensors(x, torch.ones(5))", "RuntimeError", "The size of tensor a (3) must match"),
    ("torch.dropout(x, 0.5)", "TypeError", "train"),
    ("torch.selu('a')", "", ""),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\n")
    assert e["line"] == 3, e
    if kind:
        assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "x.addmm.__globals__", "x.H.__class__.__subclasses__()", "torch.hstack.__code__", "torch.masked_select.__module__",
    "x.index_add.__closure__", "torch.unflatten.__wrapped__",
])
def test_new_names_do_not_reach_outside_the_sandbox(line):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "NameError"), e
    assert not leaks(e["message"])


def test_diff_of_a_high_order_is_one_step_to_the_empty_result():
    same_as_cpython("import torch\nx = torch.ones(10**5, requires_grad=True)\ny = torch.diff(x * 2, n=10**9)\n"
                    "print(y.shape, y.grad_fn.name(), torch.diff(torch.ones(0, 3), n=5, dim=0).shape)\n")


def test_a_tutorial_program_with_the_new_names_prints_what_pytorch_prints():
    same_as_cpython("""import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.arange(12.).reshape(3, 4).requires_grad_()
y = x * 1
print(y.H.grad_fn.name(), y.mT.shape, y.mH.shape, x.is_contiguous(), x.t().is_contiguous(), x.nbytes, x.itemsize)
a = torch.addmm(torch.ones(4), x, torch.ones(4, 4), beta=0.5, alpha=2)
b = y.index_add(0, torch.tensor([0, 2, 0]), torch.ones(3, 4))
m = y.masked_select(y > 5)
print(a, b, m)
print(torch.unflatten(y, 1, (2, 2)).shape, nn.Unflatten(1, (2, 2))(y).shape, x.unflatten(0, (3, 1)).shape)
w = y.clone()
w.unsqueeze_(0)
print(w.grad_fn.name(), w.shape)
w.squeeze_()
print(w.grad_fn.name(), w.shape)
print(torch.hstack([x, x]).shape, torch.vstack([x, x]).shape, torch.logical_and(x > 1, x < 5).sum())
print(torch.tile(x, (2,)).shape, torch.broadcast_to(x[0], (2, 4)), torch.count_nonzero(x > 3, dim=1))
print(x.t().contiguous().view(-1))
print(torch.trace(x[:, :3]), x.lerp(torch.zeros(3, 4), 0.25), torch.diff(x, dim=0), torch.logspace(-2, 0, 5))
print(torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True), x.half().dtype)
print(torch.selu(x - 5)[0], torch.celu(x - 5, 0.5)[0], torch.dropout(x, 0.5, False).shape)
print([t.shape for t in torch.broadcast_tensors(x[0], torch.ones(2, 1))])
(b.sum() + a.sum() + m.sum()).backward()
print(x.grad)
x.grad = None
z = x * 2
top, bottom = z[0], z[1:]
top.mul_(10)
print(bottom.grad_fn.name(), (bottom * bottom).sum())
(bottom * bottom).sum().backward()
print(x.grad)
""")
