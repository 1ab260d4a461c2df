"""The opaque handles a program holds for matplotlib objects (`plots.py` makes them, `attributes.py` lists
what each lets a program reach). None exposes a matplotlib object; their text is built from numbers and
checked program text only."""

from __future__ import annotations


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

    @property
    def xaxis(self):
        return AxisHandle(self.ax.xaxis, self)

    @property
    def yaxis(self):
        return AxisHandle(self.ax.yaxis, self)

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


class ContourHandle(MappableHandle):
    __slots__ = ()
    shown = "matplotlib.contour.QuadContourSet"


class ColorbarHandle:
    """What plt.colorbar / fig.colorbar return: `cbar.set_label(...)`."""

    __slots__ = ("cbar", "figure", "__weakref__")

    def __init__(self, cbar, figure):
        self.cbar = cbar
        self.figure = figure

    def __repr__(self):
        return f"<matplotlib.colorbar.Colorbar object at {self.figure.gate.interp.addresses.of(self)}>"


class ArtistHandle:
    """What plot() / bar() / hist() hand back (a Line2D, a BarContainer): legend(handles, labels) takes them."""

    __slots__ = ("artist", "figure", "__weakref__")
    shown = "matplotlib.artist.Artist"

    def __init__(self, artist, figure):
        self.artist = artist
        self.figure = figure

    def __repr__(self):
        return f"<{self.shown} object at {self.figure.gate.interp.addresses.of(self)}>"


class LineHandle(ArtistHandle):
    __slots__ = ()
    shown = "matplotlib.lines.Line2D"

    def __str__(self):
        return f"Line2D({self.artist.get_label()})"  # a checked label or matplotlib's '_child0'


class TextHandle(ArtistHandle):
    __slots__ = ()
    shown = "matplotlib.text.Text"

    def __repr__(self):  # matplotlib's Text(x, y, 'label'): numbers and checked or matplotlib-made text
        return repr(self.artist)

    __str__ = __repr__


class ContainerHandle(ArtistHandle):
    __slots__ = ()
    shown = "BarContainer"

    def __repr__(self):  # BarContainer, ErrorbarContainer: matplotlib's text
        return f"<{type(self.artist).__name__} object of {len(self.artist)} artists>"


class AxisHandle:
    """`ax.xaxis` / `ax.yaxis`: locators and formatters are set through it."""

    __slots__ = ("axis", "owner", "__weakref__")

    def __init__(self, axis, owner):
        self.axis = axis
        self.owner = owner  # the AxesHandle

    def __repr__(self):
        return f"<matplotlib.axis.{type(self.axis).__name__} object at {self.owner.figure.gate.interp.addresses.of(self)}>"

    def __str__(self):
        return str(self.axis)  # matplotlib's: XAxis(80.000000,52.800000), numbers only


class CompanionHandle:
    """A `matplotlib.colors` / `matplotlib.ticker` object: matplotlib's class and checked arguments; a fresh
    matplotlib object is made each time one is used (a locator remembers the axis it was set on)."""

    __slots__ = ("kind", "make", "addresses", "__weakref__")

    def __init__(self, kind, make, addresses):
        self.kind = kind  # "matplotlib.ticker.MaxNLocator", ...
        self.make = make  # () -> the matplotlib object
        self.addresses = addresses

    def __repr__(self):
        return f"<{self.kind} object at {self.addresses.of(self)}>"


class NormHandle(CompanionHandle):
    __slots__ = ("vmin", "vmax")


class ColormapHandle(CompanionHandle):
    """`ListedColormap([...])`, `plt.cm.viridis`, `plt.get_cmap('Blues')`: `cmap(0.5)` gives its RGBA colour."""

    __slots__ = ("cmap", "gate")

    def __call__(self, x, alpha=None, bytes=False):  # noqa: A002 - matplotlib's keyword
        return self.gate.colormap_values(self, x, alpha, bytes)

    @property
    def name(self):
        return self.cmap.name

    @property
    def N(self):  # noqa: N802 - matplotlib's attribute
        return self.cmap.N


class LocatorHandle(CompanionHandle):
    __slots__ = ()


class FormatterHandle(CompanionHandle):
    __slots__ = ()


HANDLE_TYPES = (FigureHandle, AxesHandle, AxesGrid, ImageHandle, CollectionHandle, ColorbarHandle, ArtistHandle,
                LineHandle, TextHandle, ContainerHandle, AxisHandle, NormHandle, ColormapHandle, LocatorHandle, FormatterHandle,
                ContourHandle)
for _cls, _shown in ((FigureHandle, "Figure"), (AxesHandle, "Axes"), (AxesGrid, "ndarray"), (ImageHandle, "AxesImage"),
                     (CollectionHandle, "PathCollection"), (ColorbarHandle, "Colorbar"), (ArtistHandle, "Artist"),
                     (LineHandle, "Line2D"), (TextHandle, "Text"),
                     (ContainerHandle, "BarContainer"), (AxisHandle, "Axis"), (NormHandle, "Normalize"),
                     (ColormapHandle, "Colormap"), (LocatorHandle, "Locator"), (FormatterHandle, "Formatter"),
                     (ContourHandle, "QuadContourSet")):
    _cls.__name__ = _cls.__qualname__ = _shown
CLASS_NAMES = {FigureHandle: "matplotlib.figure.Figure", AxesHandle: "matplotlib.axes._axes.Axes",
               AxesGrid: "numpy.ndarray", ImageHandle: "matplotlib.image.AxesImage",
               CollectionHandle: "matplotlib.collections.PathCollection", ColorbarHandle: "matplotlib.colorbar.Colorbar",
               ArtistHandle: "matplotlib.artist.Artist", LineHandle: "matplotlib.lines.Line2D",
               ContainerHandle: "matplotlib.container.BarContainer", TextHandle: "matplotlib.text.Text",
               AxisHandle: "matplotlib.axis.Axis", NormHandle: "matplotlib.colors.Normalize",
               ColormapHandle: "matplotlib.colors.Colormap", LocatorHandle: "matplotlib.ticker.Locator",
               FormatterHandle: "matplotlib.ticker.Formatter", ContourHandle: "matplotlib.contour.QuadContourSet"}
