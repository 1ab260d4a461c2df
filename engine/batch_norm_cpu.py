"""Batch norm's float32 statistics and output as PyTorch's CPU kernel computes them (aten batch_norm_kernel.cpp),
so the normalised values, and the running statistics, are PyTorch's to the bit.

Per channel: the mean is a float64 sum of the float32 inputs divided by the count, rounded to float32; the variance
sum is a float64 sum of the float32 squares (x - mean)**2, rounded to float32; invstd = 1 / sqrt(var_sum / n + eps)
in float64, rounded; alpha = invstd * weight, beta = bias - mean * alpha (one rounding: the kernel's multiply-add is
fused), output = x * alpha + beta (fused). An (N, C) input takes the kernel's channels-last reduction instead: when
N exceeds its thread count, each thread sums its share of the rows in float32 (sequentially), then the threads'
partial sums are added in float64. NOTE: so PyTorch's own bits depend on its thread count; THREADS is the default
PyTorch picks on this machine (one per core the process may use).
"""
from __future__ import annotations

import os

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def fma32(x, y, z):
    """float32 x * y + z rounded once, through float64. NOTE: the float32 product is exact in float64, the sum is
    rounded twice; that differs from one rounding only when the float64 sum lands exactly on a float32 halfway
    point (about 2**-29 of inputs; engine/optim/fma.py fixes those, but importing it here would be an import cycle)."""
    return (np.multiply(x, y, dtype=_F64) + z).astype(_F32)
THREADS = max(1, len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else max(1, os.cpu_count() or 1)


def _rows_float32(x2, mean, threads):
    """(sum, var_sum) in float64 of per-thread float32 sequential sums over the rows of an (N, C) array."""
    n = x2.shape[0]
    chunk = -(-n // threads)
    total = np.zeros(x2.shape[1], _F64)
    var_total = np.zeros(x2.shape[1], _F64)
    for start in range(0, n, chunk):
        part = x2[start:start + chunk]
        total += np.cumsum(part, axis=0, dtype=_F32)[-1]
        if mean is not None:
            acc = np.zeros(x2.shape[1], _F32)
            for row in part - mean:
                acc = fma32(row, row, acc)
            var_total += acc
    return total, var_total


def batch_stats(x, threads=THREADS):
    """(mean, var_sum) per channel of a float32 (N, C, ...) array, as float32 arrays, in PyTorch's arithmetic."""
    c = x.shape[1]
    n = x.size // c if c else 0
    if x.size == x.shape[0] * c:  # (N, C) or (N, C, 1...): the kernel's channels-last reduction
        x2 = x.reshape(x.shape[0], c)
        if x2.shape[0] > threads:
            total, _ = _rows_float32(x2, None, threads)
            mean = (total / n).astype(_F32)
            _, var_sum = _rows_float32(x2, mean, threads)
            return mean, var_sum.astype(_F32)
        mean = (x2.astype(_F64).sum(axis=0) / n).astype(_F32)
        d = x2 - mean
        return mean, (d * d).astype(_F64).sum(axis=0).astype(_F32)
    axes = (0,) + tuple(range(2, x.ndim))
    mean = (x.astype(_F64).sum(axis=axes) / n).astype(_F32)
    d = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
    return mean, (d * d).astype(_F64).sum(axis=axes).astype(_F32)


def _channels(v, x):
    return np.broadcast_to(v.reshape((1, -1) + (1,) * (x.ndim - 2)), x.shape)


def forward(x, w, b, rm, rv, training, eps):
    """The float32 output of batch norm (training: the batch's statistics; else the running ones)."""
    c = x.shape[1]
    if training:
        mean, var_sum = batch_stats(x)
        n = x.size // c
        invstd = (1.0 / np.sqrt((var_sum / np.float32(n)).astype(_F64) + eps)).astype(_F32)
    else:
        mean = rm.astype(_F32, copy=False)
        invstd = np.float32(1) / np.sqrt(rv.astype(_F32, copy=False) + np.float32(eps))
    alpha = invstd if w is None else invstd * w
    beta = fma32(-mean, alpha, np.zeros(c, _F32) if b is None else b.astype(_F32, copy=False))
    return fma32(x, np.ascontiguousarray(_channels(alpha, x)), np.ascontiguousarray(_channels(beta, x)))


def running_update(x, running_mean, running_var, momentum):
    """The new running mean and (unbiased) variance, float32, as the kernel updates them."""
    mean, var_sum = batch_stats(x)
    n = x.size // x.shape[1]
    m = np.float32(momentum)
    keep = np.float32(1) - m
    unbiased = var_sum / np.float32(max(n - 1, 1))
    # NOTE: measured against PyTorch 2.13's build: the mean's update rounds both products, the variance's fuses one
    return (m * mean + keep * running_mean.astype(_F32, copy=False),
            fma32(m, unbiased, keep * running_var.astype(_F32, copy=False)))
