"""torch.autograd.function: the module programs import custom-Function names from (the code is engine/function.py)."""
from __future__ import annotations

from ..function import BackwardCFunction, Function, FunctionCtx, once_differentiable

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]
