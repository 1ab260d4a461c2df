"""`import matplotlib.pyplot as plt` in a program: real matplotlib (Agg, SVG out) behind a narrow wrapper.

A program never touches a matplotlib object. `plt` is a ModuleProxy of checked functions; figures and
axes are opaque handles (`FigureHandle`, `AxesHandle`, a tuple-like `AxesGrid`) whose methods are the
same checked functions (`attributes.py` hands them out). Every argument is checked before matplotlib
sees it: data are numbers, lists, numpy arrays or tensors (as their arrays; `requires_grad` refused as
torch refuses `numpy()`), text is a short string with `$` escaped (no mathtext, no usetex), styles are
short strings or numbers, keywords come from an allowlist, and nothing callable goes in. Limits are
settings (`SandboxLimits.max_figures`, `max_figure_points`, `max_plot_label_chars`, `max_figure_bytes`).

`plt.show()` renders every open figure to SVG and closes it; figures still open when the run ends are
rendered then (`finish`). Each rendered figure is `{"svg", "at"}`: `at` is the number of characters
(code points) printed before it, so the page can place it among the printed lines (docs/trace.md).
"""

from __future__ import annotations

import functools
import io
import math
import re
import time

import numpy as np

from .errors import limit_error
from .numpy_module import gate_of
from .objects import Builtin, ModuleProxy

_FORMAT = re.compile(r"[bgrcmykw]?[-.:,ov^<>1234sp*hH+xXDd|_]{0,4}[bgrcmykw]?\Z")
_COLOR_NAMES = re.compile(r"(?:#[0-9a-fA-F]{3,8}|[a-zA-Z: ]{1,30}|C\d|0?\.\d+|[01](?:\.0*)?)\Z")
_STYLE_WORDS = re.compile(r"[A-Za-z0-9_ .:+\-|]{0,30}\Z")
FIGSIZE_RANGE = (0.5, 20.0)  # inches: what the page can show
DPI_RANGE = (10, 200)
MAX_GRID = 6  # rows or columns of subplots
RASTER_POINTS = 5_000  # a figure with more points than this draws its data as an embedded image
BIN_RULES = ("sturges", "sqrt", "rice")  # histogram bin rules whose count depends on the number of points only


class FigureHandle:
    """What a program holds for a figure: nothing of matplotlib's is reachable from it."""

    __slots__ = ("gate", "fig", "number", "axes", "current", "open", "size_px", "mappable", "__weakref__")

    def __init__(self, gate, fig, number):
        self.gate = gate
        self.fig = fig
        w, h = fig.get_size_inches()
        self.size_px = (w * fig.dpi, h * fig.dpi)  # (drawing to SVG changes the figure's dpi)
        self.number = number
        self.axes = []
        self.current = None
        self.open = True
        self.mappable = None  # the last image or scatter drawn: what plt.colorbar() shows

    def __repr__(self):
        w, h = self.size_px
        return f"<Figure size {w:g}x{h:g} with {len(self.axes)} Axes>"

    def __str__(self):
        w, h = self.size_px
        return f"Figure({w:g}x{h:g})"


class AxesHandle:
    __slots__ = ("ax", "figure", "__weakref__")

    def __init__(self, ax, figure):
        self.ax = ax
        self.figure = figure

    def __repr__(self):
        return repr(self.ax)  # matplotlib's: `<Axes: title={'center': 't'}, xlabel='x'>` (labels are bounded)

    def __str__(self):
        x, y, w, h = self.ax.get_position(original=True).bounds
        return f"Axes({x:g},{y:g};{w:g}x{h:g})"


class AxesGrid(tuple):
    """`plt.subplots(2, 2)`'s axes: indexable like matplotlib's array (`axes[0, 1]`, `axes[1]`, `axes.flat`)."""

    __slots__ = ()

    def __new__(cls, rows):
        return super().__new__(cls, rows)

    def __getitem__(self, key):
        if type(key) is tuple:
            v = self
            for k in key:
                v = tuple.__getitem__(v, k) if isinstance(v, tuple) else _not_subscriptable(v)
            return v
        return tuple.__getitem__(self, key)

    @property
    def flat(self):
        return [a for row in self for a in (row if isinstance(row, tuple) else (row,))]

    def flatten(self):
        return self.flat

    ravel = flatten

    @property
    def shape(self):
        return (len(self), len(self[0])) if self and isinstance(self[0], tuple) else (len(self),)

    def __repr__(self):
        rows = ",\n       ".join(repr(list(r)) for r in self) if self and isinstance(self[0], tuple) else None
        return f"array([{rows}], dtype=object)" if rows is not None else f"array({list(self)!r}, dtype=object)"

    def __str__(self):  # numpy's str of an object array
        if self and isinstance(self[0], tuple):
            return "[" + "\n ".join("[" + " ".join(map(repr, r)) + "]" for r in self) + "]"
        return "[" + " ".join(map(repr, self)) + "]"


def _not_subscriptable(v):
    raise IndexError("too many indices for array")


class MappableHandle:
    """What imshow / scatter return (matplotlib's AxesImage / PathCollection): a colorbar can be made for it."""

    __slots__ = ("artist", "figure", "__weakref__")
    shown = "matplotlib.artist.Artist"

    def __init__(self, artist, figure):
        self.artist = artist
        self.figure = figure

    def __repr__(self):
        return f"<{self.shown} object at {self.figure.gate.interp.addresses.of(self)}>"


class ImageHandle(MappableHandle):
    __slots__ = ()
    shown = "matplotlib.image.AxesImage"


class CollectionHandle(MappableHandle):
    __slots__ = ()
    shown = "matplotlib.collections.PathCollection"


class ColorbarHandle:
    """What plt.colorbar / fig.colorbar return: `cbar.set_label(...)`."""

    __slots__ = ("cbar", "figure", "__weakref__")

    def __init__(self, cbar, figure):
        self.cbar = cbar
        self.figure = figure

    def __repr__(self):
        return f"<matplotlib.colorbar.Colorbar object at {self.figure.gate.interp.addresses.of(self)}>"


HANDLE_TYPES = (FigureHandle, AxesHandle, AxesGrid, ImageHandle, CollectionHandle, ColorbarHandle)
for _cls, _shown in ((FigureHandle, "Figure"), (AxesHandle, "Axes"), (AxesGrid, "ndarray"), (ImageHandle, "AxesImage"),
                     (CollectionHandle, "PathCollection"), (ColorbarHandle, "Colorbar")):
    _cls.__name__ = _cls.__qualname__ = _shown
CLASS_NAMES = {FigureHandle: "matplotlib.figure.Figure", AxesHandle: "matplotlib.axes._axes.Axes",
               AxesGrid: "numpy.ndarray", ImageHandle: "matplotlib.image.AxesImage",
               CollectionHandle: "matplotlib.collections.PathCollection", ColorbarHandle: "matplotlib.colorbar.Colorbar"}
COLORBAR_METHODS = ("set_label",)
_COLORBAR_KEYWORDS = {"label", "orientation", "shrink", "pad", "fraction", "location", "extend"}

# ---------------------------------------------------------------- what a program may call
AXES_METHODS = """plot scatter bar barh hist imshow axhline axvline legend set_title set_xlabel set_ylabel set_xlim
set_ylim grid text set_xscale set_yscale fill_between errorbar set_aspect""".split()
FIGURE_METHODS = "suptitle tight_layout add_subplot savefig show gca subplots_adjust colorbar".split()
GRID_ATTRIBUTES = "flat flatten ravel shape index count".split()
PYPLOT_FUNCTIONS = """figure subplot subplots plot scatter bar barh hist imshow axhline axvline legend title xlabel
ylabel xlim ylim grid text tight_layout show close suptitle savefig gca gcf xscale yscale fill_between errorbar
axis colorbar""".split()

# keyword -> kind of value it takes
_KEYWORDS = {
    "color": "color", "c": "color_or_data", "label": "text", "linewidth": "number", "lw": "number",
    "linestyle": "style", "ls": "style", "marker": "style", "markersize": "number", "ms": "number",
    "alpha": "number", "s": "number_or_data", "cmap": "style", "bins": "bins", "density": "bool",
    "width": "number_or_data", "height": "number_or_data", "edgecolor": "color", "facecolor": "color",
    "fontsize": "number", "ha": "style", "va": "style", "loc": "style", "aspect": "style",
    "interpolation": "style", "origin": "style", "vmin": "number", "vmax": "number", "rotation": "number",
    "zorder": "number", "which": "style", "axis": "style", "xmin": "number", "xmax": "number", "ymin": "number",
    "ymax": "number", "bottom": "number_or_data", "left": "number_or_data", "align": "style",
    "histtype": "style", "cumulative": "bool", "range": "pair", "markerfacecolor": "color",
    "markeredgecolor": "color", "yerr": "number_or_data", "xerr": "number_or_data", "capsize": "number",
    "fmt": "format", "ncol": "number", "frameon": "bool", "title": "text", "shadow": "bool",
    "horizontalalignment": "style", "verticalalignment": "style", "fontweight": "style", "visible": "bool",
    "hspace": "number", "wspace": "number", "pad": "number", "right": "number", "top": "number",
    "x": "number", "y": "number", "stacked": "bool", "orientation": "style", "extent": "data",
    "edgecolors": "color", "linewidths": "number", "step": "style", "where": "data", "interpolate": "bool",
    # colorbar (a colorbar's `pad` and `orientation` are above)
    "shrink": "number", "fraction": "number", "location": "style", "extend": "style",
}
_FIGURE_KEYWORDS = {"figsize", "dpi", "sharex", "sharey", "num", "facecolor"}


class PlotGate:
    """One run's plots: the figures, the current figure and axes, and the rendered SVGs."""

    def __init__(self, interp):
        self.interp = interp
        limits = interp.limits
        self.max_figures = limits.max_figures
        self.max_points = limits.max_figure_points
        self.max_label = limits.max_plot_label_chars
        self.max_bytes = limits.max_figure_bytes
        self.figures: list[FigureHandle] = []  # made this run (open or not)
        self.current: FigureHandle | None = None
        self.points: dict[int, int] = {}
        self.rendered: list[dict] = []
        self.rendered_bytes = 0
        started, wall_started = interp.clock(), time.monotonic()
        self.mpl = _matplotlib()
        if interp.deadline is not None:  # importing matplotlib (when the worker did not preload it) is not the program's time
            interp.deadline += interp.clock() - started
            interp.wall_deadline += time.monotonic() - wall_started

    # ------------------------------------------------------------ checks
    def text(self, v, what="label"):
        if type(v) is not str:
            if isinstance(v, (int, float)) or isinstance(v, np.generic):
                v = str(v)
            else:
                v = self.interp.to_str(v)
        if len(v) > self.max_label:
            raise limit_error(f"a plot {what} has {len(v):,} characters", "max_plot_label_chars", self.max_label)
        return v.replace("$", r"\$")  # NOTE: no mathtext: its parser runs on program text

    def number(self, v, what):
        if type(v) is bool or not isinstance(v, (int, float, np.integer, np.floating)):
            if isinstance(v, self.interp.B.Tensor) and v.numel() == 1:
                return float(v.detach().item()) if v.requires_grad else float(v.item())
            raise TypeError(f"{what} must be a number, not '{self.interp.type_name(v)}'")
        v = float(v)
        if not math.isfinite(v) and what not in ("xmin", "xmax", "ymin", "ymax"):
            raise ValueError(f"{what} must be finite")
        return v

    def data(self, v, fig, what="data", count=True):
        """Numbers, a list, an array or a tensor, as a float array, counted against the figure's points
        (unless the caller counts: x and y of the same points count once)."""
        gate = gate_of(self.interp)
        self.interp.check_data(v)
        arr = np.asarray(gate.arg(v))
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"plot {what} must be numbers")
        arr = arr.astype(np.float64)
        if count:
            self.count_points(fig, int(arr.size))
        return arr

    def count_points(self, fig, n):
        total = self.points.get(id(fig), 0) + n
        if total > self.max_points:
            raise limit_error(f"a figure would draw {total:,} points", "max_figure_points", self.max_points)
        self.points[id(fig)] = total

    def color(self, v):
        if type(v) is str:
            if not _COLOR_NAMES.match(v):
                raise ValueError(f"{v[:40]!r} is not a color flowgrad plots accept")
            return v
        if isinstance(v, (tuple, list)) and len(v) in (3, 4):
            return tuple(min(max(self.number(x, "color"), 0.0), 1.0) for x in v)
        raise ValueError("a color is a name ('red', 'C0', '#ff0000') or 3-4 numbers between 0 and 1")

    def style(self, v, what):
        if type(v) is not str or not _STYLE_WORDS.match(v):
            raise ValueError(f"{what} must be a short name")
        return v

    def keywords(self, kwargs, fig, allowed=None):
        out = {}
        for k, v in kwargs.items():
            kind = _KEYWORDS.get(k)
            if kind is None or (allowed is not None and k not in allowed):
                raise TypeError(f"got an unexpected keyword argument '{k}' (not available in flowgrad plots)")
            if v is None:
                out[k] = None
            elif kind == "color":
                out[k] = self.color(v)
            elif kind == "text":
                out[k] = self.text(v)
            elif kind == "number":
                out[k] = self.number(v, k)
            elif kind == "bool":
                out[k] = bool(v)
            elif kind == "style":
                out[k] = self.style(v, k)
            elif kind == "format":
                out[k] = self.fmt(v)
            elif kind == "pair":
                out[k] = tuple(self.number(x, k) for x in self.interp.take(v))[:2]
            elif kind == "bins":
                if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                    if not 1 <= int(v) <= self.max_points:
                        raise ValueError("bins must be between 1 and max_figure_points")
                    self.count_points(fig, int(v))
                    out[k] = int(v)
                elif type(v) is str:
                    if v not in BIN_RULES:  # NOTE: 'fd' and 'auto' make range / (tiny IQR) bins: gigabytes
                        raise ValueError(f"bins may be a number, edges or one of {', '.join(BIN_RULES)}")
                    out[k] = v
                else:
                    out[k] = self.data(v, fig, k)
            elif kind == "data":
                out[k] = self.data(v, fig, k)
            elif kind in ("color_or_data", "number_or_data"):
                if type(v) is str and kind == "color_or_data":
                    out[k] = self.color(v)
                elif isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
                    out[k] = self.number(v, k)
                else:
                    out[k] = self.data(v, fig, k)
        if "cmap" in out and out["cmap"] not in self.mpl.colormaps:
            raise ValueError(f"{out['cmap']!r} is not a known colormap")
        return out

    def fmt(self, v):
        if type(v) is not str or not _FORMAT.match(v):
            raise ValueError(f"{str(v)[:20]!r} is not a format string flowgrad plots accept (such as 'r-', 'o', 'b--')")
        return v

    # ------------------------------------------------------------ figures and axes
    def figure(self, num=None, figsize=None, dpi=None, facecolor=None, **kwargs):
        if kwargs:
            raise TypeError(f"figure() got an unexpected keyword argument '{next(iter(kwargs))}' (not available in "
                            "flowgrad plots)")
        if num is not None:  # an open figure by number
            for f in self.figures:
                if f.open and f.number == num:
                    self.current = f
                    return f
        if sum(1 for _ in self.figures) >= self.max_figures:
            raise limit_error(f"this run made more than {self.max_figures} figures", "max_figures", self.max_figures)
        size = (6.4, 4.8)
        if figsize is not None:
            size = tuple(self.number(x, "figsize") for x in self.interp.take(figsize))
            if len(size) != 2 or not all(FIGSIZE_RANGE[0] <= s <= FIGSIZE_RANGE[1] for s in size):
                raise ValueError(f"figsize must be two numbers between {FIGSIZE_RANGE[0]} and {FIGSIZE_RANGE[1]} inches")
        d = 100.0
        if dpi is not None:
            d = self.number(dpi, "dpi")
            if not DPI_RANGE[0] <= d <= DPI_RANGE[1]:
                raise ValueError(f"dpi must be between {DPI_RANGE[0]} and {DPI_RANGE[1]}")
        fig = self.mpl.Figure(figsize=size, dpi=d)
        if facecolor is not None:
            fig.set_facecolor(self.color(facecolor))
        number = max((f.number for f in self.figures), default=0) + 1
        handle = FigureHandle(self, fig, number if type(num) is not int else num)
        self.figures.append(handle)
        self.current = handle
        return handle

    def gcf(self):
        if self.current is None or not self.current.open:
            return self.figure()
        return self.current

    def gca(self, fig=None):
        fig = fig or self.gcf()
        if fig.current is None:
            return self.add_subplot(fig, 1, 1, 1)
        return fig.current

    def add_subplot(self, fig, nrows=1, ncols=1, index=1, **kwargs):
        if type(nrows) is int and ncols == 1 and index == 1 and 100 < nrows < 1000:  # subplot(221)
            nrows, ncols, index = nrows // 100, nrows // 10 % 10, nrows % 10
        for v in (nrows, ncols, index):
            if type(v) is not int or not 1 <= v <= MAX_GRID * MAX_GRID:
                raise ValueError("subplot grid numbers must be small positive integers")
        if nrows > MAX_GRID or ncols > MAX_GRID or index > nrows * ncols:
            raise ValueError(f"num must be an integer with 1 <= num <= {nrows * ncols}, not {index}")
        self.keywords(kwargs, fig, allowed=set())
        ax = fig.fig.add_subplot(nrows, ncols, index)
        for h in fig.axes:  # matplotlib hands back the axes already at that position
            if h.ax is ax:
                fig.current = h
                return h
        handle = AxesHandle(ax, fig)
        fig.axes.append(handle)
        fig.current = handle
        return handle

    def subplots(self, nrows=1, ncols=1, figsize=None, dpi=None, sharex=False, sharey=False, squeeze=True, **kwargs):
        if kwargs:
            raise TypeError(f"subplots() got an unexpected keyword argument '{next(iter(kwargs))}' (not available "
                            "in flowgrad plots)")
        for v in (nrows, ncols):
            if type(v) is not int or not 1 <= v <= MAX_GRID:
                raise ValueError(f"subplots() takes 1 to {MAX_GRID} rows and columns")
        fig = self.figure(figsize=figsize, dpi=dpi)
        axs = fig.fig.subplots(nrows, ncols, sharex=bool(sharex), sharey=bool(sharey), squeeze=False)
        rows = []
        for r in range(nrows):
            row = []
            for c in range(ncols):
                h = AxesHandle(axs[r, c], fig)
                fig.axes.append(h)
                row.append(h)
            rows.append(row)
        fig.current = rows[0][0]
        if squeeze and nrows == 1 and ncols == 1:
            return fig, rows[0][0]
        if squeeze and (nrows == 1 or ncols == 1):
            return fig, AxesGrid(h for row in rows for h in row)
        return fig, AxesGrid(AxesGrid(row) for row in rows)

    # ------------------------------------------------------------ drawing (on an AxesHandle)
    def _xy(self, args, fig, what):
        """plot's positional arguments: y | x, y | x, y, fmt, repeated."""
        groups, i = [], 0
        args = list(args)
        while i < len(args):
            chunk = [args[i]]
            i += 1
            if i < len(args) and type(args[i]) is not str:
                chunk.append(args[i])
                i += 1
            fmt = None
            if i < len(args) and type(args[i]) is str:
                fmt = self.fmt(args[i])
                i += 1
            data = [self.data(a, fig, what, count=False) for a in chunk]
            self.count_points(fig, max(int(d.size) for d in data))
            groups.extend(data)
            if fmt is not None:
                groups.append(fmt)
            if len(groups) > 30:
                raise ValueError("too many lines in one plot() call")
        return groups

    def draw(self, handle, name, args, kwargs):
        self.interp.check_time()
        fig = handle.figure
        ax = handle.ax
        if not fig.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        kw = self.keywords(kwargs, fig)
        if name == "plot":
            ax.plot(*self._xy(args, fig, "data"), **kw)
        elif name in ("scatter", "bar", "barh", "fill_between", "errorbar"):
            if len(args) > 3:
                raise TypeError(f"{name}() takes at most 3 positional arguments in flowgrad plots")
            data = [self.data(a, fig, count=False) if type(a) is not str else self.fmt(a) for a in args]
            self.count_points(fig, max([int(d.size) for d in data if type(d) is not str] or [0]))
            artist = getattr(ax, name)(*data, **kw)
            if name == "scatter":  # a mappable: c= values can have a colorbar
                fig.mappable = CollectionHandle(artist, fig)
                return fig.mappable
        elif name == "hist":
            if len(args) > 2:
                raise TypeError("hist() takes at most 2 positional arguments in flowgrad plots")
            x = self.data(args[0], fig) if args else None
            if len(args) == 2:
                kw["bins"] = self.keywords({"bins": args[1]}, fig)["bins"]
            ax.hist(x, **kw)
        elif name == "imshow":
            img = self.data(args[0], fig, "image") if args else None
            if img is None or img.ndim not in (2, 3):
                raise TypeError("imshow() takes a 2-D array (or 3-D: rows, columns, RGB(A))")
            fig.mappable = ImageHandle(ax.imshow(img, **kw), fig)
            return fig.mappable
        elif name in ("axhline", "axvline"):
            pos = [self.number(a, name) for a in args[:3]]
            getattr(ax, name)(*pos, **kw)
        elif name == "text":
            if len(args) != 3:
                raise TypeError("text() takes x, y and a string")
            ax.text(self.number(args[0], "x"), self.number(args[1], "y"), self.text(args[2], "text"), **kw)
        elif name == "legend":
            if args:
                raise TypeError("legend() in flowgrad plots takes keyword arguments only (labels come from label=)")
            ax.legend(**kw)
        elif name in ("set_title", "set_xlabel", "set_ylabel"):
            if len(args) != 1:
                raise TypeError(f"{name}() takes one string")
            getattr(ax, name)(self.text(args[0], "title"), **kw)
        elif name in ("set_xlim", "set_ylim"):
            vals = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
            getattr(ax, name)(*[None if v is None else self.number(v, name) for v in vals][:2], **kw)
        elif name in ("set_xscale", "set_yscale"):
            if len(args) != 1 or args[0] not in ("linear", "log", "symlog", "logit"):
                raise ValueError("scale must be 'linear', 'log', 'symlog' or 'logit'")
            getattr(ax, name)(args[0])
        elif name == "set_aspect":
            if len(args) != 1:
                raise TypeError("set_aspect() takes one value")
            ax.set_aspect(args[0] if args[0] in ("equal", "auto") else self.number(args[0], "aspect"))
        elif name == "grid":
            if len(args) > 1:
                raise TypeError("grid() takes at most one positional argument")
            ax.grid(*[bool(a) for a in args], **kw)
        else:  # pragma: no cover - every name of AXES_METHODS is handled above
            raise AssertionError(name)
        return None

    def colorbar(self, fig, mappable=None, ax=None, **kwargs):
        """`plt.colorbar()` / `fig.colorbar(im, ax=ax)`: matplotlib's colorbar beside the axes of the mappable."""
        self.interp.check_time()
        if mappable is None:
            mappable = fig.mappable if fig is not None else None
            if mappable is None:
                raise RuntimeError("No mappable was found to use for colorbar creation. First define a mappable such "
                                   "as an image (with imshow) or a contour set (with contourf).")
        if not isinstance(mappable, MappableHandle):
            raise TypeError(f"colorbar() takes what imshow() or scatter() returned, not "
                            f"'{self.interp.type_name(mappable)}'")
        fig = fig or mappable.figure
        if mappable.figure is not fig:
            raise ValueError("the image belongs to another figure")
        if not fig.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        if ax is not None:
            axes = list(ax) if isinstance(ax, (AxesGrid, list, tuple)) else [ax]
            flat = [a for x in axes for a in (x if isinstance(x, (AxesGrid, tuple)) else (x,))]
            if not flat or not all(type(a) is AxesHandle and a.figure is fig for a in flat):
                raise TypeError("colorbar(ax=...) takes axes of the same figure")
            ax = flat[0].ax if len(flat) == 1 else [a.ax for a in flat]
        kw = self.keywords(kwargs, fig, allowed=_COLORBAR_KEYWORDS)
        return ColorbarHandle(fig.fig.colorbar(mappable.artist, ax=ax, **kw), fig)

    def colorbar_method(self, handle, name, args, kwargs):
        if not handle.figure.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        if name == "set_label":
            if len(args) != 1:
                raise TypeError("set_label() takes one string")
            handle.cbar.set_label(self.text(args[0], "label"), **self.keywords(kwargs, handle.figure, {"fontsize"}))
        return None

    # ------------------------------------------------------------ output
    def show(self, *args, **kwargs):
        for f in self.figures:
            if f.open:
                self.render(f)

    def close(self, which=None):
        if which is None:
            targets = [self.current] if self.current is not None else []
        elif which == "all":
            targets = list(self.figures)
        elif type(which) is FigureHandle:
            targets = [which]
        elif type(which) is int:
            targets = [f for f in self.figures if f.number == which]
        else:
            raise TypeError("close() takes a figure, its number, 'all' or nothing")
        for f in targets:
            f.open = False
            if self.current is f:
                self.current = None

    def render(self, handle):
        """The figure as SVG, placed after what has been printed so far; then closed."""
        self.interp.check_time()
        handle.open = False
        if self.current is handle:
            self.current = None
        many = self.points.get(id(handle), 0) > RASTER_POINTS
        if many:  # drawn as shapes, 100,000 points are 10 MB of SVG and seconds of drawing
            self._rasterize(handle.fig)
        svg = self._svg(handle.fig)
        room = self.max_bytes - self.rendered_bytes
        if len(svg) > room and not many:  # still too big: the data as an embedded image instead of SVG shapes
            self._rasterize(handle.fig)
            svg = self._svg(handle.fig)
        if len(svg) > room:
            raise limit_error(f"this run's figures would take {self.rendered_bytes + len(svg):,} bytes of SVG",
                              "max_figure_bytes", self.max_bytes)
        self.rendered_bytes += len(svg)
        self.interp.flush_output()  # text held back near the output limit comes before the figure
        at = sum(len(s) for s in self.interp.out)
        self.rendered.append({"svg": svg, "at": at})
        if self.interp.on_figure is not None:  # a stream sends it now, after the text printed before it
            self.interp.on_figure(self.rendered[-1])
        handle.fig.clear()  # the figure's memory goes now, not at the end of the run

    @staticmethod
    def _rasterize(fig):
        for ax in fig.axes:
            for artist in (*ax.collections, *ax.lines, *ax.patches, *ax.images):
                artist.set_rasterized(True)

    def _svg(self, fig):
        buf = io.StringIO()
        with self.mpl.rc_context({"text.usetex": False, "svg.fonttype": "path", "svg.hashsalt": "flowgrad"}):
            self.mpl.FigureCanvasSVG(fig).print_svg(buf, metadata={"Date": None, "Creator": None})
        return buf.getvalue()

    def finish(self):
        """At the end of a run: the figures still open, in the order they were made."""
        for f in self.figures:
            if f.open:
                self.render(f)
        return self.rendered


class _Matplotlib:
    __slots__ = ("Figure", "FigureCanvasSVG", "rc_context", "colormaps")


@functools.cache
def _matplotlib():
    """matplotlib's pieces, imported on first use (the worker preloads them: `preload()`)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    m = _Matplotlib()
    m.Figure, m.FigureCanvasSVG, m.rc_context = Figure, FigureCanvasSVG, matplotlib.rc_context
    m.colormaps = frozenset(matplotlib.colormaps)
    return m


def preload():
    """Import matplotlib and draw one small figure (fonts, caches), so a run's first plot is fast."""
    mpl = _matplotlib()
    fig = mpl.Figure(figsize=(2, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], "r-", label="a")
    ax.scatter([0.5], [0.5])
    ax.legend()
    ax.set_title("t")
    mpl.FigureCanvasSVG(fig).print_svg(io.StringIO())


# ---------------------------------------------------------------- the module a program imports
def gate_of_plots(interp) -> PlotGate:
    gate = interp.__dict__.get("plot_gate")
    if gate is None:
        gate = interp.plot_gate = PlotGate(interp)
    return gate


def _savefig(*args, **kwargs):
    raise PermissionError("savefig() is not available in flowgrad programs (no files); plt.show() puts the figure "
                          "in the output")


def plots_module(interp) -> ModuleProxy:
    g = gate_of_plots(interp)

    def on_axes(name):
        def call(*args, **kwargs):
            return g.draw(g.gca(), name, args, kwargs)
        return call

    def title(label, **kwargs):
        return g.draw(g.gca(), "set_title", (label,), kwargs)

    def xlabel(label, **kwargs):
        return g.draw(g.gca(), "set_xlabel", (label,), kwargs)

    def ylabel(label, **kwargs):
        return g.draw(g.gca(), "set_ylabel", (label,), kwargs)

    def xlim(*args, **kwargs):
        return g.draw(g.gca(), "set_xlim", args, kwargs) if args or kwargs else tuple(g.gca().ax.get_xlim())

    def ylim(*args, **kwargs):
        return g.draw(g.gca(), "set_ylim", args, kwargs) if args or kwargs else tuple(g.gca().ax.get_ylim())

    def xscale(value):
        return g.draw(g.gca(), "set_xscale", (value,), {})

    def yscale(value):
        return g.draw(g.gca(), "set_yscale", (value,), {})

    def subplot(*args, **kwargs):
        return g.add_subplot(g.gcf(), *args, **kwargs)

    def suptitle(text, **kwargs):
        return figure_method(g.gcf(), "suptitle")(text, **kwargs)

    def tight_layout(**kwargs):
        return figure_method(g.gcf(), "tight_layout")(**kwargs)

    def axis(value=None):
        if value not in ("off", "on", "equal", "tight", "square", None):
            raise ValueError("axis() takes 'off', 'on', 'equal', 'tight' or 'square'")
        if value is not None:
            g.gca().ax.axis(value)

    def colorbar(mappable=None, **kwargs):
        return g.colorbar(None if mappable is not None else g.gcf(), mappable, **kwargs)

    functions = {
        "figure": g.figure, "subplot": subplot, "subplots": g.subplots, "gca": lambda: g.gca(), "gcf": g.gcf,
        "show": g.show, "close": g.close, "savefig": _savefig, "colorbar": colorbar,
        "title": title, "xlabel": xlabel, "ylabel": ylabel, "xlim": xlim, "ylim": ylim, "xscale": xscale,
        "yscale": yscale, "suptitle": suptitle, "tight_layout": tight_layout, "axis": axis,
        **{n: on_axes(n) for n in ("plot", "scatter", "bar", "barh", "hist", "imshow", "axhline", "axvline",
                                   "legend", "grid", "text", "fill_between", "errorbar")},
    }
    assert set(functions) == set(PYPLOT_FUNCTIONS), set(functions) ^ set(PYPLOT_FUNCTIONS)
    return ModuleProxy("matplotlib.pyplot", {n: Builtin(n, f, interp) for n, f in functions.items()})


def colorbar_method(handle, name):
    """`cbar.set_label(...)`: the checked call on that colorbar."""
    return lambda *args, **kwargs: handle.figure.gate.colorbar_method(handle, name, args, kwargs)


def axes_method(handle, name):
    """`ax.plot(...)`: the checked call on that axes."""
    return lambda *args, **kwargs: handle.figure.gate.draw(handle, name, args, kwargs)


def figure_method(handle, name):
    """`fig.suptitle(...)`, `fig.tight_layout()`, `fig.add_subplot(...)`: the checked call on that figure."""
    g = handle.gate

    def call(*args, **kwargs):
        if name == "savefig":
            _savefig()
        if name == "show":
            if handle.open:
                g.render(handle)
            return None
        if name == "gca":
            return g.gca(handle)
        if name == "add_subplot":
            return g.add_subplot(handle, *args, **kwargs)
        if name == "colorbar":
            return g.colorbar(handle, *args, **kwargs)
        if not handle.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        if name == "suptitle":
            if len(args) != 1:
                raise TypeError("suptitle() takes one string")
            handle.fig.suptitle(g.text(args[0], "title"), **g.keywords(kwargs, handle, {"fontsize", "fontweight"}))
        elif name == "tight_layout":
            handle.fig.tight_layout(**g.keywords(kwargs, handle, {"pad"}))
        elif name == "subplots_adjust":
            handle.fig.subplots_adjust(**g.keywords(kwargs, handle, {"hspace", "wspace", "left", "right", "top",
                                                                     "bottom"}))
        return None
    return call


def module_for(interp, name):
    """`import matplotlib.pyplot` (name 'matplotlib.pyplot') or `import matplotlib` (name 'matplotlib')."""
    pyplot = interp.__dict__.get("_pyplot")
    if pyplot is None:
        pyplot = interp._pyplot = plots_module(interp)
    if name == "matplotlib.pyplot":
        return pyplot
    return ModuleProxy("matplotlib", {"pyplot": pyplot})

