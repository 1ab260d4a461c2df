"""flowgrad's engine: a small numpy PyTorch. `import engine as torch` for the supported subset.

Importing it changes no process state (the worker's process setup tunes malloc: engine/allocator.py) and loads
nothing: the torch surface (engine/surface.py) loads on the first use of any of its names, torch.nn, torch.optim
and torch.utils on their own first use (PEP 562 `__getattr__`), so a process that needs only the trace contract
(the HTTP server: `engine.trace_events`) or the op table loads none of the rest.
"""
import importlib as _importlib
import os as _os

_LAZY = ("nn", "optim", "utils")  # heavier still: each loads on its own first use
_DUNDERS = ("__version__",)  # the surface's dunder names torch has


def _surface() -> dict:
    """Every public name of the torch surface, copied here once so later reads are plain module attributes."""
    surface = vars(_importlib.import_module(f"{__name__}.surface"))
    names = {k: v for k, v in surface.items() if not k.startswith("__") or k in _DUNDERS}
    globals().update(names)
    return names


def _is_submodule(name: str) -> bool:
    # NOTE: no builtins here that torch's names shadow once the surface is loaded (any, all, max, sum, ...)
    for d in __path__:
        if _os.path.exists(_os.path.join(d, name + ".py")) or _os.path.isdir(_os.path.join(d, name)):
            return True
    return False


def __getattr__(name):
    # NOTE: `from . import x` inside the package asks this first: a submodule is imported, never the whole surface
    if name in _LAZY or _is_submodule(name):
        return _importlib.import_module(f"{__name__}.{name}")
    if (name.startswith("__") and name not in _DUNDERS) or "reset_run_state" in globals():  # loaded already: a name it does not have
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    names = _surface()
    if name not in names:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return names[name]


def __dir__():
    if "reset_run_state" not in globals():
        _surface()
    return sorted(set(globals()) | set(_LAZY))
