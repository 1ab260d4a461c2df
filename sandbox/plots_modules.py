"""The pyplot companions tutorials import: `matplotlib` itself (`use`, `style`, `cm`), `matplotlib.colors`
(`Normalize LogNorm ListedColormap to_rgba to_rgb to_hex`) and `matplotlib.ticker` (locators and formatters
whose ticks and text are bounded before matplotlib draws). Every object is an opaque handle
(`plots_handles.py`) holding checked arguments; a fresh matplotlib object is made where it is used.

Not here, on purpose: `FuncFormatter` (and a function handed to `set_major_formatter`): matplotlib would call
program code while it draws, outside the interpreter's steps, and at the end of the run after the program's
own statements; the message names the formatters that do the same job.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .errors import limit_error
from .numpy_module import gate_of
from .objects import Builtin, ModuleProxy
from .plots_handles import ColormapHandle, FormatterHandle, LocatorHandle, NormHandle

MAX_TICKS = 100  # ticks on one axis: drawing a labelled tick costs matplotlib ~10 ms (200 ticks: 2.1 s here)
MAX_MINOR_DIVISIONS = 5  # minor ticks between two major ones (~5 ms each: 200 x 10 of them took 11.8 s)
MAX_COLORMAP_COLORS = 1024
# '%.2f', '%d epochs', '%5.1f%%': one conversion, width and precision of at most two digits
_PERCENT_FORMAT = re.compile(r"(?:[^%]|%%)*%[-+ #0]{0,3}\d{0,2}(?:\.\d{1,2})?[diueEfFgGs](?:[^%]|%%)*\Z")
# '{x:.2f}', '{x:,.0f} s', '{pos}': fields x and pos only (no attribute or item access), two-digit widths
_BRACE_FORMAT = re.compile(r"(?:[^{}]|\{\{|\}\}|\{(?:x|pos)(?::[<>^=]?[-+ ]?#?0?\d{0,2}[,_]?(?:\.\d{1,2})?"
                           r"[eEfFgGdn%]?)?\})*\Z")
FUNC_FORMATTER_REFUSED = ("FuncFormatter is not available in flowgrad plots: matplotlib would call the function while "
                          "it draws, outside the program's checked steps. Use FormatStrFormatter('%.2f'), "
                          "StrMethodFormatter('{x:.2f}') or ax.set_xticklabels([...]) instead")
STYLE_ALLOWED = re.compile(r"[A-Za-z0-9_\-]{1,40}\Z")


@functools.cache
def _bounded_multiple_locator():
    from matplotlib.ticker import MultipleLocator

    class BoundedMultipleLocator(MultipleLocator):
        """MultipleLocator(1e-9) on an axis from 0 to 1 asks numpy for a billion ticks: counted first."""

        def __init__(self, base, offset):
            super().__init__(base, offset)
            self.flowgrad_base = base

        def tick_values(self, vmin, vmax):
            step = self.flowgrad_base
            if vmax < vmin:
                vmin, vmax = vmax, vmin
            if not np.isfinite(vmax - vmin) or (vmax - vmin) / step > MAX_TICKS:
                raise limit_error(f"MultipleLocator({step:g}) would put {(vmax - vmin) / step:,.0f} ticks on the "
                                  "axis", None, MAX_TICKS)
            return super().tick_values(vmin, vmax)

    return BoundedMultipleLocator


def _int_in(v, what, low, high):
    if type(v) is bool or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer")
    if not low <= int(v) <= high:
        raise limit_error(f"{what} = {int(v):,}", None, f"{low} to {high}")
    return int(v)


def ticker_module(gate) -> ModuleProxy:
    import matplotlib.ticker as mt

    interp = gate.interp
    addresses = interp.addresses

    def locator(kind, make):
        return LocatorHandle(f"matplotlib.ticker.{kind}", make, addresses)

    def formatter(kind, make):
        return FormatterHandle(f"matplotlib.ticker.{kind}", make, addresses)

    def MaxNLocator(nbins=None, *, integer=False, prune=None, min_n_ticks=2, symmetric=False, steps=None):  # noqa: N802
        nbins = 10 if nbins is None else nbins if nbins == "auto" else _int_in(nbins, "nbins", 1, MAX_TICKS)
        if prune not in (None, "lower", "upper", "both"):
            raise ValueError("prune must be 'upper', 'lower', 'both', or None")
        kw = {"integer": bool(integer), "prune": prune, "symmetric": bool(symmetric),
              "min_n_ticks": _int_in(min_n_ticks, "min_n_ticks", 1, MAX_TICKS)}
        if steps is not None:
            kw["steps"] = [gate.number(s, "steps") for s in interp.take(steps)[:10]]
        return locator("MaxNLocator", lambda: mt.MaxNLocator(nbins, **kw))

    def MultipleLocator(base=1.0, offset=0.0):  # noqa: N802
        base, offset = gate.number(base, "base"), gate.number(offset, "offset")
        if base <= 0:
            raise ValueError("'base' must be positive")
        return locator("MultipleLocator", lambda: _bounded_multiple_locator()(base, offset))

    def FixedLocator(locs, nbins=None):  # noqa: N802
        values = gate.data(locs, None, "locs", count=False)
        if values.size > MAX_TICKS:
            raise limit_error(f"FixedLocator got {values.size:,} ticks", None, MAX_TICKS)
        nbins = None if nbins is None else _int_in(nbins, "nbins", 1, MAX_TICKS)
        return locator("FixedLocator", lambda: mt.FixedLocator(values, nbins))

    def LinearLocator(numticks=None):  # noqa: N802
        n = None if numticks is None else _int_in(numticks, "numticks", 0, MAX_TICKS)
        return locator("LinearLocator", lambda: mt.LinearLocator(n))

    def AutoMinorLocator(n=None):  # noqa: N802
        n = None if n is None else _int_in(n, "n", 1, MAX_MINOR_DIVISIONS)
        return locator("AutoMinorLocator", lambda: mt.AutoMinorLocator(n))

    def FormatStrFormatter(fmt):  # noqa: N802
        fmt = checked_format(gate, fmt, _PERCENT_FORMAT, "a %-format with one conversion such as '%.2f'")
        return formatter("FormatStrFormatter", lambda: mt.FormatStrFormatter(fmt))

    def StrMethodFormatter(fmt):  # noqa: N802
        fmt = checked_format(gate, fmt, _BRACE_FORMAT, "a format such as '{x:.2f}' (fields x and pos)")
        return formatter("StrMethodFormatter", lambda: mt.StrMethodFormatter(fmt))

    def PercentFormatter(xmax=100, decimals=None, symbol="%", is_latex=False):  # noqa: N802
        xmax = gate.number(xmax, "xmax")
        decimals = None if decimals is None else _int_in(decimals, "decimals", 0, 20)
        symbol = None if symbol is None else gate.text(symbol, "symbol")
        return formatter("PercentFormatter", lambda: mt.PercentFormatter(xmax, decimals, symbol))

    def FuncFormatter(func):  # noqa: N802
        raise NotImplementedError(FUNC_FORMATTER_REFUSED)

    functions = {"MaxNLocator": MaxNLocator, "MultipleLocator": MultipleLocator, "FixedLocator": FixedLocator,
                 "LinearLocator": LinearLocator, "AutoMinorLocator": AutoMinorLocator,
                 "NullLocator": lambda: locator("NullLocator", mt.NullLocator),
                 "FormatStrFormatter": FormatStrFormatter, "StrMethodFormatter": StrMethodFormatter,
                 "PercentFormatter": PercentFormatter, "ScalarFormatter": lambda: formatter("ScalarFormatter",
                                                                                            mt.ScalarFormatter),
                 "NullFormatter": lambda: formatter("NullFormatter", mt.NullFormatter), "FuncFormatter": FuncFormatter}
    return ModuleProxy("matplotlib.ticker", {n: Builtin(n, f, interp) for n, f in functions.items()})


def checked_format(gate, fmt, pattern, shown):
    if type(fmt) is not str or len(fmt) > gate.max_label or not pattern.match(fmt):
        raise ValueError(f"{str(fmt)[:40]!r} is not a tick format flowgrad plots accept ({shown})")
    return fmt.replace("$", r"\$")  # NOTE: no mathtext in tick labels either


def formatter_of(gate, value):
    """What set_major_formatter takes: a formatter handle or a '{x}' string; a function is refused."""
    if type(value) is FormatterHandle:
        return value.make()
    if type(value) is str:
        import matplotlib.ticker as mt

        return mt.StrMethodFormatter(checked_format(gate, value, _BRACE_FORMAT, "a format such as '{x:.2f}'"))
    if callable(value):
        raise NotImplementedError(FUNC_FORMATTER_REFUSED)
    raise TypeError(f"set_major_formatter() takes a matplotlib.ticker formatter, not '{gate.interp.type_name(value)}'")


# ---------------------------------------------------------------- matplotlib.colors and colormaps
def colormap_handle(gate, cmap):
    h = ColormapHandle(f"matplotlib.colors.{type(cmap).__name__}", None, gate.interp.addresses)
    h.cmap, h.gate = cmap, gate
    return h


def colors_module(gate) -> ModuleProxy:
    import matplotlib.colors as mc

    interp = gate.interp

    def norm(kind, cls):
        def make_norm(vmin=None, vmax=None, clip=False):
            lo = None if vmin is None else gate.number(vmin, "vmin")
            hi = None if vmax is None else gate.number(vmax, "vmax")
            h = NormHandle(f"matplotlib.colors.{kind}", lambda: cls(lo, hi, bool(clip)), interp.addresses)
            h.vmin, h.vmax = lo, hi
            return h
        return make_norm

    def ListedColormap(colors, name="from_list", N=None):  # noqa: N803, N802 - matplotlib's names
        items = interp.take(colors) if not isinstance(colors, str) else [colors]
        if len(items) > MAX_COLORMAP_COLORS:
            raise limit_error(f"a colormap of {len(items):,} colors", None, MAX_COLORMAP_COLORS)
        checked = [gate.color(c) for c in items]
        if N is not None:
            _int_in(N, "N", 1, MAX_COLORMAP_COLORS)
        return colormap_handle(gate, mc.ListedColormap(checked, name=gate.text(name, "name"),
                                                       **({"N": int(N)} if N is not None else {})))

    def to_rgba(c, alpha=None):
        return tuple(float(x) for x in mc.to_rgba(gate.color(c), None if alpha is None else gate.number(alpha, "alpha")))

    functions = {"Normalize": norm("Normalize", mc.Normalize), "LogNorm": norm("LogNorm", mc.LogNorm),
                 "ListedColormap": ListedColormap, "to_rgba": to_rgba,
                 "to_rgb": lambda c: tuple(float(x) for x in mc.to_rgb(gate.color(c))),
                 "to_hex": lambda c, keep_alpha=False: mc.to_hex(gate.color(c), keep_alpha=bool(keep_alpha)),
                 "is_color_like": lambda c: _is_color_like(gate, c)}
    return ModuleProxy("matplotlib.colors", {n: Builtin(n, f, interp) for n, f in functions.items()})


def _is_color_like(gate, c):
    try:
        gate.color(c)
    except (TypeError, ValueError):
        return False
    import matplotlib.colors as mc

    return mc.is_color_like(c if type(c) is str else tuple(c))


def colormap_values(gate, handle, x, alpha, as_bytes):
    """`cmap(0.3)` -> an RGBA tuple; `cmap(np.linspace(0, 1, n))` -> an (n, 4) array, sized first."""
    alpha = None if alpha is None else gate.number(alpha, "alpha")
    if isinstance(x, (int, float, np.number)) and not isinstance(x, bool):
        return tuple(np.asarray(handle.cmap(x, alpha, bool(as_bytes))))  # numpy scalars, as matplotlib gives
    ngate = gate_of(gate.interp)
    gate.interp.check_data(x)
    arr = np.asarray(ngate.arg(x))
    if arr.dtype.kind not in "biuf":
        raise TypeError("a colormap takes numbers")
    ngate.before((*arr.shape, 4))
    return ngate.result(np.asarray(handle.cmap(arr, alpha, bool(as_bytes))))


def cm_module(gate, names) -> ModuleProxy:
    """`plt.cm.viridis`, `plt.cm.get_cmap('Blues')`: matplotlib's registered colormaps (made on first read)."""
    import matplotlib

    attrs = {n: colormap_handle(gate, matplotlib.colormaps[n]) for n in names}
    attrs["get_cmap"] = Builtin("get_cmap", lambda name=None, lut=None: get_cmap(gate, name, lut), gate.interp)
    return ModuleProxy("matplotlib.cm", attrs)


def get_cmap(gate, name=None, lut=None):
    import matplotlib

    if type(name) is ColormapHandle:
        return name
    name = "viridis" if name is None else gate.style(name, "cmap")
    if name not in gate.mpl.colormaps:
        raise ValueError(f"{name!r} is not a valid value for cmap")
    cmap = matplotlib.colormaps[name]
    if lut is not None:
        cmap = cmap.resampled(_int_in(lut, "lut", 1, MAX_COLORMAP_COLORS))
    return colormap_handle(gate, cmap)


# ---------------------------------------------------------------- styles (per run, never matplotlib's global rc)
def style_module(gate) -> ModuleProxy:
    from matplotlib import style

    available = sorted(n for n in style.library if STYLE_ALLOWED.match(n))

    def use(name):
        names = [name] if type(name) is str else interp_take(gate, name)
        params = {}
        for n in names:
            if n == "default":
                params = {}
                continue
            if type(n) is not str or n not in style.library or not STYLE_ALLOWED.match(n):
                raise OSError(f"{str(n)[:40]!r} is not a valid package style, path of style file, URL of style file, "
                              "or library style name (library styles are listed in `style.available`)")
            params.update(style.library[n])
        gate.rc = params  # applied around every drawing call of this run (rc_context), never globally

    return ModuleProxy("matplotlib.style", {"use": Builtin("use", use, gate.interp), "available": available})


def interp_take(gate, v):
    items = gate.interp.take(v)
    if len(items) > 10:
        raise ValueError("style.use() takes at most 10 styles")
    return items


def matplotlib_module(gate, pyplot, companions) -> ModuleProxy:
    """`import matplotlib`: `matplotlib.use('Agg')` is accepted (flowgrad always draws with Agg into SVG)."""

    def use(backend, force=True):
        if type(backend) is not str or len(backend) > 40:
            raise TypeError("use() takes a backend name")
        return None

    attrs = {"pyplot": pyplot, "use": Builtin("use", use, gate.interp), **companions}
    return ModuleProxy("matplotlib", attrs)


def backend_functions() -> dict:
    """`plt.switch_backend('agg')`, `ion()` / `ioff()` / `isinteractive()`, `get_backend()`: the page is a program's
    one backend (figures are drawn as SVG whichever a script names); interactive mode is remembered, not used."""
    interactive = [False]

    def switch_backend(newbackend):
        if type(newbackend) is not str:
            raise TypeError("switch_backend() takes a backend name")

    def set_interactive(on):
        interactive[0] = on

    return {"switch_backend": switch_backend, "get_backend": lambda: "agg", "ion": lambda: set_interactive(True),
            "ioff": lambda: set_interactive(False), "isinteractive": lambda: interactive[0]}
