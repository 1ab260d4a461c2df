"""Op table rows for math tutorials call that the table lacked: trace (TraceBackward0) and lerp with a number or a
tensor weight (LerpBackward0 / LerpBackward1)."""
from __future__ import annotations

import numpy as np

from .op_table import Params, defop


def _trace(a):
    return np.asarray(np.trace(a), dtype=a.dtype)


defop("trace", "TraceBackward0", "trace", _trace, (lambda g, ans, a: np.eye(*a.shape, dtype=a.dtype) * g, "I"),
      saves=False)


def _lerp(start, end, weight):
    """ATen's lerp: start + w (end - start) for |w| < 0.5, else end - (end - start)(1 - w), each a fused
    multiply-add in float32 (one rounding: the float64 product is exact, its sum is rounded to float32)."""
    diff = end - start
    w = np.asarray(weight, dtype=diff.dtype)
    if diff.dtype == np.float32:
        d64, w64 = diff.astype(np.float64), w.astype(np.float64)
        small = start.astype(np.float64) + w64 * d64
        large = end.astype(np.float64) - d64 * (1.0 - w64).astype(np.float32).astype(np.float64)
        return np.where(np.abs(w) < 0.5, small, large).astype(np.float32)
    return np.where(np.abs(w) < 0.5, start + w * diff, end - diff * (1 - w))


defop("lerp_scalar", "LerpBackward0", "lerp", lambda s, e, w: _lerp(s, e, w),
      (lambda g, ans, s, e, w: g * (1 - w), "1-w"), (lambda g, ans, s, e, w: g * w, "w"), saves=False,
      broadcasts=True, params=Params("args", ("weight",)))


defop("lerp_tensor", "LerpBackward1", "lerp", _lerp,
      (lambda g, ans, s, e, w: g * (1 - w), "1-w"), (lambda g, ans, s, e, w: g * w, "w"),
      (lambda g, ans, s, e, w: g * (e - s), "e-s"), needs=("c", "c", "ab"), broadcasts=True)
