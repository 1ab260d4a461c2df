"""`import numpy as np` inside programs: what they print is what real NumPy prints (the same program
text run by real Python is the reference), tensors and arrays share memory as in torch, and what the
subset refuses is refused before numpy allocates."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from sandbox_testing import CLASSIC_LIMITS, err, ok, run

HAS_TORCH = importlib.util.find_spec("torch") is not None


def reference(source: str) -> str:
    """What real Python (real numpy, real torch) prints for `source`."""
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


NUMPY_PROGRAMS = {
    "creation": """
import numpy as np
a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(a)
print(repr(a))
print(a.shape, a.ndim, a.size, a.dtype, a.T.shape)
print(np.zeros(3), np.ones((2, 2), dtype=np.int64), np.zeros_like(a), np.ones_like(a, dtype=int))
print(np.full((2, 3), 7.5), np.arange(5), np.arange(1, 2, 0.25), np.linspace(0, 1, 5), np.eye(3))
print(repr(np.asarray([1, 2, 3])), repr(np.array([True, False])), repr(np.array(3.5)))
print(np.array([1, 2], dtype=np.float32), repr(np.array([1, 2], dtype='float32')), np.arange(4).reshape(2, 2))
""",
    "scalars": """
import numpy as np
x = np.float64(1.5)
print(x, repr(x), [x, np.float32(2.5), np.int64(3)], (np.bool_(True),))
print(repr(np.array([1.0, 2.0]).sum()), repr(np.array([1, 2]).sum()), repr(np.int64(7) // 2))
print(f"{x:.3f}", f"{np.float32(1) / 3}", str(np.float32(0.1)), type(x), type(np.array([1])))
print(np.pi, np.e, repr(np.pi * 2), np.array(2.0).item(), np.array([[4]]).item(), np.float64(2.0).item())
print(float(np.float64(2.5)), int(np.int64(4)), isinstance(x, np.floating), x.dtype, np.dtype('float32'))
print("%.2f %d %s %r" % (x, np.int64(3), np.float32(0.1), np.float32(0.5)), "{:.1f} {}".format(x, np.int64(2)))
print("%s | %r" % (np.array([1.5, 2]), np.array([1, 2])), {"a": np.array([1.0])}, [np.arange(2)])
""",
    "ufuncs": """
import numpy as np
a = np.array([[0.5, 1.0, 2.0], [3.0, 4.0, 5.0]])
print(np.exp(a), np.log(a), np.sin(a), np.cos(a), np.tanh(a), np.sqrt(a), np.abs(-a))
print(np.maximum(a, 2), np.minimum(a, 2), np.clip(a, 1, 3), np.where(a > 2, a, -1.0), np.square(a))
print(np.round(a / 3, 2), np.floor(a), np.ceil(a), np.sign(a - 2), np.power(a, 2), np.log1p(a))
print(a + 1, a * a, a - a.mean(), a / 2, a ** 2, -a, a // 2, a % 2, 1 / a, 2 ** a)
print(a > 2, a == 2.0, (a > 1) & (a < 4), ~(a > 1), np.logical_and(a > 1, a < 4))
print(np.isnan(a), np.isfinite(a), np.allclose(a, a + 1e-10), np.isclose(a, 1.0), np.array_equal(a, a))
""",
    "reductions": """
import numpy as np
a = np.arange(12, dtype=np.float64).reshape(3, 4)
print(a.sum(), a.sum(axis=0), a.sum(axis=1, keepdims=True), np.sum(a, axis=(0, 1)))
print(a.mean(), np.mean(a, axis=0), a.std(), a.var(axis=1), np.std(a, ddof=1), np.var(a, axis=0, keepdims=True))
print(a.max(), a.min(axis=0), np.max(a, axis=1), np.min(a), np.argmax(a), a.argmin(axis=1), np.argmax(a, axis=0))
print(a.prod(), np.cumsum(a, axis=1), a.cumsum(), np.median(a), np.any(a > 10), a.all(), np.count_nonzero(a))
print(np.sort(np.array([3, 1, 2])), np.argsort(np.array([3.0, 1.0, 2.0])), np.unique(np.array([2, 1, 2, 3])))
""",
    "indexing": """
import numpy as np
a = np.arange(24).reshape(2, 3, 4)
print(a[0], a[1, 2], a[1, 2, 3], a[:, 1], a[..., -1], a[0, ::2, 1:3], a[:, None].shape, a[np.newaxis].shape)
print(a[a > 20], a[0][[0, 2]], a[0, [0, 2], [1, 3]], a[np.array([1, 0])].shape, a.reshape(-1)[-3:])
b = np.zeros((3, 3))
b[0] = 1
b[1, 1:] = [2, 3]
b[b == 0] = -1
b[:, 2] += 10
print(b)
c = np.arange(6.0)
c[c > 2] *= 2
print(c, len(c), list(c[:2]), [float(v) for v in c[:2]], c.tolist())
for row in np.eye(2):
    print(row)
""",
    "shape": """
import numpy as np
a = np.arange(6).reshape(2, 3)
b = np.arange(6, 12).reshape(2, 3)
print(a.T, a.transpose(), np.transpose(a), a.reshape(3, 2), a.flatten(), a.ravel(), np.squeeze(a[None]))
print(np.concatenate([a, b]), np.concatenate([a, b], axis=1), np.stack([a, b]), np.stack([a, b], axis=-1))
print(np.vstack([a, b]), np.hstack([a, b]), np.expand_dims(a, 0).shape, a.astype(np.float32), a.astype(float))
print(np.dot(a, b.T), a @ b.T, np.matmul(a, b.T), a.dot(b.T), np.outer([1, 2], [3, 4]), np.dot([1, 2], [3, 4]))
print(np.swapaxes(a, 0, 1), np.flip(a), np.tile(a, 2), np.repeat(a, 2), np.diag([1, 2]), np.trace(np.eye(3)))
print(a.copy(), np.copy(a), np.meshgrid(np.arange(2), np.arange(3)), a.item(0), np.triu(np.ones((3, 3))))
""",
    "random": """
import numpy as np
np.random.seed(0)
print(np.random.rand(2, 3))
print(np.random.randn(4))
print(np.random.randint(0, 10, size=5), np.random.randint(5), np.random.randint(1, 7, (2, 2)))
print(np.random.normal(0, 1, (2,)), np.random.normal(), np.random.uniform(-1, 1, 3), np.random.uniform())
print(np.random.choice(5, 3), np.random.choice([1.5, 2.5, 3.5]), np.random.choice(10, 4, replace=False))
x = np.arange(10)
np.random.shuffle(x)
print(x, np.random.permutation(5), np.random.permutation(np.arange(3.0)), np.random.random((2,)))
np.random.seed(42)
print(np.random.rand(), np.random.standard_normal(2), np.random.random_sample())
""",
    "errors": """
import numpy as np
a = np.ones((2, 3))
b = np.ones((4, 5))
for f in [lambda: a + b, lambda: a @ a, lambda: a.reshape(4, 4), lambda: np.concatenate([a, b]), lambda: a[5],
          lambda: a[0, 0, 0], lambda: np.array([1, 2]).item()]:
    print(len(str(f)) > 0)
""",
}


@pytest.mark.parametrize("name", sorted(NUMPY_PROGRAMS))
def test_prints_what_numpy_prints(name):
    source = NUMPY_PROGRAMS[name]
    assert ok(source) == reference(source)


@pytest.mark.parametrize("expr, kind", [
    ("a + b", "ValueError"), ("a @ a", "ValueError"), ("a.reshape(4, 4)", "ValueError"),
    ("np.concatenate([a, b])", "ValueError"), ("a[5]", "IndexError"), ("a[0, 0, 0]", "IndexError"),
    ("np.array([1, 2]).item()", "ValueError"), ("np.random.choice(3, 5, replace=False)", "ValueError"),
])
def test_errors_are_numpys(expr, kind):
    source = f"import numpy as np\na = np.ones((2, 3))\nb = np.ones((4, 5))\n{expr}"
    e = err(source)
    assert e["type"] == kind and e["line"] == 4
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60)
    assert r.stderr.strip().splitlines()[-1] == f"{kind}: {e['message']}".strip()


def test_np_random_is_the_runs_own():
    src = "import numpy as np\nnp.random.seed(3)\nprint(np.random.rand())"
    assert ok(src) == ok(src) == reference(src)
    import numpy as real_np

    state = real_np.random.get_state()[1].copy()
    ok("import numpy as np\nnp.random.seed(1)\nnp.random.rand(100)")
    assert (real_np.random.get_state()[1] == state).all()  # the process's global generator is untouched


def test_print_options_cannot_leak_between_runs():
    e = err("import numpy as np\nnp.set_printoptions(precision=1)")
    assert e["type"] == "AttributeError"
    import numpy as real_np

    with real_np.printoptions(precision=1):  # whatever the process's options, a run prints numpy's defaults
        assert ok("import numpy as np\nprint(np.array([1 / 3]))") == "[0.33333333]\n"


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_tensor_interop_prints_what_torch_prints():
    source = """
import numpy as np
import torch
t = torch.tensor([1.0, 2.0, 3.0])
a = t.numpy()
a[0] = 10.0
print(t, a, a.dtype)
b = np.array([1.0, 2.0])
u = torch.from_numpy(b)
b[1] = 7.0
print(u, u.dtype)
print(torch.tensor(b), torch.as_tensor(b), torch.tensor(np.float32(2.5)), torch.tensor(np.arange(3)))
print(t[:2] + b, t[:2] * np.float64(2), torch.from_numpy(np.array([1, 2], dtype=np.int32)))
print(torch.zeros(2).numpy(), torch.ones(2, requires_grad=True).detach().numpy())
w = torch.ones(2, requires_grad=True)
print((w * 2).detach().numpy(), w.detach().numpy().sum())
"""
    assert ok(source) == reference(source)


def test_numpy_refuses_requires_grad_with_torchs_message():
    e = err("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()")
    assert e == {"type": "RuntimeError", "line": 3, "column": 0,
                 "message": "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."}
    e = err("import torch\nimport numpy as np\nw = torch.ones(2, requires_grad=True)\nnp.exp(w)")
    assert e["type"] == "RuntimeError" and "detach().numpy()" in e["message"]
    assert err("import torch\ntorch.from_numpy([1.0])")["message"] == "expected np.ndarray (got list)"


def test_memory_is_shared_as_in_torch():
    out = ok("import torch\nimport numpy as np\nt = torch.zeros(3)\na = t.numpy()\nt.add_(1)\nprint(a)\n"
             "b = np.zeros(2)\nu = torch.from_numpy(b)\nu.mul_(0).add_(5)\nprint(b)")
    assert out == "[1. 1. 1.]\n[5. 5.]\n"


@pytest.mark.parametrize("expr", [
    "np.zeros((10**9,))", "np.ones((1000, 1000))", "np.arange(10**12)", "np.arange(0, 1, 1e-12)",
    "np.arange(float('inf'))", "np.linspace(0, 1, 10**7)", "np.eye(10**6)", "np.full((10**5, 10**5), 1.0)",
    "np.random.rand(1000, 1000)", "np.random.randn(10**9)", "np.random.randint(0, 2, size=10**9)",
    "np.random.normal(0, 1, (10**5, 10**5))", "np.random.uniform(size=10**9)",
    "np.random.choice(10**9, 2, replace=False)", "np.random.permutation(10**9)",
    "np.arange(300)[:, None] * np.arange(1000)[None, :]", "np.outer(np.arange(1000), np.arange(1000))",
    "np.tile(np.ones(100), 10**4)", "np.repeat(np.ones(100), 10**4)", "np.ones(100).repeat(10**4)",
    "np.zeros(5)[np.zeros((1000, 1000), dtype=int)]", "np.arange(1000)[:, None] @ np.arange(1000)[None, :]",
    "np.arange(1000)[:, None] > np.arange(1000)", "np.zeros((0, 10**6, 10**6))",
    "np.concatenate([np.ones(90000), np.ones(90000)])", "np.meshgrid(np.arange(1000), np.arange(1000))",
    "np.diag(np.ones(1000))", "np.zeros(0).reshape(10**5, 10**5, 0).tolist()",
    "[np.ones(90000) for i in range(20)]",
])
def test_sizes_are_refused_before_numpy_allocates(expr):
    e = err(f"import numpy as np\nx = {expr}", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 2, e


@pytest.mark.parametrize("expr, kind", [
    ("np.array([1, 2], dtype=object)", "NameError"), ("np.array([1, 2], dtype='O')", "TypeError"),
    ("np.array(['a'])", "TypeError"), ("np.zeros(3, dtype='V100000000')", "TypeError"),
    ("np.zeros(3, 'V100000000')", "TypeError"), ("np.array([1.5]).astype('O')", "TypeError"),
    ("np.array([print])", "TypeError"), ("np.ndarray((3,))", "TypeError"), ("np.dtype('O')", "TypeError"),
    ("np.float64([1, 2])", "TypeError"), ("np.diff(np.ones(3), n=10**9)", "ValueError"),
    ("np.diff(np.ones(3), 10**12)", "ValueError"), ("np.sum(np.ones(3), out=np.ones(1))", "TypeError"),
    ("np.random.seed('x')", "TypeError"), ("np.random.shuffle(print)", "TypeError"),
    ("np.save", "AttributeError"), ("np.load", "AttributeError"), ("np.fromfile", "AttributeError"),
    ("np.frombuffer", "AttributeError"), ("np.lib", "AttributeError"), ("np.ctypeslib", "AttributeError"),
    ("np.memmap", "AttributeError"), ("np.genfromtxt", "AttributeError"), ("np.loadtxt", "AttributeError"),
    ("np.set_printoptions", "AttributeError"), ("np.vectorize", "AttributeError"),
    ("np.frompyfunc", "AttributeError"), ("np.random.RandomState(0).get_state", "AttributeError"),
    ("np.random.get_state", "AttributeError"), ("np.random.default_rng", "AttributeError"),
    ("np.empty(3)", "AttributeError"), ("np.exp.reduce", "AttributeError"), ("np.add.outer", "AttributeError"),
    ("np.ones(3).ctypes", "AttributeError"), ("np.ones(3).tofile", "AttributeError"),
    ("np.ones(3).data", "AttributeError"), ("np.ones(3).base", "AttributeError"), ("np.ones(3).view", "AttributeError"),
    ("np.ones(3).tobytes", "AttributeError"), ("np.ones(3).dump", "AttributeError"),
    ("np.ones(3).setflags", "AttributeError"), ("np.float64(1.5).hex", "AttributeError"),
    ("np.ones(3).dtype.fields", "AttributeError"), ("np.ones(3).__array_interface__", "AttributeError"),
    ("type(np.ones(3))((3,))", "TypeError"), ("type(np.ones(3).dtype)()", "TypeError"), ("np.dtype('V1000000')", "TypeError"),
    ("np.ones(3).astype(np.dtype)", "TypeError"), ("np.array(['1' * 100])", "ValueError"),
])
def test_hostile_numpy_is_refused(expr, kind):
    e = err(f"import numpy as np\nx = {expr}")
    assert e["type"] == kind, e


def test_live_elements_count_arrays():
    e = err("import numpy as np\nkeep = []\nfor i in range(100):\n    keep.append(np.zeros(90000))", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and "max_live_elements" in e["message"]
    assert ok("import numpy as np\nfor i in range(100):\n    x = np.zeros(90000)\nprint(x.shape)") == "(90000,)\n"


def test_type_names_are_numpys():
    out = ok("import numpy as np\nprint(type(np.ones(2)), type(np.float32(1)), isinstance(np.ones(1), np.ndarray))")
    assert out == "<class 'numpy.ndarray'> <class 'numpy.float32'> True\n"


def test_array_attributes_cannot_be_set():
    assert err("import numpy as np\nx = np.ones(2)\nx.shape = (2, 1)")["type"] == "AttributeError"


def test_ordinary_programs_still_run_fast():
    out = run("import numpy as np\nx = np.linspace(-1, 1, 100)\ny = 3 * x + 0.5\n"
              "w = np.dot(x, y) / np.dot(x, x)\nprint(round(float(w), 3))")
    assert out.error is None and out.stdout == "3.0\n"


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_out_writes_into_an_array_the_program_holds():
    # the PyTorch "Tensors" tutorial: np.add(n, 1, out=n) changes the tensor made by torch.from_numpy(n)
    source = """
import numpy as np
import torch
n = np.ones(5)
t = torch.from_numpy(n)
r = np.add(n, 1, out=n)
print(t, r is n, n)
np.multiply(n, n, out=n)
np.clip(n, 0, 3, out=n)
np.sqrt(n, out=n)
m = np.zeros(5, dtype=np.float32)
np.subtract(n, 0.5, out=m)
print(t, m, m.dtype)
"""
    assert ok(source) == reference(source)


@pytest.mark.parametrize("call", [
    "np.add(n, 1, out=torch.ones(5))",  # a tensor is no array numpy may write into
    "np.add(n, 1, out=[0.0] * 5)",
    "np.add(n, 1, out=(n,))",
    "np.sum(n, out=n)",  # a reduction keeps refusing out=
    "np.concatenate([n, n], out=n)",
    "np.where(n > 0, n, 0.0, out=n)",
    "np.add(n, 1.5, out=np.ones(5, dtype=np.int64))",  # numpy's casting rule: float into int refused
])
def test_out_refused_for_anything_but_a_held_numeric_array(call):
    e = err(f"import numpy as np\nimport torch\nn = np.ones(5)\n{call}")
    assert e["type"].endswith("TypeError") and e["line"] == 4


@pytest.mark.parametrize("call, kind", [
    ("np.add(n, np.ones((2, 5)), out=n)", "ValueError"),  # the broadcast shape is not out's
    ("np.add(n, 1, out=torch.ones(3).expand(5, 3).numpy()[:, 0])", "ValueError"),  # a read-only broadcast view
])
def test_out_shape_and_writability_are_numpys_checks(call, kind):
    e = err(f"import numpy as np\nimport torch\nn = np.ones(5)\n{call}")
    assert e["type"] == kind and e["line"] == 4


def test_out_does_not_count_the_array_again():
    # each call returns the program's own array: counting it as new live elements would exhaust the limit
    assert ok("import numpy as np\nn = np.ones(400_000)\nfor _ in range(200):\n    np.add(n, 1, out=n)\n"
              "print(n[0])") == "201.0\n"
