"""Op table rows for torch.erfc / erfinv / kthvalue / mode / aminmax: PyTorch's nodes (ErfcBackward0,
ErfinvBackward0, KthvalueBackward0, ModeBackward0, AminmaxBackward0), each rule as derivatives.yaml writes it."""
from __future__ import annotations

import math

import numpy as np

from . import linalg_ops as _la
from . import vml
from .grad_mode import STATE
from .graphed import Graphed, raw
from .graphed import op as _graphed_op
from .op_table import Params, defop
from .ops_shape import _along, _scatter

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_TICK_EVERY = 4096  # elements a pick's Python loops go through per step of the program's budget


def _step():
    """A step of the program's budget (the sandbox's clock check among them): a pick over a long row loops in
    Python, and the run's time limit must be able to stop it."""
    if STATE.tick is not None:
        STATE.tick()


def erfc(a):
    if type(a) is Graphed:
        return _graphed_op("erfc", (a,))
    return vml.erfc(a)


def erfinv(a):
    if type(a) is Graphed:  # (erfinv's own gradient, under create_graph)
        return _graphed_op("erfinv", (a,))
    return vml.erfinv(a)


defop("erfc", "ErfcBackward0", "erfc", erfc,
      (lambda g, ans, a: -_TWO_OVER_SQRT_PI * vml.exp(-(a * a)) * g, r"-\tfrac{2}{\sqrt{\pi}}e^{-a^{2}}"),
      needs=("a",))
defop("erfinv", "ErfinvBackward0", "erfinv", erfinv,
      (lambda g, ans, a: (math.sqrt(math.pi) / 2) * vml.exp(erfinv(a) ** 2) * g,
       r"\tfrac{\sqrt{\pi}}{2}e^{\operatorname{erfinv}(a)^{2}}"), needs=("a",))


# ---------------------------------------------------------------- kthvalue / mode: a value picked per row
def _kth_order(a, k, dim):
    """The index along `dim` of each row's k-th smallest, NaN the largest: ATen's quickselect per row, so that of
    equal values the one it returns is PyTorch's."""
    rows = np.moveaxis(raw(a), dim, -1)  # (the values only: under create_graph the picks are constants)
    flat = rows.reshape(-1, rows.shape[-1])
    picks = np.array([_step() or _quick_select(row.tolist(), k - 1) for row in flat], np.int64)
    return np.expand_dims(picks.reshape(rows.shape[:-1]), dim)


def _quick_select(values, k):
    """The original index of the k-th smallest (0-based) of `values`, by ATen's quick_select_template (median of
    three pivots, Hoare partitions, NaN above everything)."""
    index = list(range(len(values)))

    def gt(x, y):  # ATen's comparison: x is NaN and y is not, or x > y
        return (x != x and y == y) or x > y

    def swap(i, j):
        values[i], values[j] = values[j], values[i]
        index[i], index[j] = index[j], index[i]

    lo, hi = 0, len(values) - 1
    while hi > lo:
        if hi - lo > _TICK_EVERY:
            _step()
        if hi == lo + 1:
            if gt(values[lo], values[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(values[lo + 1], values[hi]):
            swap(lo + 1, hi)
        if gt(values[lo], values[hi]):
            swap(lo, hi)
        if gt(values[lo + 1], values[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, values[lo]
        while True:
            i += 1
            while gt(pivot, values[i]):
                i += 1
            j -= 1
            while gt(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return index[k]


def _mode_order(a, dim):
    """The index along `dim` of each row's mode, as ATen's CPU kernel finds it: (value, index) pairs put in order by
    value with libstdc++'s std::sort, then the first run of equal values longer than every earlier one, and the
    index of that run's last pair (NaN equals nothing: each NaN is a run of one)."""
    rows = np.moveaxis(raw(a), dim, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    picks = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        _step()
        pairs = _std_sort(list(zip(row.tolist(), range(row.size))))
        best = run = 0
        for i, (value, index) in enumerate(pairs):
            run += 1
            if i == len(pairs) - 1 or value != pairs[i + 1][0]:
                if run > best:
                    best, picks[r] = run, index
                run = 0
    return np.expand_dims(picks.reshape(rows.shape[:-1]), dim)


def _std_sort(v):
    """libstdc++'s std::sort of (value, index) pairs compared by value alone (introsort: median-of-three Hoare
    partitions down to runs of 16, then insertion sort), so equal values end in the order ATen's mode sees them.
    NOTE: past 2 log2(n) levels libstdc++ heap-sorts the rest; this keeps partitioning (the order of equal values
    could then differ, the values not)."""
    def less(x, y):
        return x[0] < y[0]

    def partition(first, last):  # __unguarded_partition_pivot
        mid = first + (last - first) // 2
        a, b, c = first + 1, mid, last - 1
        if less(v[a], v[b]):
            m = b if less(v[b], v[c]) else c if less(v[a], v[c]) else a
        else:
            m = a if less(v[a], v[c]) else c if less(v[b], v[c]) else b
        v[first], v[m] = v[m], v[first]
        lo, hi, pivot = first + 1, last, v[first]
        while True:
            while lo < last and less(v[lo], pivot):
                lo += 1
            hi -= 1
            while hi > first and less(pivot, v[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            v[lo], v[hi] = v[hi], v[lo]
            lo += 1

    pending = [(0, len(v))]
    while pending:  # __introsort_loop: the right part first, then the left (the order does not change the result)
        first, last = pending.pop()
        while last - first > 16:
            if last - first > _TICK_EVERY:
                _step()
            cut = partition(first, last)
            pending.append((cut, last))
            last = cut
    for i in range(1, len(v)):  # __final_insertion_sort (NaN compares false: the shortcut to the front matters)
        if i % _TICK_EVERY == 0:
            _step()
        item, j = v[i], i
        if i < 16 and less(item, v[0]):  # __insertion_sort: smaller than the first goes straight to the front
            v[1:i + 1] = v[0:i]
            v[0] = item
            continue
        while j > 0 and less(item, v[j - 1]):  # __unguarded_linear_insert
            v[j] = v[j - 1]
            j -= 1
        v[j] = item
    return v


def _picked(order_of):
    """(values, indices, vjp) of a row-picking reduction, as median's (value_selecting_reduction_backward)."""
    def values(a, *params):
        *rest, dim, keep = params
        out = np.take_along_axis(a, order_of(a, *rest, dim), axis=dim)
        return out if keep else np.squeeze(out, axis=dim)

    def indices(a, *params):
        *rest, dim, keep = params
        out = order_of(a, *rest, dim).astype(np.int64)
        return out if keep else np.squeeze(out, axis=dim)

    def vjp(g, ans, a, *params):
        *rest, dim, keep = params
        if not keep:
            g = np.expand_dims(g, dim)
        return _scatter(a.shape, g.dtype, _along(order_of(a, *rest, dim), dim), g)
    return values, indices, vjp


_kth_values, _kth_indices, _kth_vjp = _picked(_kth_order)
_mode_values, _mode_indices, _mode_vjp = _picked(_mode_order)
_KTH = Params("reduce", ("k", "dim", "keepdim"))
_MODE = Params("reduce", ("dim", "keepdim"))
defop("kthvalue", "KthvalueBackward0", "kthvalue", _kth_values, (_kth_vjp, r"\mathbb{1}[i=\operatorname{arg}_k]"),
      needs=("a",), params=_KTH)
defop("kthvalue_indices", None, "kthvalue", _kth_indices, saves=False, params=_KTH)
defop("mode", "ModeBackward0", "mode", _mode_values, (_mode_vjp, r"\mathbb{1}[i=\operatorname{argmode}]"),
      needs=("a",), params=_MODE)
defop("mode_indices", None, "mode", _mode_indices, saves=False, params=_MODE)

# aminmax: amin's and amax's rules (the gradient shared among tied extremes), under PyTorch's one node name
_REDUCE = Params("reduce", ("dim", "keepdim"))
defop("aminmax_min", "AminmaxBackward0", "aminmax", _la.amin,
      (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\min a]}{\#\min}"), needs=("ar",), params=_REDUCE)
defop("aminmax_max", "AminmaxBackward0", "aminmax", _la.amax,
      (_la.extreme_vjp, r"\frac{\mathbb{1}[a=\max a]}{\#\max}"), needs=("ar",), params=_REDUCE)
