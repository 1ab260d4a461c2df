"""numpy's floating-point warnings, off as PyTorch has none (inf - inf is nan without a word).

A kernel that may overflow or meet inf - inf runs under `np.errstate`, which costs ~0.7 us a call. A caller that
runs a whole program with numpy's warnings off (the sandbox) says so with `silenced()`, and the hot kernels
(engine/cascade_sum.py's sums) skip their own errstate inside it. A context variable, as numpy's errstate is.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

_SILENCED = contextvars.ContextVar("flowgrad_fp_warnings_silenced", default=False)
is_silenced = _SILENCED.get


@contextlib.contextmanager
def silenced():
    """numpy's floating-point warnings off for everything inside, the engine's kernels told so."""
    token = _SILENCED.set(True)
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        _SILENCED.reset(token)
