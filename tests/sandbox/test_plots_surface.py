"""The pyplot surface tutorials use (issue 21 §3): matshow, tick labels, cla/clf, legend(labels), savefig,
matplotlib.colors / ticker / style, and tensors wherever matplotlib takes data. Figures are compared with what
real matplotlib draws for the same calls (the texts of the SVG: tick labels, legend entries, titles)."""
from __future__ import annotations

import io
import os
import re

import matplotlib
import numpy as np
import pytest
from sandbox_testing import err, ok, run

matplotlib.use("Agg")
from matplotlib.backends.backend_svg import FigureCanvasSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PLT = "import numpy as np\nimport torch\nimport matplotlib.pyplot as plt\n"
_TEXT = re.compile(r"<!-- (.*?) -->")


def texts(svg: str) -> list[str]:
    """The texts of a figure in drawing order (matplotlib writes each one as a comment before its glyphs)."""
    return _TEXT.findall(svg)


def figures_of(source: str) -> list[str]:
    out = run(source)
    assert out.error is None, out.error
    return [f["svg"] for f in out.figures]


def reference(build) -> list[str]:
    """The texts real matplotlib draws for `build(fig)` (trusted test code)."""
    fig = Figure()
    build(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "flowgrad"}):
        FigureCanvasSVG(fig).print_svg(buf)
    return texts(buf.getvalue())


# ---------------------------------------------------------------- matshow, ticks, cla, legend
def test_matshow_draws_what_matplotlib_draws():
    [svg] = figures_of(PLT + "fig, ax = plt.subplots()\nim = ax.matshow(np.arange(12).reshape(3, 4))\nprint(im)")
    assert texts(svg) == reference(lambda f: f.add_subplot().matshow(np.arange(12).reshape(3, 4)))


def test_pyplot_matshow_makes_a_figure_shaped_like_the_matrix():
    out = run(PLT + "plt.plot([1])\nplt.matshow(torch.eye(4))\nprint(plt.gcf())")
    assert out.error is None and out.stdout == "Figure(480x480)\n"  # figaspect of a square matrix, 4.8 inches
    assert len(out.figures) == 2


def test_tick_labels_appear_as_matplotlib_draws_them():
    [svg] = figures_of(PLT + "fig, ax = plt.subplots()\nax.plot([1, 2, 3])\nax.set_xticks([0, 1, 2])\n"
                             "ax.set_xticklabels(['zero', 'one', 'two'], rotation=45)\nax.set_yticks([1, 3], ['lo', 'hi'])")

    def build(fig):
        ax = fig.add_subplot()
        ax.plot([1, 2, 3])
        ax.set_xticks([0, 1, 2])
        ax.set_xticklabels(["zero", "one", "two"], rotation=45)
        ax.set_yticks([1, 3], ["lo", "hi"])
    assert texts(svg) == reference(build) == ["zero", "one", "two", "lo", "hi"]


def test_pyplot_xticks_with_labels_and_keywords():
    [svg] = figures_of(PLT + "plt.plot([1, 2])\nplt.xticks([0, 1], ['aa', 'bb'], rotation=90)\nplt.yticks(fontsize=8)")
    assert texts(svg)[:2] == ["aa", "bb"]
    assert "Parameter 'labels'" in err(PLT + "plt.xticks(labels=['a'])")["message"]


def test_cla_and_clf_clear_what_was_drawn():
    [svg] = figures_of(PLT + "fig, ax = plt.subplots()\nax.set_title('gone')\nax.plot([1, 2])\nax.cla()\n"
                             "ax.set_title('kept')")
    assert "gone" not in texts(svg) and "kept" in texts(svg)
    [svg] = figures_of(PLT + "plt.title('gone')\nplt.clf()\nplt.title('fresh')")
    assert "gone" not in texts(svg) and "fresh" in texts(svg)
    [svg] = figures_of(PLT + "plt.title('gone')\nplt.cla()\nplt.plot([1])")
    assert "gone" not in texts(svg)


def test_cla_gives_the_points_back():
    # a loop that redraws one axes each step stays within the figure's points
    ok(PLT + "fig, ax = plt.subplots()\nfor i in range(8):\n    ax.cla()\n    ax.plot(np.zeros(20000))")


def test_legend_from_a_list_of_labels_and_from_handles():
    [svg] = figures_of(PLT + "plt.plot([1, 2])\nplt.plot([2, 3])\nplt.legend(['first', 'second'])")
    assert texts(svg)[-2:] == ["first", "second"]
    [svg] = figures_of(PLT + "l1, = plt.plot([1, 2])\nl2, = plt.plot([2, 3])\nplt.legend([l2, l1], ['b', 'a'])")
    assert texts(svg)[-2:] == ["b", "a"]
    [svg] = figures_of(PLT + "l1, = plt.plot([1, 2])\nb = plt.bar([0], [1])\nplt.legend(handles=[b, l1], "
                             "labels=['bars', 'line'], ncol=2)")
    assert texts(svg)[-2:] == ["bars", "line"]


def test_drawing_calls_return_matplotlib_shaped_values():
    out = ok(PLT + "line, = plt.plot([1, 2], label='loss')\nprint(line)\nprint(plt.bar([1, 2], [3, 4]))\n"
                   "n, bins, patches = plt.hist([1, 2, 2, 3], bins=3)\nprint(n, bins, patches)\n"
                   "print(type(line).__name__)")
    n, bins = np.histogram([1, 2, 2, 3], bins=3)
    assert out == (f"Line2D(loss)\n<BarContainer object of 2 artists>\n{n.astype(float)} {bins} "
                   "<BarContainer object of 3 artists>\nLine2D\n")


# ---------------------------------------------------------------- savefig
def test_savefig_stores_the_figure_once_and_writes_no_file(tmp_path):
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = run(PLT + "plt.plot([1, 2])\nplt.title('saved')\nplt.savefig('loss.png', dpi=150, bbox_inches='tight')\n"
                        "plt.show()\nprint('after')")
    finally:
        os.chdir(here)
    assert out.error is None and out.stdout == "after\n"
    [fig] = out.figures
    assert fig["at"] == 0 and "saved" in texts(fig["svg"])
    assert list(tmp_path.iterdir()) == []


def test_figure_savefig_and_dpi_bounds():
    out = run(PLT + "fig, ax = plt.subplots()\nax.imshow(np.eye(3))\nfig.savefig('a.svg', dpi=50, format='svg')")
    assert out.error is None and len(out.figures) == 1
    e = err(PLT + "plt.plot([1])\nplt.savefig('a.png', dpi=5000)")
    assert e["type"] == "LimitExceeded" and "dpi" in e["message"]


# ---------------------------------------------------------------- tensors where matplotlib takes data
@pytest.mark.parametrize("call", ["plt.imshow(t.reshape(2, 3))", "plt.plot(t)", "plt.plot(t, t)",
                                  "plt.scatter(t, t, c=t)", "plt.hist(t)", "plt.bar(range(6), t)",
                                  "plt.matshow(t.reshape(2, 3))", "plt.xticks(t)", "plt.fill_between(range(6), t)",
                                  "plt.errorbar(range(6), t, yerr=t.abs())", "plt.axhline(t[0])"])
def test_tensors_are_data_and_requires_grad_is_refused_as_torch_refuses(call):
    ok(PLT + f"t = torch.randn(6)\n{call}")
    e = err(PLT + f"t = torch.randn(6, requires_grad=True)\n{call}")
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as real:
        torch.randn(6, requires_grad=True).numpy()
    assert (e["type"], e["message"]) == ("RuntimeError", str(real.value))


def test_text_takes_a_tensor_that_requires_grad_as_matplotlib_does():
    ok(PLT + "t = torch.randn(3, requires_grad=True)\nplt.text(t[0], t[1], 'a')")


# ---------------------------------------------------------------- matplotlib.colors, cm, ticker
def test_colors_functions_match_matplotlib():
    import matplotlib.colors as mc
    out = ok("import matplotlib.colors as mcolors\nfrom matplotlib.colors import to_rgba, to_rgb, to_hex\n"
             "print(to_rgba('red'), to_rgba('C1', 0.5), to_rgb('#00ff00'), to_hex('C0'), mcolors.is_color_like('x1'))")
    assert out == (f"{mc.to_rgba('red')} {mc.to_rgba('C1', 0.5)} {mc.to_rgb('#00ff00')} {mc.to_hex('C0')} "
                   f"{mc.is_color_like('x1')}\n")


def test_listed_colormap_and_norms_draw():
    import matplotlib.colors as mc
    out = ok(PLT + "from matplotlib.colors import ListedColormap, Normalize, LogNorm\n"
                   "cm = ListedColormap(['red', 'green', 'blue'])\nprint(cm(0.5), cm.N)\n"
                   "im = plt.imshow(np.random.rand(4, 4) + 0.1, cmap=cm, norm=LogNorm(vmin=0.1, vmax=1.1))\n"
                   "plt.colorbar(im)\nn = Normalize(0, 2)\nprint(n.vmin, n.vmax)\n"
                   "plt.scatter([1, 2], [3, 4], c=[0.1, 0.9], norm=n, cmap=plt.cm.viridis)")
    assert out == f"{mc.ListedColormap(['red', 'green', 'blue'])(0.5)} 3\n0.0 2.0\n"


def test_colormaps_from_cm_and_get_cmap():
    cm = matplotlib.colormaps
    out = ok(PLT + "from matplotlib import cm\nc = plt.cm.viridis(np.linspace(0, 1, 5))\nprint(c.shape)\n"
                   "print(plt.get_cmap('tab10')(3))\nprint(cm.get_cmap('Blues').name)")
    assert out == f"(5, 4)\n{cm['tab10'](3)}\nBlues\n"


def test_ticker_locators_and_formatters_draw_what_matplotlib_draws():
    from matplotlib.ticker import FormatStrFormatter, MaxNLocator, MultipleLocator, StrMethodFormatter
    [svg] = figures_of(PLT + "from matplotlib.ticker import MaxNLocator, MultipleLocator, FormatStrFormatter\n"
                             "import matplotlib.ticker as ticker\nfig, ax = plt.subplots()\nax.plot(range(10))\n"
                             "ax.xaxis.set_major_locator(MaxNLocator(integer=True))\n"
                             "ax.yaxis.set_major_locator(MultipleLocator(2))\n"
                             "ax.yaxis.set_major_formatter(FormatStrFormatter('%.1f'))\n"
                             "ax.xaxis.set_major_formatter(ticker.StrMethodFormatter('{x:.0f} ep'))")

    def build(fig):
        ax = fig.add_subplot()
        ax.plot(range(10))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MultipleLocator(2))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.1f"))
        ax.xaxis.set_major_formatter(StrMethodFormatter("{x:.0f} ep"))
    assert texts(svg) == reference(build)
    assert "4.0" in texts(svg) and "2 ep" in texts(svg)


def test_func_formatter_is_refused_with_the_reason():
    for src in ("from matplotlib.ticker import FuncFormatter\nf = FuncFormatter(lambda x, p: str(x))",
                "fig, ax = plt.subplots()\nax.xaxis.set_major_formatter(lambda x, p: str(x))"):
        e = err(PLT + src)
        assert e["type"] == "NotImplementedError" and "FormatStrFormatter" in e["message"]


# ---------------------------------------------------------------- the companions tutorials import
def test_matplotlib_imports_and_use():
    out = ok("import matplotlib\nmatplotlib.use('Agg')\nfrom matplotlib import pyplot as plt\n"
             "import matplotlib.pyplot as p2\nimport matplotlib.colors\nimport matplotlib.ticker as mt\n"
             "from matplotlib import colors, ticker, cm\nprint(plt is p2, matplotlib.colors is colors, mt is ticker)\n"
             "plt.plot([1])")
    assert out == "True True True\n"


def test_style_use_changes_this_runs_figures_only():
    before = dict(matplotlib.rcParams)
    [svg] = figures_of(PLT + "plt.style.use('ggplot')\nplt.plot([1, 2])\nprint('ggplot' in plt.style.available)")
    assert "#e5e5e5" in svg.lower()  # ggplot's grey axes background
    assert dict(matplotlib.rcParams) == before  # never matplotlib's global settings
    [plain] = figures_of(PLT + "plt.plot([1, 2])")
    assert "#e5e5e5" not in plain.lower()
    assert err(PLT + "plt.style.use('no-such-style')")["type"] == "OSError"


def test_pyplot_xticks_reads_the_ticks_as_matplotlib_gives_them():
    out = ok(PLT + "plt.plot([1, 2])\nlocs, labels = plt.xticks()\nprint((locs, labels))\nprint(type(labels[0]).__name__)")
    ax = Figure().add_subplot()
    ax.plot([1, 2])
    labels = ax.get_xticklabels()
    assert out == f"{(np.asarray(ax.get_xticks(), dtype=np.float64), labels)}\nText\n"


def _image_data(svg: str) -> str:
    return re.search(r'xlink:href="data:image/png;base64,([^"]+)"', svg).group(1)


@pytest.mark.parametrize("make", ["torch.randint(0, 256, (4, 5, 3), dtype=torch.uint8)", "torch.rand(4, 5, 3)",
                                  "torch.randint(0, 9, (4, 5))"])
def test_imshow_of_a_tensor_draws_the_pixels_matplotlib_draws(make):
    torch = pytest.importorskip("torch")
    out = run(f"import torch\nimport matplotlib.pyplot as plt\ntorch.manual_seed(0)\nimg = {make}\nplt.imshow(img)\n"
              "print(img.dtype)")
    assert out.error is None, out.error
    torch.manual_seed(0)
    img = eval(make, {"torch": torch})  # noqa: S307 - the test's own expression
    assert out.stdout == f"{img.dtype}\n"
    fig = Figure()
    fig.add_subplot().imshow(img)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "flowgrad"}):
        FigureCanvasSVG(fig).print_svg(buf)
    assert _image_data(out.figures[0]["svg"]) == _image_data(buf.getvalue())
