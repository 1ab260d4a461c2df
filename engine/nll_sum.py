"""nll_loss's reduction as ATen's CPU kernel sums it (aten/src/ATen/native/LossNLL.cpp `nll_loss_out_frame`).

NOTE: ATen adds the picked losses in a cascade of 8 levels: level 0 takes one sample after another, and after each
sample b with b % 16 == 0 (16 = 2 ** max(4, ceil(log2(batch)) / 8)) each level whose count is full passes its
partial sum up; the levels' sums are added last, lowest first. numpy's pairwise sum differs from that in the last
bit on ~1 batch in 3 of 64 (a classifier's printed loss then differs from PyTorch's).
"""
from __future__ import annotations

import numpy as np

LEVELS = 8


def _step(batch: int) -> int:
    ceil_log2 = max(int(batch - 1).bit_length(), 0)
    return 1 << max(4, ceil_log2 // LEVELS)


def _sequential(values: np.ndarray) -> np.ndarray:
    """Sums of each row of ``values`` (2-d), added left to right from zero."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], values.dtype)
    return np.add.accumulate(values, axis=1)[:, -1]


def cascade_sum(values: np.ndarray, step: int | None = None) -> np.ndarray:
    """The sum of a 1-d float array in ATen's cascade order (every sample counted: none ignored)."""
    dtype = values.dtype.type
    step = _step(values.size) if step is None else step
    items = values
    kept = []  # each level's partial sum at the end
    for _ in range(LEVELS - 1):
        if items.size == 0:
            kept.append(dtype(0))
            continue
        rest = items[1:]
        full = rest.size // step
        # item 0 and each whole group of `step` after it pass up; what is left of the last group stays
        passed = _sequential(rest[:full * step].reshape(full, step))
        kept.append(_sequential(rest[full * step:].reshape(1, -1))[0])
        items = np.concatenate([items[:1], passed])
    kept.append(_sequential(items.reshape(1, -1))[0])
    total = dtype(0)
    for partial in kept:
        total = dtype(total + partial)
    return total


def nll_sums(losses: np.ndarray, weights: np.ndarray | None, counted: np.ndarray) -> tuple:
    """(sum of losses, sum of weights) as the kernel's loop adds them, where ``counted`` is False for the samples
    whose target is ignore_index (skipped before any level passes up). Weights None: the count of those counted."""
    if counted.all():  # every level passes up on schedule: `cascade_sum`, the loop's vectorised form
        dtype = losses.dtype.type
        return cascade_sum(losses), dtype(counted.size) if weights is None else cascade_sum(weights)
    return kernel_loop(losses, weights, counted)


def kernel_loop(losses: np.ndarray, weights: np.ndarray | None, counted: np.ndarray) -> tuple:
    """`nll_sums` as the kernel's loop is written, one sample at a time: the reference (and the way with samples
    ignored, which move where a level passes up)."""
    dtype = losses.dtype.type
    step = _step(losses.size)
    loss_levels = [dtype(0)] * LEVELS
    weight_levels = [dtype(0)] * LEVELS
    mask = step - 1
    power = step.bit_length() - 1
    for b in range(losses.size):
        if not counted[b]:
            continue
        loss_levels[0] = dtype(loss_levels[0] + losses[b])
        if weights is not None:
            weight_levels[0] = dtype(weight_levels[0] + weights[b])
        for j in range(LEVELS - 1):
            if b & (mask << (j * power)):
                break
            loss_levels[j + 1] = dtype(loss_levels[j + 1] + loss_levels[j])
            weight_levels[j + 1] = dtype(weight_levels[j + 1] + weight_levels[j])
            loss_levels[j] = weight_levels[j] = dtype(0)
    total = dtype(0)
    for partial in loss_levels:
        total = dtype(total + partial)
    if weights is None:
        return total, dtype(int(counted.sum()))
    weight = dtype(0)
    for partial in weight_levels:
        weight = dtype(weight + partial)
    return total, weight
