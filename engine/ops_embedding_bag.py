"""Op table row: embedding_bag (nn.EmbeddingBag, F.embedding_bag), PyTorch's CPU kernel bit for bit.

Forward: each bag's rows added one after another from zero (fbgemm's order), a mean divided by the bag's size, a max
taking the first largest. Backward (EmbeddingBagBackward0): ATen sorts the indices (`indices.sort()`: libstdc++'s
std::sort below 32,768 of them, fbgemm's stable radix sort from there) and adds each occurrence's gradient row into its
weight row in that order, a mean's scaled by 1 / size through BLAS's axpy (a fused multiply-add); a max sends each
element's gradient to the row it came from, bag after bag.
"""
from __future__ import annotations

import numpy as np

from .cascade_sum import _sequential
from .graphed import Graphed
from .graphed import raw as _raw
from .op_table import Params, defop
from .ops_shape import _scatter

RADIX_SORT_FROM = 32768  # at::internal::GRAIN_SIZE: ATen sorts this many indices with fbgemm's (stable) radix sort
MODES = ("sum", "mean", "max")
# NOTE: a mean's fused multiply-adds run one occurrence at a time (across indices); an index seen more often than this
# (and than there are indices) is added up by one sequential sum of the rounded products instead: its gradient row
# then differs from PyTorch's in the last bits, where the exact way would cost a numpy call per occurrence
FUSED_ROUNDS = 4096


def std_sort_order(keys: list) -> list[int]:
    """The positions 0..n-1 in the order libstdc++'s std::sort leaves them when it sorts by `keys` (an introsort:
    median-of-three quicksort to runs of 16, heapsort past 2 log2(n) levels, then insertion sort). Unstable: equal keys
    come out in the order this walk leaves them, which is the order ATen then adds their gradients in."""
    a = list(range(len(keys)))
    n = len(a)

    def lt(i, j):
        return keys[i] < keys[j]

    def swap(i, j):
        a[i], a[j] = a[j], a[i]

    def median_to_first(result, x, y, z):
        if lt(a[x], a[y]):
            if lt(a[y], a[z]):
                swap(result, y)
            elif lt(a[x], a[z]):
                swap(result, z)
            else:
                swap(result, x)
        elif lt(a[x], a[z]):
            swap(result, x)
        elif lt(a[y], a[z]):
            swap(result, z)
        else:
            swap(result, y)

    def partition(first, last, pivot):
        while True:
            while lt(a[first], a[pivot]):
                first += 1
            last -= 1
            while lt(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def adjust_heap(first, hole, length, value):
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if lt(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length & 1 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and lt(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first, last):
        length = last - first
        for parent in range((length - 2) // 2, -1, -1):
            adjust_heap(first, parent, length, a[first + parent])
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def introsort(first, last, depth):
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(last):
        value = a[last]
        before = last - 1
        while lt(value, a[before]):
            a[last] = a[before]
            last = before
            before -= 1
        a[last] = value

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            if lt(a[i], a[first]):
                value = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = value
            else:
                linear_insert(i)

    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return a


def _sorted_positions(idx: np.ndarray) -> np.ndarray:
    if idx.size >= RADIX_SORT_FROM:
        return np.argsort(idx, kind="stable")
    return np.array(std_sort_order(idx.tolist()), np.intp)


def _by_round(rank, keep):
    """The positions kept, split by rank: the r-th list holds the r-th position of every bag (or index) that has one,
    in position order. One sort, then slices (a scan per round would cost the whole array each time)."""
    pos = np.nonzero(keep)[0]
    pos = pos[np.argsort(rank[pos], kind="stable")]
    return np.split(pos, np.cumsum(np.bincount(rank[pos]))[:-1]) if pos.size else []


def _bags(idx, bounds, padding_idx):
    """(bag of each position, rank of each position in its bag, count of rows each bag takes, positions taken)."""
    n_bags = bounds.size - 1
    bag_of = np.repeat(np.arange(n_bags), np.diff(bounds))  # (the positions past the last bag's end: in none)
    rank = np.arange(bag_of.size) - bounds[:-1][bag_of]
    taken = np.ones(bag_of.size, bool) if padding_idx is None else idx[:bag_of.size] != padding_idx
    counts = np.bincount(bag_of[taken], minlength=n_bags)
    return bag_of, rank, counts, taken


def _rows_of_bag(idx, bounds, taken, b):
    """The weight rows bag b takes, in order (a padding index's left out)."""
    at = np.arange(bounds[b], bounds[b + 1])
    return idx[at[taken[at]]]


def bag_bounds(offsets, n, include_last_offset):
    """Where each bag starts and the last ends: the offsets, then the input's length (include_last_offset: the last
    offset is that end); no offset, no bag."""
    offsets = np.asarray(offsets).astype(np.intp, copy=False).reshape(-1)
    if not offsets.size:
        return np.zeros(1, np.intp)
    return offsets if include_last_offset else np.append(offsets, n)


def embedding_bag_forward(w, idx, offsets, mode, padding_idx, include_last_offset):
    """(bags, weight columns) of sums, means or maxima of the rows each bag lists."""
    idx = idx.astype(np.intp, copy=False).reshape(-1)
    bounds = bag_bounds(offsets, idx.size, include_last_offset)
    bag_of, rank, counts, taken = _bags(idx, bounds, padding_idx)
    n_bags, width = bounds.size - 1, w.shape[1]
    out = np.zeros((n_bags, width), w.dtype)
    longest = int(rank.max(initial=-1)) + 1
    if mode != "max" and longest > n_bags:  # few long bags: one bag at a time, its rows added one after another
        for b in np.nonzero(counts)[0]:
            out[b] += _sequential(w[_rows_of_bag(idx, bounds, taken, b)], 0)  # from zero, as ATen's accumulator starts
    elif mode == "max":
        out = _max_rows(w, idx, bag_of, rank, taken, bounds)[0]
    else:
        for at in _by_round(rank, taken):  # rows added one after another, from zero
            out[bag_of[at]] += w[idx[at]]
    if mode == "mean":
        nonempty = counts > 0
        out[nonempty] /= counts[nonempty, None].astype(w.dtype)
    return out


def embedding_bag_vjp(g, ans, w, idx, offsets, mode, padding_idx, include_last_offset):
    idx = idx.astype(np.intp, copy=False).reshape(-1)
    bounds = bag_bounds(offsets, idx.size, include_last_offset)
    bag_of, rank, counts, taken = _bags(idx, bounds, padding_idx)
    if type(g) is Graphed:  # create_graph: the same rows, as recorded gathers and one scatter-add
        return _graphed_vjp(g, w, idx, bounds, mode, bag_of, rank, counts, taken)
    dw = np.zeros(w.shape, g.dtype)
    if mode == "max":
        argmax = _max_rows(w, idx, bag_of, rank, taken, bounds)[1]
        bags, cols = np.nonzero(argmax >= 0)  # bag by bag, as ATen adds them
        np.add.at(dw, (argmax[bags, cols], cols), g[bags, cols])
        return dw
    order = _sorted_positions(idx)
    order = order[taken[order]]  # a padding index's rows get nothing
    # each index's occurrences in sorted order: the r-th of every index at once (distinct rows, no clash)
    keys = idx[order]
    starts = np.r_[0, np.nonzero(np.diff(keys))[0] + 1] if keys.size else np.zeros(0, np.intp)
    occurrence = np.arange(keys.size) - np.repeat(starts, np.diff(np.r_[starts, keys.size]))
    scale = None
    if mode == "mean":
        scale = (np.float32(1) if g.dtype == np.float32 else 1.0) / np.maximum(counts, 1).astype(g.dtype)
    rounds = int(occurrence.max(initial=-1)) + 1
    if rounds > starts.size and (scale is None or rounds > FUSED_ROUNDS):  # few indices, many times each
        for start, end in zip(starts, np.r_[starts[1:], keys.size]):
            pos = order[start:end]
            rows = g[bag_of[pos]] if scale is None else scale[bag_of[pos], None] * g[bag_of[pos]]
            dw[keys[start]] += _sequential(rows, 0)  # in sorted order, from zero
        return dw
    for at in _by_round(occurrence, np.ones(occurrence.size, bool)):
        pos = order[at]
        rows, grads = idx[pos], g[bag_of[pos]]
        if scale is None:
            dw[rows] += grads
        elif g.dtype == np.float32:  # axpy's fused multiply-add: the product exact in float64, rounded once with the sum
            dw[rows] = (scale[bag_of[pos], None].astype(np.float64) * grads + dw[rows]).astype(np.float32)
        else:
            dw[rows] += scale[bag_of[pos], None] * grads
    return dw


def _graphed_vjp(g, w, idx, bounds, mode, bag_of, rank, counts, taken):
    if mode == "max":
        argmax = _max_rows(_raw(w), idx, bag_of, rank, taken, bounds)[1]
        bags, cols = np.nonzero(argmax >= 0)
        return _scatter(w.shape, g.dtype, (argmax[bags, cols], cols), g[(bags, cols)], accumulate=True, kind="index")
    pos = np.nonzero(taken)[0]
    rows = g[bag_of[pos]]
    if mode == "mean":
        rows = rows * (1 / np.maximum(counts, 1)).astype(g.dtype)[bag_of[pos], None]
    return _scatter(w.shape, g.dtype, idx[pos], rows, accumulate=True, kind="index")


def _max_rows(w, idx, bag_of, rank, taken, bounds):
    """Each bag's maxima and the weight row each came from, per column (0 and -1 for an empty bag): the first
    largest. A few long bags one at a time, else one position of every bag at a time.
    NOTE: the backward finds the maxima again from the weight as it is then (PyTorch keeps their indices from the
    forward): an in-place change to the weight between the two would move them."""
    n_bags = bounds.size - 1
    best = np.zeros((n_bags, w.shape[1]), w.dtype)
    argmax = np.full((n_bags, w.shape[1]), -1, np.intp)
    cols = np.arange(w.shape[1])
    rounds = _by_round(rank, taken)
    if len(rounds) > n_bags:
        for b in np.unique(bag_of[taken]):
            rows_at = _rows_of_bag(idx, bounds, taken, b)
            first = w[rows_at].argmax(axis=0)
            argmax[b] = rows_at[first]
            best[b] = w[argmax[b], cols]
        return best, argmax
    for at in rounds:
        b, rows = bag_of[at], w[idx[at]]
        better = (argmax[b] < 0) | (rows > best[b])
        best[b] = np.where(better, rows, best[b])
        argmax[b] = np.where(better, idx[at][:, None], argmax[b])
    return best, argmax


def _embedding_bag_sizes(arrays, params):
    offsets = int(np.size(arrays[2]))
    bags = max(offsets - 1, 0) if params[2] or not offsets else offsets  # a row per bag
    return ((bags, np.shape(arrays[0])[1]),)


defop("embedding_bag", "EmbeddingBagBackward0", "embedding_bag", embedding_bag_forward,
      # a row of a bag gets its bag's gradient: 1 (sum), 1/n (mean), to the largest only (max)
      (embedding_bag_vjp, r"\mathbb{1}[i\in b]\cdot\{1,\ \tfrac{1}{n_b},\ \mathbb{1}[a_i=\max_b]\}"), (None, ""), (None, ""),
      needs=("bc", "", ""),
      params=Params("args", ("mode", "padding_idx", "include_last_offset")), sizes=_embedding_bag_sizes)
