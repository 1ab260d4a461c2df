"""Hostile programs against the names engine/linalg_more.py made reachable (det, inverse, linalg.inv / det / cross,
cross, kron, cdist, cummax, cummin, fill_diagonal_): sizes and cubic times are refused before numpy runs, wrong
types raise PyTorch's errors with the program's line, recursion stops at its budget, nothing reaches the host;
a program using them prints what PyTorch prints."""
import pytest
from sandbox_testing import CLASSIC_LIMITS, DEFAULT_LIMITS, err, leaks, run, same_as_cpython


@pytest.mark.parametrize("line", [
    "torch.kron(torch.ones(1000), torch.ones(10**4))",
    "torch.ones(3000, 1).kron(torch.ones(1, 3000))",
    "torch.cdist(torch.ones(3000, 2), torch.ones(3000, 2))",  # p = 2, many rows: the matrix-product form
    "torch.cdist(torch.ones(1000, 100), torch.ones(1000, 100), p=1)",  # the differences it is made of
    "torch.cdist(torch.ones(200, 100), torch.ones(200, 100), compute_mode='donot_use_mm_for_euclid_dist')",
    "torch.linalg.cross(torch.ones(10**4, 1, 3), torch.ones(1, 10**4, 3))",
])
def test_huge_results_are_refused_by_the_budgets(line):
    out = run(f"import torch\ny = {line}\n", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error
    assert out.error["line"] == 2


@pytest.mark.parametrize("line", [
    "torch.det(torch.ones(1000, 1000))", "torch.linalg.inv(torch.ones(1000, 1000))",
    "torch.ones(50, 200, 200).det()", "torch.ones(1000, 1000).inverse()",
])
def test_cubic_factorisations_are_refused_by_max_op_flops(line):
    out = run(f"import torch\ny = {line}\n", DEFAULT_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error
    assert "max_op_flops" in out.error["message"] and out.error["line"] == 2


@pytest.mark.parametrize("line, kind, words", [
    ("torch.det('a')", "TypeError", "det(): argument 'input' (position 1) must be Tensor, not str"),
    ("torch.linalg.det([[1.0]])", "TypeError", "linalg_det(): argument 'A' (position 1) must be Tensor, not list"),
    ("torch.det(x)", "RuntimeError", "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices"),
    ("torch.inverse(torch.ones(3))", "RuntimeError", "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("torch.inverse(torch.ones(2, 2))", "_LinAlgError", "linalg.inv: The diagonal element 2 is zero"),
    ("torch.det(torch.ones(2, 2, dtype=torch.long))", "RuntimeError", "Expected a floating point or complex tensor"),
    ("torch.cross(x, 'a')", "TypeError", "cross(): argument 'other' (position 2) must be Tensor, not str"),
    ("torch.cross(torch.ones(4, 2), torch.ones(4, 2))", "RuntimeError", "no dimension of size 3 in input"),
    ("torch.linalg.cross(x, x, dim=0)", "RuntimeError", "linalg.cross: inputs dimension 0 must have length 3. Got 2 and 2"),
    ("torch.linalg.cross(x, x, dim=10**9)", "IndexError", "Dimension out of range"),
    ("torch.linalg.cross(x, x, dim='a')", "TypeError", "must be int"),
    ("torch.kron(x, 3)", "TypeError", "kron(): argument 'other' (position 2) must be Tensor, not int"),
    ("torch.cdist(x, torch.ones(2, 2))", "RuntimeError", "X1 and X2 must have the same number of columns. X1: 3 X2: 2"),
    ("torch.cdist(x, x, p=-1)", "RuntimeError", "cdist only supports non-negative p values"),
    ("torch.cdist(x, x, p='a')", "TypeError", "must be float, not str"),
    ("torch.cdist(x, x, compute_mode=None)", "ValueError", "None is not a valid value for compute_mode"),
    ("torch.cummax(x, 'a')", "TypeError", "cummax(): argument 'dim' (position 2) must be int, not str"),
    ("torch.cummin(x, 10**9)", "IndexError", "Dimension out of range"),
    ("x.cummax()", "TypeError", ""),
    ("x.fill_diagonal_('a')", "TypeError", "fill_diagonal_(): argument 'fill_value' (position 1) must be Number"),
    ("x.fill_diagonal_(x)", "TypeError", "must be Number, not Tensor"),
    ("torch.ones(3).fill_diagonal_(1)", "RuntimeError", "dimensions must larger than 1"),
    ("torch.ones(2, 2, requires_grad=True).fill_diagonal_(1)", "RuntimeError",
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
])
def test_wrong_arguments_raise_with_the_programs_line(line, kind, words):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\n")
    assert e["line"] == 3, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


def test_recursion_through_the_new_names_stops_at_its_budget():
    e = err("import torch\ndef f(m):\n    return f(torch.inverse(m).det() * m)\nf(torch.eye(2) * 2)\n")
    assert e["type"] in ("RecursionError", "LimitExceeded"), e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "torch.det.__globals__", "torch.linalg.inv.__code__", "torch.cdist.__module__", "x.kron.__closure__",
    "x.fill_diagonal_.__func__", "torch.cummax(x, 0).__class__.__bases__", "torch.linalg.LinAlgError.__bases__",
])
def test_new_names_do_not_reach_outside_the_sandbox(line):
    e = err(f"import torch\nx = torch.ones(2, 3)\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "NameError"), e
    assert not leaks(e["message"])


def test_a_program_with_the_new_names_prints_what_pytorch_prints():
    same_as_cpython("""import torch
torch.manual_seed(0)
a = torch.randn(2, 3, 3, dtype=torch.float64, requires_grad=True)
d = torch.linalg.det(a)
i = torch.inverse(a)
print(d, d.grad_fn.name(), i.grad_fn.name(), a.det().shape, torch.linalg.inv(a).shape)
u, v = torch.randn(4, 3, requires_grad=True), torch.randn(4, 3)
c = torch.linalg.cross(u, v)
print(c.grad_fn.name(), torch.cross(u, v, dim=1).shape, u.cross(v, dim=-1).shape)
k = torch.kron(torch.tensor([[1, 2], [3, 4]]), torch.ones(2, 2, dtype=torch.long))
print(k, torch.kron(u, v).grad_fn.name())
dist = torch.cdist(u, v)
print(dist.grad_fn.name(), torch.cdist(u, v, p=1).shape, torch.cdist(torch.ones(30, 3), torch.zeros(2, 3))[0])
m = torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 5.0]), 0)
print(m, m.values, m.indices, torch.tensor([[2, 1], [0, 3]]).cummin(1))
e = torch.zeros(4, 3).fill_diagonal_(2.5, wrap=True)
print(e)
(d.sum() + i.sum() + c.sum() + dist.sum()).backward()
print(a.grad.shape, u.grad)
try:
    torch.linalg.inv(torch.zeros(2, 2))
except RuntimeError as error:
    print(error)
""")


@pytest.mark.parametrize("line, kind, words", [
    ("torch.zeros(10**5, 10**5, dtype=torch.int8)", "LimitExceeded", "max_tensor_elements"),
    ("torch.ones(10**6, dtype=torch.int16).repeat(10**4)", "LimitExceeded", "max_tensor_elements"),
    ("torch.tensor([300], dtype=torch.int8)", "RuntimeError", "value cannot be converted to type int8 without overflow"),
    ("torch.tensor([1], dtype='int8')", "TypeError", "dtype must be a torch.dtype"),
    ("torch.arange(5.)[torch.tensor([1], dtype=torch.int16)]", "IndexError",
     "tensors used as indices must be long, int, byte or bool tensors"),
    ("torch.int8(3)", "TypeError", ""),
    ("torch.int8.__class__.__subclasses__()", "", ""),
])
def test_small_integer_dtypes_are_bounded_and_typed(line, kind, words):
    e = err(f"import torch\ny = {line}\n", limits=CLASSIC_LIMITS)
    assert e["line"] == 2, e
    if kind:
        assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


def test_a_program_with_small_integers_prints_what_pytorch_prints():
    same_as_cpython("""import torch
a = torch.tensor([100, 120, -7], dtype=torch.int8)
b = torch.tensor([[1, -2], [300, 4]], dtype=torch.int16)
print(a, b, a + a, a * 2, a + 1000, a / 2, a // 2, a.sum(), b.prod(), a.to(torch.int16) + b[0, 0])
print(a.dtype, b.dtype, torch.short, torch.int8.itemsize, a.type(), b.type(), (a + b[0]).dtype)
print(torch.tensor([300.7, -1.5]).to(torch.int8), a.float().mean(), torch.zeros(2, dtype=torch.int8).tolist())
try:
    torch.tensor([128], dtype=torch.int8)
except RuntimeError as error:
    print(error)
""")


@pytest.mark.parametrize("p", ["None", "2", "'nuc'", "'fro'", "1", "float('inf')"])
def test_a_condition_number_of_a_huge_matrix_is_refused_by_max_op_flops(p):
    out = run(f"import torch\ny = torch.linalg.cond(torch.rand(1000, 1000), {p})\n", DEFAULT_LIMITS)
    assert out.error is not None and out.error["type"] == "LimitExceeded", out.error
    assert "max_op_flops" in out.error["message"] and out.error["line"] == 2


@pytest.mark.parametrize("call,kind", [
    ("torch.linalg.cond(torch.ones(3), None)", "RuntimeError"), ("torch.linalg.cond([[1, 2], [3, 4]])", "TypeError"),
    ("torch.linalg.cond(torch.eye(2), 'x' * 10**5)", "LimitExceeded"), ("torch.linalg.cond(torch.eye(2), print)", "RuntimeError"),
    ("torch.linalg.cond(torch.tensor([[float('nan'), 1.], [1., 1.]]))", "RuntimeError"),
    ("torch.linalg.cond(torch.ones(2, 3), 'fro')", "RuntimeError"), ("torch.linalg.cond(torch.eye(2, dtype=torch.long))", "RuntimeError"),
])
def test_a_condition_number_of_bad_input_is_pytorchs_error_on_its_line(call, kind):
    out = run(f"import torch\ny = {call}\n", CLASSIC_LIMITS)
    assert out.error is not None and out.error["type"] == kind and out.error["line"] == 2, out.error
    assert len(out.error["message"]) < 2_000 and not leaks(out.error["message"])


def test_a_condition_number_prints_what_pytorch_prints():
    out = run("import torch\nA = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64)\n"
              "print(torch.linalg.cond(A), torch.linalg.cond(A, 1), torch.linalg.cond(torch.tensor([[1., 2.], [2., 4.]]), 1))",
              CLASSIC_LIMITS)
    assert out.error is None and out.stdout == (
        "tensor(14.9330, dtype=torch.float64) tensor(21.0000, dtype=torch.float64) tensor(inf)\n")
