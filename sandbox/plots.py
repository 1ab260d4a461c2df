"""`import matplotlib.pyplot as plt` in a program: real matplotlib (Agg, SVG out) behind a narrow wrapper.

A program never touches a matplotlib object. `plt` is a ModuleProxy of checked functions; figures and
axes are opaque handles (`FigureHandle`, `AxesHandle`, a tuple-like `AxesGrid`) whose methods are the
same checked functions (`attributes.py` hands them out). Every argument is checked before matplotlib
sees it: data are numbers, lists, numpy arrays or tensors (as their arrays; `requires_grad` refused as
torch refuses `numpy()`), text is a short string with `$` escaped (no mathtext, no usetex), styles are
short strings or numbers, keywords come from an allowlist, and nothing callable goes in. Limits are
settings (`SandboxLimits.max_figures`, `max_figure_points`, `max_plot_label_chars`, `max_figure_bytes`).

`plt.show()` (and `savefig`) renders open figures to SVG and closes them; figures still open when the run ends are
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

from . import plots_modules as companions
from .errors import limit_error
from .numpy_module import gate_of
from .objects import Builtin, ModuleProxy
from .plots_axes import DPI_RANGE, AxesCalls
from .plots_handles import (
    CLASS_NAMES,
    HANDLE_TYPES,
    ArtistHandle,
    AxesGrid,
    AxesHandle,
    AxisHandle,
    CollectionHandle,
    ColorbarHandle,
    ColormapHandle,
    ContainerHandle,
    ContourHandle,
    FigureHandle,
    FormatterHandle,
    ImageHandle,
    LineHandle,
    LocatorHandle,
    MappableHandle,
    NormHandle,
    TextHandle,
)

__all__ = ["CLASS_NAMES", "HANDLE_TYPES", "ATTRIBUTE_RULES", "PlotGate", "module_for", "preload"]

_FORMAT = re.compile(r"[bgrcmykw]?[-.:,ov^<>1234sp*hH+xXDd|_]{0,4}[bgrcmykw]?\Z")
_COLOR_NAMES = re.compile(r"(?:#[0-9a-fA-F]{3,8}|[a-zA-Z: ]{1,30}|C\d|0?\.\d+|[01](?:\.0*)?)\Z")
_STYLE_WORDS = re.compile(r"[A-Za-z0-9_ .:+\-|]{0,30}\Z")
FIGSIZE_RANGE = (0.5, 20.0)  # inches: what the page can show
MAX_GRID = 6  # rows or columns of subplots
RASTER_POINTS = 5_000  # a figure with more points than this draws its data as an embedded image
BIN_RULES = ("sturges", "sqrt", "rice")  # histogram bin rules whose count depends on the number of points only
MAX_ARTISTS = 2_000  # texts, legend entries, ticks' worth of work, lines, datasets and bars (weighted) of one figure
# matplotlib spends ~2-3 ms making one line or one bar (a text ~0.2 ms): plot(np.zeros((1, 100000))) is 100,000
# Line2D objects, hist(x, bins=10000) 10,000 Rectangles; bars weigh half so a 400-bin histogram fits
ARTIST_WEIGHTS = {"lines": 10, "histogram datasets": 10, "bars": 5, "ticks": 5}
MAX_LEGEND_COLUMNS = 50
MAX_TICKS = companions.MAX_TICKS


COLORBAR_METHODS = ("set_label",)
_COLORBAR_KEYWORDS = {"label", "orientation", "shrink", "pad", "fraction", "location", "extend"}

# ---------------------------------------------------------------- what a program may call
AXES_METHODS = """plot scatter bar barh hist imshow axhline axvline legend set_title set_xlabel set_ylabel set_xlim
set_ylim grid text set_xscale set_yscale fill_between errorbar set_aspect matshow set_xticks set_yticks set_xticklabels
set_yticklabels cla clear contour contourf""".split()
AXIS_METHODS = "set_major_locator set_minor_locator set_major_formatter set_minor_formatter".split()
FIGURE_METHODS = "suptitle tight_layout add_subplot savefig show gca subplots_adjust colorbar clf clear".split()
GRID_ATTRIBUTES = "flat flatten ravel shape index count".split()
PYPLOT_FUNCTIONS = """figure subplot subplots plot scatter bar barh hist imshow axhline axvline legend title xlabel
ylabel xlim ylim grid text tight_layout show close suptitle savefig gca gcf xscale yscale fill_between errorbar
axis colorbar matshow xticks yticks cla clf get_cmap contour contourf switch_backend get_backend ion ioff
isinteractive""".split()  # and the modules style, cm

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
    "edgecolors": "color", "levels": "levels", "linewidths": "number", "step": "style", "where": "data", "interpolate": "bool",
    # colorbar (a colorbar's `pad` and `orientation` are above)
    "shrink": "number", "fraction": "number", "location": "style", "extend": "style",
    "norm": "norm", "ncols": "number", "labelsize": "number", "fignum": "number",
}
_FIGURE_KEYWORDS = {"figsize", "dpi", "sharex", "sharey", "num", "facecolor"}


class PlotGate(AxesCalls):
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
        self.axes_points: dict[int, int] = {}  # per axes, so cla() gives its points back
        self.artists: dict[int, int] = {}
        self.axes_artists: dict[int, int] = {}
        self.drawing_on: AxesHandle | None = None
        self.rc: dict = {}  # plt.style.use(...): applied around this run's drawing only
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
        if what != "image" or arr.dtype.kind == "b":  # NOTE: imshow reads integer RGB as 0-255, floats as 0-1
            arr = arr.astype(np.float64)
        if count:
            self.count_points(fig, int(arr.size))
        return arr

    def count_points(self, fig, n):
        total = self.points.get(id(fig), 0) + n
        if total > self.max_points:
            raise limit_error(f"a figure would draw {total:,} points", "max_figure_points", self.max_points)
        self.points[id(fig)] = total
        if self.drawing_on is not None:
            key = id(self.drawing_on)
            self.axes_points[key] = self.axes_points.get(key, 0) + n

    def count_artists(self, fig, n, what):
        """Lines, datasets, bars, texts, legend entries: counted (weighted by ARTIST_WEIGHTS) before matplotlib
        makes (and later draws) each."""
        units = n * ARTIST_WEIGHTS.get(what, 1)
        total = self.artists.get(id(fig), 0) + units
        if total > MAX_ARTISTS:
            raise limit_error(f"a figure would hold {n:,} more {what} ({total:,} artists; a line or a histogram "
                              "dataset counts 10, a bar or a tick 5)", None, f"{MAX_ARTISTS:,} artists per figure")
        self.artists[id(fig)] = total
        if self.drawing_on is not None:
            key = id(self.drawing_on)
            self.axes_artists[key] = self.axes_artists.get(key, 0) + units

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
            elif k == "cmap" and type(v) is ColormapHandle:
                out[k] = v.cmap
            elif kind == "norm":
                if type(v) is not NormHandle:
                    raise TypeError("norm must be a matplotlib.colors.Normalize or LogNorm")
                out[k] = v.make()
            elif kind == "color":
                out[k] = self.color(v)
            elif kind == "text":
                out[k] = self.text(v)
            elif kind == "number":
                out[k] = self.number(v, k)
            elif kind == "bool":
                out[k] = bool(v)
            elif kind == "levels":  # contour levels: a count or values, checked by AxesCalls.contour
                out[k] = v
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
        if type(out.get("cmap")) is str and out["cmap"] not in self.mpl.colormaps:
            raise ValueError(f"{out['cmap']!r} is not a known colormap")
        for k in ("ncol", "ncols"):  # NOTE: legend(ncol=30000000) loops over every column
            if out.get(k) is not None:
                if out[k] != int(out[k]) or not 1 <= out[k] <= MAX_LEGEND_COLUMNS:
                    raise limit_error(f"a legend of {out[k]:,g} columns", None, MAX_LEGEND_COLUMNS)
                out[k] = int(out[k])
        return out

    def fmt(self, v):
        if type(v) is not str or not _FORMAT.match(v):
            raise ValueError(f"{str(v)[:20]!r} is not a format string flowgrad plots accept (such as 'r-', 'o', 'b--')")
        return v

    # ------------------------------------------------------------ figures and axes
    def figure(self, *args, **kwargs):
        with self.mpl.rc_context(self.rc):  # a style's figure and axes colours are read when they are made
            return self._figure(*args, **kwargs)

    def _figure(self, num=None, figsize=None, dpi=None, facecolor=None, **kwargs):
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

    def add_subplot(self, *args, **kwargs):
        with self.mpl.rc_context(self.rc):  # a style's figure and axes colours are read when they are made
            return self._add_subplot(*args, **kwargs)

    def _add_subplot(self, fig, nrows=1, ncols=1, index=1, **kwargs):
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

    def subplots(self, *args, **kwargs):
        with self.mpl.rc_context(self.rc):  # a style's figure and axes colours are read when they are made
            return self._subplots(*args, **kwargs)

    def _subplots(self, nrows=1, ncols=1, figsize=None, dpi=None, sharex=False, sharey=False, squeeze=True, **kwargs):
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
            if any(d.ndim > 2 for d in data):
                raise ValueError("x and y can be no greater than 2D, but have shapes "
                                 + " and ".join(str(d.shape) for d in data))
            # NOTE: a 2-D y is one line per column: (1, 100000) is 100,000 lines of one point each
            self.count_artists(fig, max(d.shape[1] if d.ndim == 2 else 1 for d in data), "lines")
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
        if not fig.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        self.drawing_on = handle
        try:
            with self.mpl.rc_context(self.rc):
                return self._draw(handle, name, args, kwargs)
        finally:
            self.drawing_on = None

    def _draw(self, handle, name, args, kwargs):
        fig = handle.figure
        ax = handle.ax
        if name in ("set_xticklabels", "set_yticklabels"):
            return self.tick_labels(handle, name[4], args, kwargs)
        if name in ("set_xticks", "set_yticks"):
            return self.ticks(handle, name[4], args, kwargs)
        if name in ("cla", "clear"):
            if args or kwargs:
                raise TypeError(f"{name}() takes no arguments")
            return self.clear_axes(handle)
        if name == "legend":
            return self.legend(handle, args, kwargs)
        kw = self.keywords(kwargs, fig)
        if name == "plot":
            return [LineHandle(line, fig) for line in ax.plot(*self._xy(args, fig, "data"), **kw)]
        elif name in ("scatter", "bar", "barh", "fill_between", "errorbar"):
            if len(args) > 3:
                raise TypeError(f"{name}() takes at most 3 positional arguments in flowgrad plots")
            data = [self.data(a, fig, count=False) if type(a) is not str else self.fmt(a) for a in args]
            self.count_points(fig, max([int(d.size) for d in data if type(d) is not str] or [0]))
            if name in ("bar", "barh"):  # one Rectangle per broadcast item
                sizes = [d.shape for d in data if type(d) is not str] + [np.shape(v) for v in kw.values()
                                                                         if type(v) is np.ndarray]
                self.count_artists(fig, int(np.prod(np.broadcast_shapes(*sizes))) if sizes else 0, "bars")
            artist = getattr(ax, name)(*data, **kw)
            if name == "scatter":  # a mappable: c= values can have a colorbar
                fig.mappable = CollectionHandle(artist, fig)
                return fig.mappable
            if name != "fill_between":
                return ContainerHandle(artist, fig)
        elif name == "hist":
            return self.hist(handle, args, kw)
        elif name in ("contour", "contourf"):
            return self.contour(handle, name, args, kw)
        elif name in ("imshow", "matshow"):
            img = self.data(args[0], fig, "image") if len(args) == 1 else None
            if img is None or img.ndim not in (2, 3) or (name == "matshow" and img.ndim != 2):
                raise TypeError(f"{name}() takes one 2-D array" + (" (or 3-D: rows, columns, RGB(A))" * (name == "imshow")))
            fig.mappable = ImageHandle(getattr(ax, name)(img, **kw), fig)
            return fig.mappable
        elif name in ("axhline", "axvline"):
            pos = [self.number(self.untracked(a), name) for a in args[:3]]
            self.count_artists(fig, 1, "lines")
            getattr(ax, name)(*pos, **kw)
        elif name == "text":
            if len(args) != 3:
                raise TypeError("text() takes x, y and a string")
            self.count_artists(fig, 1, "texts")
            ax.text(self.number(args[0], "x"), self.number(args[1], "y"), self.text(args[2], "text"), **kw)
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
        with self.mpl.rc_context(self.rc):
            self._render(handle)

    def _render(self, handle):
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
    __slots__ = ("Figure", "FigureCanvasSVG", "rc_context", "colormaps", "Container", "figaspect")


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
    from matplotlib import style, ticker  # noqa: F401 - (style reads its library from disk once, here)
    from matplotlib.container import Container
    from matplotlib.figure import figaspect

    m.Container, m.figaspect = Container, figaspect
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

    def matshow(A, fignum=None, **kwargs):  # noqa: N803 - matplotlib's name
        """A new figure shaped like the matrix (matplotlib's figaspect), unless fignum=0 (the current axes)."""
        if fignum is None:
            arr = g.data(A, None, "image", count=False)
            if arr.ndim != 2:
                raise TypeError("matshow() takes one 2-D array")
            w, h = (min(max(v, FIGSIZE_RANGE[0]), FIGSIZE_RANGE[1]) for v in g.mpl.figaspect(arr))
            g.figure(figsize=(w, h))
        elif fignum is not False and fignum != 0:
            g.figure(num=fignum)
        return g.draw(g.gca(), "matshow", (A,), kwargs)

    functions = {
        **companions.backend_functions(),
        "figure": g.figure, "subplot": subplot, "subplots": g.subplots, "gca": lambda: g.gca(), "gcf": g.gcf,
        "show": g.show, "close": g.close, "colorbar": colorbar,
        "savefig": lambda *args, **kwargs: g.savefig(g.gcf(), *args, **kwargs), "matshow": matshow,
        "xticks": lambda *a, **k: g.pyplot_ticks("x", *a, **k), "yticks": lambda *a, **k: g.pyplot_ticks("y", *a, **k),
        "cla": lambda: g.draw(g.gca(), "cla", (), {}), "clf": lambda: g.clear_figure(g.gcf()),
        "get_cmap": lambda name=None, lut=None: companions.get_cmap(g, name, lut),
        "title": title, "xlabel": xlabel, "ylabel": ylabel, "xlim": xlim, "ylim": ylim, "xscale": xscale,
        "yscale": yscale, "suptitle": suptitle, "tight_layout": tight_layout, "axis": axis,
        **{n: on_axes(n) for n in ("plot", "scatter", "bar", "barh", "hist", "imshow", "axhline", "axvline",
                                   "legend", "grid", "text", "fill_between", "errorbar", "contour", "contourf")},
    }
    assert set(functions) == set(PYPLOT_FUNCTIONS), set(functions) ^ set(PYPLOT_FUNCTIONS)
    attrs = {n: Builtin(n, f, interp) for n, f in functions.items()}
    attrs["style"] = companions.style_module(g)
    attrs["cm"] = companions.cm_module(g, sorted(g.mpl.colormaps))
    return ModuleProxy("matplotlib.pyplot", attrs)


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
            return g.savefig(handle, *args, **kwargs)
        if name in ("clf", "clear"):
            return g.clear_figure(handle)
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
    """`import matplotlib.pyplot`, `import matplotlib`, `import matplotlib.colors` / `.ticker` / `.style`: per run."""
    modules = interp.__dict__.get("_matplotlib_modules")
    if modules is None:
        g = gate_of_plots(interp)
        pyplot = plots_module(interp)
        parts = {"colors": companions.colors_module(g), "ticker": companions.ticker_module(g),
                 "style": pyplot.attrs["style"], "cm": pyplot.attrs["cm"]}
        modules = {"matplotlib.pyplot": pyplot, **{f"matplotlib.{k}": v for k, v in parts.items()}}
        modules["matplotlib"] = companions.matplotlib_module(g, pyplot, parts)
        interp._matplotlib_modules = modules
    return modules.get(name)


MODULE_NAMES = ("matplotlib", "matplotlib.pyplot", "matplotlib.colors", "matplotlib.ticker", "matplotlib.style",
                "matplotlib.cm")


def _methods(names, make):
    return names, {n: (lambda name: lambda interp, h: make(h, name))(n) for n in names}


# what a program may read on each handle (attributes.py turns these into its rules): every method is a checked call
ATTRIBUTE_RULES = {
    AxesHandle: (AXES_METHODS + ["xaxis", "yaxis"], _methods(AXES_METHODS, axes_method)[1]),
    FigureHandle: _methods(FIGURE_METHODS, figure_method),
    AxesGrid: (GRID_ATTRIBUTES, {}),
    ImageHandle: ((), {}),
    CollectionHandle: ((), {}),
    ContourHandle: ((), {}),
    ColorbarHandle: _methods(COLORBAR_METHODS, colorbar_method),
    LineHandle: ((), {}),
    TextHandle: ((), {}),
    ContainerHandle: ((), {}),
    ArtistHandle: ((), {}),
    AxisHandle: _methods(AXIS_METHODS, lambda h, name: lambda value: h.owner.figure.gate.axis_method(h, name, value)),
    NormHandle: (("vmin", "vmax"), {}),
    ColormapHandle: (("name", "N"), {}),
    LocatorHandle: ((), {}),
    FormatterHandle: ((), {}),
}
