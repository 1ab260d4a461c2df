"""`import matplotlib.pyplot as plt` inside programs: figures come out as SVG, in order with the printed
text; the wrapper takes numbers, lists, arrays and (detached) tensors, and refuses the rest."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_testing import err, make_limits, ok, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "19_linear_regression_plot.py").read_text()


def figures(source, **kw):
    out = run(source, **kw)
    assert out.error is None, out.error
    return out


def test_the_linear_regression_example_plots_one_figure():
    out = figures(EXAMPLE)
    assert out.stdout.startswith("epoch 0: loss ") and "weight " in out.stdout
    [fig] = out.figures
    assert fig["at"] == len(out.stdout)  # shown after everything printed
    svg = fig["svg"]
    assert svg.startswith("<?xml") and "<svg" in svg and "</svg>" in svg
    assert "<script" not in svg and "<foreignObject" not in svg
    assert svg.count('id="PathCollection_1"') == 1  # the scatter
    assert 'id="line2d_' in svg  # the fitted line


def test_figures_are_placed_among_printed_lines():
    out = figures("import matplotlib.pyplot as plt\nprint('before')\nplt.plot([1, 2, 3])\nplt.show()\n"
                  "print('between')\nplt.figure(figsize=(3, 2))\nplt.bar([0, 1], [2, 3])\nprint('after')")
    assert out.stdout == "before\nbetween\nafter\n"
    assert [f["at"] for f in out.figures] == [len("before\n"), len(out.stdout)]  # the second: open at the end


def test_show_renders_every_open_figure_once_and_closes_them():
    out = figures("import matplotlib.pyplot as plt\nf1 = plt.figure()\nplt.plot([1])\nf2 = plt.figure()\n"
                  "plt.plot([2])\nplt.show()\nplt.show()\nprint(f1, f2)")
    assert len(out.figures) == 2
    assert out.stdout == "Figure(640x480) Figure(640x480)\n"


def test_subplots_and_axes_methods():
    src = """
import numpy as np
import torch
import matplotlib.pyplot as plt
np.random.seed(0)
fig, axes = plt.subplots(2, 2, figsize=(8, 6))
axes[0, 0].plot(np.arange(5), np.arange(5) ** 2, 'o--', label='square')
axes[0, 0].legend()
axes[0, 1].scatter(torch.randn(20), torch.randn(20), c='C1', s=10, alpha=0.5)
axes[1, 0].hist(np.random.randn(200), bins=20, color='green')
axes[1, 1].imshow(np.eye(4), cmap='viridis')
for ax in axes.flat:
    ax.grid(True)
axes[1, 1].set_title('identity')
axes[0, 0].set_xlabel('x')
axes[0, 0].set_ylabel('y')
axes[0, 0].set_xlim(0, 4)
axes[0, 0].axhline(1.0, color='r')
axes[0, 0].axvline(2, linestyle=':')
axes[0, 0].text(1, 5, 'note')
fig.suptitle('four panels')
fig.tight_layout()
print(fig, axes.shape, axes[0, 0])
"""
    out = figures(src)
    assert out.stdout.startswith("Figure(800x600) (2, 2) Axes(")  # (its position after tight_layout)
    assert len(out.figures) == 1


PRINTED = """
import matplotlib.pyplot as plt
fig, axes = plt.subplots(2, 2, figsize=(8, 6))
print(fig, axes.shape, axes[0, 0])
print(repr(fig), repr(axes[0, 0]), [fig])
f, ax = plt.subplots()
ax.set_title('t')
ax.set_xlabel('x')
print(repr(ax), ax)
g, row = plt.subplots(1, 2)
print(row)
print(repr(row))
print(axes)
print(repr(axes))
print(f"{fig}")
"""


def test_handles_print_as_matplotlib_prints_them():
    r = subprocess.run([sys.executable, "-c", PRINTED], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert ok(PRINTED) == r.stdout


def test_pyplot_state_functions():
    assert len(figures("import matplotlib.pyplot as plt\nplt.hist([1, 2, 2, 3, 5], bins='sturges')").figures) == 1
    out = figures("import matplotlib.pyplot as plt\nplt.subplot(1, 2, 1)\nplt.plot([1, 2], 'r-', label='a')\n"
                  "plt.title('left')\nplt.xlabel('x')\nplt.ylabel('y')\nplt.xlim(0, 1)\nplt.ylim([0, 2])\n"
                  "plt.legend()\nplt.grid()\nplt.subplot(122)\nplt.scatter([1], [2])\nplt.suptitle('s')\n"
                  "plt.tight_layout()\nplt.text(0, 0, 'hi')\nplt.close()\nplt.plot([3])\nplt.close('all')\n"
                  "plt.figure()\nplt.hist([1, 2, 2, 3], 3)\nplt.axhline(0)\nplt.axvline(0)\nplt.show()")
    assert len(out.figures) == 1  # the closed ones are never shown


def test_dollar_signs_are_text_not_mathtext():
    out = figures("import matplotlib.pyplot as plt\nplt.plot([1])\nplt.title('$\\\\frac{1}{2}$ costs $5')")
    assert len(out.figures) == 1


@pytest.mark.parametrize("call, kind", [
    ("plt.title('a' * 201)", "LimitExceeded"),
    ("plt.plot(list(range(100001)))", "LimitExceeded"),
    ("plt.plot([0] * 60000)\nplt.plot([0] * 60000)", "LimitExceeded"),
    ("for i in range(21):\n    plt.figure()", "LimitExceeded"),
    ("plt.plot(torch.ones(3, requires_grad=True))", "RuntimeError"),
    ("plt.plot([1, 2], 'not a format')", "ValueError"),
    ("plt.plot(print)", "TypeError"),
    ("plt.plot([1], picker=print)", "TypeError"),
    ("plt.plot([1], color=print)", "ValueError"),
    ("plt.imshow([[1]], cmap='no such map')", "ValueError"),
    ("plt.figure(figsize=(1000, 1000))", "ValueError"),
    ("plt.figure(dpi=10000)", "ValueError"),
    ("plt.subplots(100, 100)", "ValueError"),
    ("plt.hist([1], bins=10**9)", "ValueError"),
    ("plt.hist([0.0] * 50000 + [1e-300] * 10 + [1e300], bins='fd')", "ValueError"),
    ("plt.hist([0.0] * 50000 + [1e-300] * 10 + [1e300], bins='auto')", "ValueError"),
    ("plt.imshow([1, 2, 3])", "TypeError"),
    ("plt.rcParams", "AttributeError"),
    ("fig, ax = plt.subplots()\nax.figure", "AttributeError"),
    ("fig, ax = plt.subplots()\nax.ax", "AttributeError"),
    ("fig, ax = plt.subplots()\nfig.fig", "AttributeError"),
    ("fig, ax = plt.subplots()\nfig.canvas", "AttributeError"),
    ("fig, ax = plt.subplots()\nfig.gate", "AttributeError"),
    ("fig, ax = plt.subplots()\nax.figure = 1", "AttributeError"),
    ("plt.text(0, 0, 'x', usetex=True)", "TypeError"),
    ("plt.colorbar()", "RuntimeError"),  # no image to show a colorbar for
    ("fig, ax = plt.subplots()\ntype(fig)(1, 2, 3)", "TypeError"),
    ("fig, ax = plt.subplots()\ntype(ax)(ax, fig)", "TypeError"),
    ("fig, axes = plt.subplots(1, 2)\ntype(axes)([1])", "TypeError"),
])
def test_refused(call, kind):
    e = err(f"import torch\nimport matplotlib.pyplot as plt\n{call}")
    assert e["type"] == kind, e


def test_figure_bytes_are_bounded():
    # many points: drawn as an embedded image when the SVG would be too big, else refused
    src = "import numpy as np\nimport matplotlib.pyplot as plt\nnp.random.seed(0)\n" \
          "plt.scatter(np.random.rand(5000), np.random.rand(5000))\nplt.show()"
    out = figures(src, limits=make_limits(max_figure_bytes=200_000))
    assert len(out.figures[0]["svg"]) <= 200_000 and "<image" in out.figures[0]["svg"]
    e = err(src, limits=make_limits(max_figure_bytes=10_000))
    assert e["type"] == "LimitExceeded" and "max_figure_bytes" in e["message"]


def test_programs_without_plots_have_no_figures():
    out = run("print(1)")
    assert out.figures == [] and out.error is None
    assert ok("import matplotlib.pyplot as plt\nprint(type(plt))") == "<class 'module'>\n"
