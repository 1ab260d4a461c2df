"""Op table rows: matrix products with PyTorch's `beta`/`alpha` scalars (torch.addmm(input, m1, m2, beta=, alpha=)).

The plain addmm row (beta = alpha = 1, what nn.Linear runs) is in linalg_ops; this one is the same node,
AddmmBackward0, with its two scalars as parameters, kept apart so that Linear's hot path stays as it is."""
from __future__ import annotations

import numpy as np

from .linalg_ops import _addmm, _mm, _mm_grad_b, _product_flops, _product_sizes
from .op_table import Params, defop


def _scale(x, factor):
    return x if factor == 1 else x * factor


def _addmm_scaled(c, a, b, beta, alpha):
    if beta == 1 and alpha == 1:
        return _addmm(c, a, b)
    product = _scale(_mm(a, b), alpha)
    if beta == 0:  # PyTorch ignores input then: its NaN and inf do not reach the result
        return product
    return product + _scale(np.asarray(c), beta).astype(product.dtype, copy=False)


def _bias_grad(g, ans, c, a, b, beta, alpha):
    return g * 0 if beta == 0 else _scale(g, beta)


defop("addmm_scaled", "AddmmBackward0", "addmm", _addmm_scaled, (_bias_grad, r"\beta"),
      (lambda g, ans, c, a, b, beta, alpha: _scale(g @ b.T, alpha), r"\,\alpha\cdot B^{\top}"),
      (lambda g, ans, c, a, b, beta, alpha: _scale(_mm_grad_b(g, a, b), alpha), r"\alpha A^{\top}\cdot"),
      needs=("", "c", "b"), broadcasts=True, sizes=_product_sizes, flops=_product_flops,
      params=Params("args", ("beta", "alpha")))
