"""torch.compile: PyTorch 2's compiler entry point, as a program meets it.

flowgrad runs every program eagerly (its graph is what the page draws), so a compiled function is the function
itself, and a compiled module is PyTorch's `OptimizedModule` wrapper (printed with its `_orig_mod`, its parameters
named `_orig_mod.…`, attributes read and written through to the module it wraps) running the module as it is.
NOTE: PyTorch's inductor may fuse a compiled module's ops into kernels that round otherwise than eager mode; the
engine computes as eager PyTorch does.
"""
from __future__ import annotations

from .nn.modules import Module

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class OptimizedModule(Module):
    """What torch.compile(module) returns (torch._dynamo.eval_frame.OptimizedModule)."""

    _own = frozenset({"_orig_mod", "training", "_parameters", "_modules", "_buffers", "_non_persistent_buffers_set"})

    def __init__(self, mod):
        super().__init__()
        self._modules["_orig_mod"] = mod

    def forward(self, *args, **kwargs):
        return self._modules["_orig_mod"](*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "_orig_mod":
            return self.__dict__["_modules"]["_orig_mod"]
        return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in self._own:
            super().__setattr__(name, value)
        else:
            setattr(self._modules["_orig_mod"], name, value)

    def __len__(self):
        return len(self._modules["_orig_mod"])


OptimizedModule.__module__ = "torch._dynamo.eval_frame"  # where PyTorch defines it: `type(m)` prints that path


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """torch.compile(model) or @torch.compile(...): a module wrapped in OptimizedModule, a function as it is."""
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if isinstance(model, Module):
        return model if disable else OptimizedModule(model)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model
