"""torch.nn.utils: gradient clipping and parameter/vector conversion."""
from __future__ import annotations

import math
import types

import numpy as np

from ..creation import full, tensor
from ..functional import cat
from ..tensor_core import Tensor
from . import packed


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


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence: tensors of lengths L_i (and equal trailing sizes) in one (L_max, B, *) tensor
    (B first with batch_first) filled with padding_value, each copied in at the start (or the end with
    padding_side='left'); gradients flow back to each sequence through the copy."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for s in sequences:
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence(): argument 'sequences' must be tuple of Tensors, not {type(s).__name__}")
        if s.dim() < 1 or tuple(s.shape[1:]) != tuple(sequences[0].shape[1:]):
            raise RuntimeError("The size of tensor a must match the size of tensor b: sequences need the same "
                               "trailing sizes (and at least one dimension)")
    longest = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    shape = (len(sequences), longest, *trailing) if batch_first else (longest, len(sequences), *trailing)
    out = full(shape, padding_value, dtype=sequences[0].dtype)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        where = slice(0, n) if padding_side == "right" else slice(longest - n, longest)
        if batch_first:
            out[i, where] = s
        else:
            out[where, i] = s
    return out


# torch.nn.utils.rnn
rnn = types.SimpleNamespace(pad_sequence=pad_sequence, **{name: getattr(packed, name) for name in packed.PUBLIC})
