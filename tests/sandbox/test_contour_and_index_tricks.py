"""plt.contourf / contour (a classifier's decision map) and numpy's np.c_ / np.r_ (the grid it is computed on), as
intro programs write them: the program prints what CPython prints, the figure is drawn, and sizes a program picks
(grid points, levels, aranges inside np.r_) are bounded before anything is made; nothing reaches outside."""
import pytest
from sandbox_testing import err, leaks, ok, same_as_cpython

GRID = """import numpy as np
xx, yy = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(0, 1, 2))
g = np.c_[xx.ravel(), yy.ravel()]
print(g, g.shape, g.dtype)
print(np.r_[1:4, 7, np.array([8, 9])], np.r_[0:1:5j], np.c_[np.ones((2, 2)), np.zeros(2)], np.r_[2.5])
print(np.c_[[1, 2], [3, 4]], np.r_[[1, 2], [3]], np.r_[-1:1:0.5])
"""


def test_c_and_r_build_what_numpy_builds():
    same_as_cpython(GRID)


DECISION_MAP = """import torch
import numpy as np
import matplotlib.pyplot as plt
torch.manual_seed(0)
X = torch.randn(40, 2)
w = torch.tensor([1.0, -1.0])
xx, yy = np.meshgrid(np.linspace(-3, 3, 30), np.linspace(-3, 3, 20))
grid = torch.tensor(np.c_[xx.ravel(), yy.ravel()], dtype=torch.float32)
zz = torch.sigmoid(grid @ w).reshape(xx.shape)
fig, ax = plt.subplots()
cs = ax.contourf(xx, yy, zz.numpy(), levels=10, cmap="RdBu", alpha=0.8)
ax.contour(xx, yy, zz.numpy(), levels=[0.5], colors="k") if False else None
plt.colorbar(cs)
plt.contour(zz, 3)
ax.scatter(X[:, 0], X[:, 1], c=(X @ w > 0).float(), cmap="bwr", edgecolors="k")
print(type(cs).__name__, zz.shape)
plt.show()
"""


def test_a_decision_map_is_drawn():
    from sandbox_testing import run

    out = run(DECISION_MAP)
    assert out.error is None, out.error
    assert out.stdout == "QuadContourSet torch.Size([20, 30])\n"
    assert len(out.figures) == 1 and out.figures[0]["svg"].count("<path") > 10  # the filled bands are paths


@pytest.mark.parametrize("line, kind", [
    ("np.r_[0:10**12]", "LimitExceeded"),
    ("np.r_[0:1:10**12 * 1j]", "LimitExceeded"),
    ("np.c_[np.ones(10**4), np.ones(10**4)][None] + np.ones((10**4, 1, 1))", "LimitExceeded"),
    ("np.r_['0,2', [1], [2]]", "TypeError"),
    ("np.c_[np.ones((2, 2, 2)), np.ones((2, 2, 2))][0, 0, 0, 0]", "IndexError"),
    ("np.c_.gate", "AttributeError"), ("np.r_.__class__.__getitem__", "AttributeError"),
    ("np.c_.__getitem__.__globals__", "AttributeError"),
])
def test_index_tricks_are_bounded_and_sealed(line, kind):
    e = err(f"import numpy as np\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 2, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line, kind", [
    ("plt.contourf(np.ones((2000, 2000)))", "LimitExceeded"),
    ("plt.contourf(np.ones((5, 5)), levels=10**6)", "ValueError"),
    ("plt.contourf(np.ones((5, 5)), 10**6)", "ValueError"),
    ("plt.contourf(np.ones(5))", "TypeError"),
    ("plt.contourf(np.ones((5, 5)), levels='x')", "TypeError"),
    ("plt.contourf()", "TypeError"),
    ("plt.contourf(np.ones((3, 3))).artist", "AttributeError"),
    ("plt.contourf(np.ones((3, 3))).figure", "AttributeError"),
])
def test_contours_are_bounded_and_sealed(line, kind):
    e = err(f"import numpy as np\nimport matplotlib.pyplot as plt\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 3, e
    assert not leaks(e["message"])


def test_contour_prints_its_type_as_matplotlib():
    assert ok("import matplotlib.pyplot as plt\nc = plt.contour([[1, 2], [3, 4]])\nprint(type(c))\n") == \
        "<class 'matplotlib.contour.QuadContourSet'>\n"
