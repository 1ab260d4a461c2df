"""torch.autograd: grad mode, graph nodes, the backward pass and Function, gathered under torch's module name.

The parts live in the layer below Tensor, each importing only downward: grad_mode.py (switches and version
counters), nodes.py (grad_fn nodes, AccumulateGrad, hooks), backward.py (the one backward loop, grad) and
function.py (custom Functions, importable as torch.autograd.function). `Variable` (a factory) is bound by
engine/__init__.py.
"""
from __future__ import annotations

import importlib as _importlib

from ..backward import backward, backward_into, grad, root_gradient, run_backward
from ..function import Function, FunctionCtx
from ..grad_mode import (
    _WRITES,
    FREED_MESSAGE,
    STATE,
    WRITE_LOG_KEEP,
    _seq,
    carry_writes,
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    note_write,
    note_writes,
    set_detect_anomaly,
    set_grad_enabled,
)
from ..nodes import (
    LEAF_HOOKS,
    NODE_CLASSES,
    AccumulateGrad,
    Node,
    RemovableHandle,
    accumulator,
    call_tensor_hook,
    callable_name,
    edge_of,
    leaf_hook_tables,
    run_tensor_hooks,
    source_lines,
    user_code,
)
from . import function

# Above the Tensor layer, loaded on first use (PEP 562): `torch.autograd.functional` (engine/autograd/functional.py)
# and gradcheck / gradgradcheck (engine/gradcheck.py); their modules import the Tensor layer, which imports this one.
_LAZY_FUNCTIONS = {"gradcheck": "gradcheck", "gradgradcheck": "gradcheck"}


def __getattr__(name):
    if name == "functional":
        return _importlib.import_module(f"{__name__}.functional")
    if name in _LAZY_FUNCTIONS:
        value = getattr(_importlib.import_module(f"{__package__.rsplit('.', 1)[0]}.{_LAZY_FUNCTIONS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "_WRITES", "FREED_MESSAGE", "LEAF_HOOKS", "NODE_CLASSES", "STATE", "WRITE_LOG_KEEP", "AccumulateGrad", "Function",
    "FunctionCtx", "Node", "RemovableHandle", "_seq", "accumulator", "backward", "backward_into", "call_tensor_hook",
    "callable_name", "carry_writes", "detect_anomaly", "edge_of", "enable_grad", "is_anomaly_enabled",
    "set_detect_anomaly", "function", "grad", "inference_mode",
    "is_grad_enabled", "is_inference_mode_enabled",
    "leaf_hook_tables", "no_grad", "note_write", "note_writes", "root_gradient", "run_backward",
    "run_tensor_hooks", "set_grad_enabled", "source_lines", "user_code",
]
