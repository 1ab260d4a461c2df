"""The PlotGate's calls beyond drawing data (mixed into `plots.PlotGate`): histograms, legends, ticks and
tick labels, clearing axes and figures, axis locators and formatters. Every count is checked before matplotlib
makes (and later draws) what it counts."""

from __future__ import annotations

import numpy as np

from . import plots_modules as companions
from .errors import limit_error
from .numpy_module import gate_of
from .plots_handles import ArtistHandle, ContainerHandle, ContourHandle, LocatorHandle, MappableHandle, TextHandle

MAX_TICKS = companions.MAX_TICKS
DPI_RANGE = (10, 200)
MAX_LEVELS = 256  # contour levels one contour / contourf call draws
TEXT_KEYWORDS = {"rotation", "fontsize", "ha", "va", "horizontalalignment", "verticalalignment", "color",
                 "fontweight", "alpha"}


class AxesCalls:
    """Mixed into PlotGate (which has `interp`, `mpl`, `rc`, `data`, `text`, `keywords`, the counters)."""

    def untracked(self, v):
        """A number matplotlib converts with numpy: a tensor that requires grad is refused as torch refuses it."""
        if isinstance(v, self.interp.B.Tensor) and v.requires_grad:
            gate_of(self.interp).arg(v)  # raises torch's "Can't call numpy() on Tensor that requires grad"
        return v

    def hist(self, handle, args, kw):
        fig = handle.figure
        if len(args) > 2:
            raise TypeError("hist() takes at most 2 positional arguments in flowgrad plots")
        x = self.data(args[0], fig) if args else None
        if x is None or x.ndim > 2:
            raise ValueError("x must have 2 or fewer dimensions")
        # NOTE: a 2-D x is one dataset per column, each binned and drawn: (1, 20000) is 20,000 histograms
        datasets = x.shape[1] if x.ndim == 2 else 1
        self.count_artists(fig, datasets, "histogram datasets")
        if len(args) == 2:
            kw["bins"] = self.keywords({"bins": args[1]}, fig)["bins"]
        # every dataset draws one patch per bin; a number of bins or edges was counted once by keywords()
        bins = kw.get("bins")
        if type(bins) is int:
            per_dataset = bins
            self.count_points(fig, bins * (datasets - 1))
        elif type(bins) is np.ndarray:
            per_dataset = max(bins.size - 1, 0)
            self.count_points(fig, per_dataset * (datasets - 1))
        else:  # 10 by default; a rule's count depends on the number of rows only
            rows = x[:, 0] if x.ndim == 2 else x
            per_dataset = 10 if bins is None else np.histogram_bin_edges(rows[np.isfinite(rows)], bins).size - 1
            self.count_points(fig, per_dataset * datasets)
        if kw.get("histtype") in (None, "bar", "barstacked"):  # (step histograms are one polygon each)
            self.count_artists(fig, per_dataset * datasets, "bars")
        n, edges, patches = handle.ax.hist(x, **kw)
        ngate = gate_of(self.interp)
        n = ngate.result(n) if type(n) is np.ndarray else [ngate.result(np.asarray(c)) for c in n]
        return n, ngate.result(np.asarray(edges)), self.artist_handles(patches, fig)

    def artist_handles(self, v, fig):
        if isinstance(v, self.mpl.Container):
            return ContainerHandle(v, fig)
        return [self.artist_handles(a, fig) if isinstance(a, (list, self.mpl.Container)) else ArtistHandle(a, fig)
                for a in v]

    def contour(self, handle, name, args, kw):
        """contour / contourf (Z, or X, Y, Z; then levels: a count or the values): a decision boundary's map. Every
        grid point counts as a point drawn, the levels as artists; returns a mappable (a colorbar can show it)."""
        fig = handle.figure
        if len(args) not in (1, 2, 3, 4):
            raise TypeError(f"{name}() takes Z or X, Y, Z (and levels)")
        grids = [self.data(a, fig, count=False) for a in args[:3 if len(args) >= 3 else 1]]
        z = grids[-1]
        if z.ndim != 2 or min(z.shape) < 2:
            raise TypeError(f"Input z must be 2D, not {z.ndim}D" if z.ndim != 2 else "Input z must be at least a (2, 2)"
                            " shaped array")
        self.count_points(fig, sum(int(g.size) for g in grids))
        levels = args[-1] if len(args) in (2, 4) else kw.pop("levels", None)
        if levels is not None:
            if isinstance(levels, (int, np.integer)) and not isinstance(levels, bool):
                count = int(levels)
            else:
                levels = self.data(levels, fig, count=False)
                count = int(levels.size)
            if not 1 <= count <= MAX_LEVELS:
                raise ValueError(f"{name}(levels=...) takes 1 to {MAX_LEVELS} levels in flowgrad plots")
            self.count_artists(fig, count, "contour levels")
            kw["levels"] = levels
        artist = getattr(handle.ax, name)(*grids, **kw)
        fig.mappable = ContourHandle(artist, fig)
        return fig.mappable

    def legend(self, handle, args, kwargs):
        """legend(), legend(labels), legend(handles, labels), legend(handles=..., labels=...)."""
        fig = handle.figure
        kwargs = dict(kwargs)
        handles, labels = kwargs.pop("handles", None), kwargs.pop("labels", None)
        kw = self.keywords(kwargs, fig)
        if len(args) == 1:
            labels = args[0]
        elif len(args) == 2:
            handles, labels = args
        elif args:
            raise TypeError(f"legend() takes 0-2 positional arguments but {len(args)} were given")
        call = []
        if handles is not None:
            handles = self.interp.take(handles)
            self.count_artists(fig, len(handles), "legend entries")
            if not all(isinstance(h, (ArtistHandle, MappableHandle)) and h.figure is fig for h in handles):
                raise TypeError("legend handles are what plot(), scatter(), bar() ... of this figure returned")
            call.append([h.artist for h in handles])
        if labels is not None:
            labels = [self.text(t, "legend label") for t in self.interp.take(labels)]
            self.count_artists(fig, len(labels), "legend entries")
            call.append(labels)
        handle.ax.legend(*call, **kw)

    def ticks(self, handle, which, args, kwargs):
        """set_xticks(ticks, labels=None, minor=False, **text_properties)."""
        if not 1 <= len(args) <= 2:
            raise TypeError(f"set_{which}ticks() takes the ticks and, optionally, their labels")
        labels = args[1] if len(args) == 2 else kwargs.pop("labels", None)
        minor = bool(kwargs.pop("minor", False))
        values = self.data(args[0], handle.figure, "ticks", count=False).ravel()
        if values.size > MAX_TICKS:
            raise limit_error(f"set_{which}ticks() got {values.size:,} ticks", None, MAX_TICKS)
        self.count_artists(handle.figure, int(values.size), "ticks")
        getattr(handle.ax, f"set_{which}ticks")(values, minor=minor)
        if labels is not None:
            self.tick_labels(handle, which, (labels,), dict(kwargs, minor=minor))
        elif kwargs:
            raise ValueError("labels argument cannot be None when kwargs are passed")

    def tick_labels(self, handle, which, args, kwargs):
        """set_xticklabels(labels, minor=False, rotation=..., fontsize=..., ha=...)."""
        if len(args) != 1:
            raise TypeError(f"set_{which}ticklabels() takes one list of labels")
        minor = bool(kwargs.pop("minor", False))
        labels = [self.text(t, "tick label") for t in self.interp.take(args[0])]
        if len(labels) > MAX_TICKS:
            raise limit_error(f"set_{which}ticklabels() got {len(labels):,} labels", None, MAX_TICKS)
        kw = self.keywords(kwargs, handle.figure, TEXT_KEYWORDS)
        getattr(handle.ax, f"set_{which}ticklabels")(labels, minor=minor, **kw)

    def pyplot_ticks(self, which, ticks=None, labels=None, *, minor=False, **kwargs):
        """plt.xticks(ticks, labels, rotation=45) / plt.xticks(rotation=45): the current axes' ticks."""
        h = self.gca()
        if ticks is None and labels is not None:
            raise TypeError(f"{which}ticks(): Parameter 'labels' can't be set without setting 'ticks'")
        if ticks is not None:
            self.draw(h, f"set_{which}ticks", (ticks,) if labels is None else (ticks, labels), {"minor": minor})
        kw = self.keywords(kwargs, h.figure, TEXT_KEYWORDS)
        with self.mpl.rc_context(self.rc):
            labels = getattr(h.ax, f"get_{which}ticklabels")(minor=minor)
            for label in labels:
                label.update(kw)
            locs = np.asarray(getattr(h.ax, f"get_{which}ticks")(minor=minor), dtype=np.float64)
        return gate_of(self.interp).result(locs), [TextHandle(label, h.figure) for label in labels]

    def clear_axes(self, handle):
        """ax.cla(): the axes' points and artists are given back to the figure's budget."""
        fig, key = handle.figure, id(handle)
        self.points[id(fig)] = self.points.get(id(fig), 0) - self.axes_points.pop(key, 0)
        self.artists[id(fig)] = self.artists.get(id(fig), 0) - self.axes_artists.pop(key, 0)
        if fig.mappable is not None and fig.mappable.artist.axes is handle.ax:
            fig.mappable = None
        handle.ax.cla()

    def clear_figure(self, fig):
        """fig.clf() / plt.clf(): no axes left; its budgets start again."""
        if not fig.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        for h in fig.axes:
            self.axes_points.pop(id(h), None)
            self.axes_artists.pop(id(h), None)
        fig.fig.clear()
        fig.axes, fig.current, fig.mappable = [], None, None
        self.points[id(fig)] = self.artists[id(fig)] = 0

    def axis_method(self, handle, name, value):
        """ax.xaxis.set_major_locator(MaxNLocator(integer=True)), ...set_major_formatter(FormatStrFormatter('%d'))."""
        if not handle.owner.figure.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        if name.endswith("locator"):
            if type(value) is not LocatorHandle:
                raise TypeError(f"{name}() takes a matplotlib.ticker locator, not '{self.interp.type_name(value)}'")
            getattr(handle.axis, name)(value.make())
        else:
            getattr(handle.axis, name)(companions.formatter_of(self, value))

    def colormap_values(self, handle, x, alpha, as_bytes):
        return companions.colormap_values(self, handle, x, alpha, as_bytes)

    def savefig(self, handle, fname, *, dpi=None, format=None, bbox_inches=None, pad_inches=None,  # noqa: A002
                transparent=None, facecolor=None):
        """`savefig('loss.png', dpi=150)`: no file is written; the figure joins the run's figures, as show() does
        (and is closed: a later show() does not repeat it). The name and format are checked and unused (the page
        shows SVG); dpi sets the resolution of the parts drawn as images, within DPI_RANGE."""
        if type(fname) is not str:
            raise TypeError("savefig() takes a file name (a string); no file is written")
        self.text(fname, "file name")
        for k, v in (("format", format), ("bbox_inches", bbox_inches)):
            if v is not None:
                self.style(v, k)
        if dpi is not None and dpi != "figure":
            dpi = self.number(dpi, "dpi")
            if not DPI_RANGE[0] <= dpi <= DPI_RANGE[1]:  # NOTE: raster parts are width x height x dpi² pixels
                raise limit_error(f"savefig(dpi={dpi:g})", None, f"dpi {DPI_RANGE[0]} to {DPI_RANGE[1]}")
        for what, v in (("pad_inches", pad_inches), ("facecolor", facecolor)):
            if v is not None:
                self.number(v, what) if what == "pad_inches" else self.color(v)
        if not handle.open:
            raise RuntimeError("this figure was closed (plt.close or plt.show)")
        if type(dpi) is float:
            handle.fig.set_dpi(dpi)
        self.render(handle)
