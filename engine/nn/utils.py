"""torch.nn.utils: gradient clipping and parameter/vector conversion."""
from __future__ import annotations

import math
import types

import numpy as np

from ..aten_norm import norm2_32
from ..creation import tensor
from ..functional import cat
from ..tensor_core import Tensor
from . import packed
from .packed import pad_sequence


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so their joint norm is at most max_norm; returns the norm before clipping
    (PyTorch's arithmetic: the norm of the per-parameter norms, then max_norm / (norm + 1e-6) clamped at 1)."""
    params = _grads(parameters)
    norm_type = float(norm_type)
    if not params:
        return tensor(0.0)
    dt = params[0]._grad._data.dtype
    if math.isinf(norm_type):
        norms = np.array([np.abs(p._grad._data).max() if p._grad._data.size else 0 for p in params], dtype=dt)
        total = norms.max()
    elif norm_type == 2.0 and dt == np.float32 and all(p._grad._data.dtype == dt for p in params):
        # each gradient's vector_norm, then the norm of those, in ATen's float32 order (engine/aten_norm.py)
        norms = np.array([norm2_32(p._grad._data) if p._grad._data.size else 0 for p in params], dtype=dt)
        total = norm2_32(norms)
    else:
        norms = np.array([np.sum(np.abs(p._grad._data.astype(dt)) ** norm_type) ** (1 / norm_type) for p in params],
                         dtype=dt)
        total = np.sum(norms ** norm_type) ** (1 / norm_type)
    total = np.asarray(total, dtype=dt)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    coef = np.minimum(np.asarray(max_norm, dtype=dt) / (total + np.asarray(1e-6, dtype=dt)), np.asarray(1.0, dtype=dt))
    for p in params:
        p._grad._data = (p._grad._data * coef).astype(p._grad._data.dtype)
    return Tensor._wrap(total)


def clip_grad_value_(parameters, clip_value, foreach=None):
    for p in _grads(parameters):
        p._grad._data = np.clip(p._grad._data, -clip_value, clip_value)


def parameters_to_vector(parameters):
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).detach().clone()
        offset += n


# torch.nn.utils.rnn
rnn = types.SimpleNamespace(pad_sequence=pad_sequence, **{name: getattr(packed, name) for name in packed.PUBLIC})
