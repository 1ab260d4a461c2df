"""Op table rows for torch.hypot, torch.xlogy and torch.heaviside (HypotBackward0 / XlogyBackward0 /
NotImplemented, PyTorch's node for an op without a derivative): issue 21 §3."""
from __future__ import annotations

import numpy as np

from .op_table import defop


def _xlogy(x, y):
    """x * log(y), 0 where x == 0 unless y is nan (ATen's rule), in the promoted dtype."""
    common = np.result_type(x, y)
    x, y = x.astype(common, copy=False), y.astype(common, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), out.dtype), out).astype(out.dtype, copy=False)


def _xlogy_dx(g, ans, x, y):
    with np.errstate(divide="ignore", invalid="ignore"):  # NOTE: ATen uses xlogy(x != 0, y): 0 where x == 0
        return g * _xlogy((x != 0).astype(g.dtype), y)


def _xlogy_dy(g, ans, x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * x / y


def _hypot_grad(which):
    def vjp(g, ans, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):  # NOTE: 0/0 at the origin is nan, as in torch
            return g * (a if which == 0 else b) / ans
    return vjp


defop("hypot", "HypotBackward0", "hypot", np.hypot, (_hypot_grad(0), r"\frac{a}{h}"), (_hypot_grad(1), r"\frac{b}{h}"),
      needs=("ar", "br"), broadcasts=True)
defop("xlogy", "XlogyBackward0", "xlogy", _xlogy, (_xlogy_dx, r"\log b"), (_xlogy_dy, r"\frac{a}{b}"),
      needs=("b", "ab"), broadcasts=True)


def _heaviside(x, values):
    return np.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype, copy=False)


def _no_derivative(g, ans, x, values):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


defop("heaviside", "NotImplemented", "heaviside", _heaviside, (_no_derivative, "-"), (_no_derivative, "-"),
      saves=False, broadcasts=True)
