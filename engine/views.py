"""Where a view's elements sit in the tensor it is a view of: what an in-place op on the view writes back
(PyTorch's CopySlices) and how the view is taken again from the written tensor (AsStridedBackward0)."""
from __future__ import annotations

import weakref

import numpy as np

OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


def _byte_offsets(shape, strides) -> np.ndarray:
    """Each element's byte offset from the first, for an array of this shape and these strides."""
    offsets = np.zeros(shape, dtype=np.int64)
    for dim, (n, stride) in enumerate(zip(shape, strides)):
        if n > 1 and stride:
            axis_shape = [1] * len(shape)
            axis_shape[dim] = n
            offsets += (np.arange(n, dtype=np.int64) * stride).reshape(axis_shape)
    return offsets


def view_positions(base: np.ndarray, view: np.ndarray):
    """(index key into base, element strides) of a numpy view into base's memory: the key is one int array per
    dimension of base, of the view's shape; the strides (with the first element's offset) say where the view's
    elements sit in a C-contiguous copy of base, None where no strides do. None: view is not base's memory."""
    if (view.size == 0 or view.dtype != base.dtype or not isinstance(view, np.ndarray)
            or not np.may_share_memory(base, view)):
        return None
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    base_offsets = _byte_offsets(base.shape, base.strides).ravel()
    order = np.argsort(base_offsets, kind="stable")
    sorted_offsets = base_offsets[order]
    wanted = (start + _byte_offsets(view.shape, view.strides)).ravel()
    found = np.minimum(np.searchsorted(sorted_offsets, wanted), sorted_offsets.size - 1)
    if not np.array_equal(sorted_offsets[found], wanted):
        return None  # the view was taken from an array base no longer holds (base was rebased since)
    flat = order[found]
    if np.unique(flat).size != flat.size:  # an expanded view: PyTorch refuses to write through it
        raise RuntimeError(OVERLAP)
    flat = flat.reshape(view.shape)
    return np.unravel_index(flat, base.shape), _element_strides(flat)


def _element_strides(flat: np.ndarray):
    """(offset, strides) with flat == offset + sum(index_k * strides_k), in elements; None when none fit."""
    offset = int(flat.flat[0])
    strides = []
    for dim, n in enumerate(flat.shape):
        step = [0] * flat.ndim
        if n > 1:
            step[dim] = 1
        strides.append(int(flat[tuple(step)]) - offset if n > 1 else 0)
    if not np.array_equal(flat, offset + _byte_offsets(flat.shape, strides)):
        return None
    return offset, tuple(strides)


def restride(base: np.ndarray, key, strides):
    """The view of `base` at key: a numpy view (so later writes through it reach base) where the strides allow."""
    if strides is not None and base.flags.c_contiguous:
        offset, steps = strides
        flat = base.reshape(-1)
        return np.lib.stride_tricks.as_strided(flat[offset:], shape=key[0].shape,
                                               strides=tuple(s * base.itemsize for s in steps))
    return base[key]


# The live views of each base taken while grad mode was on: id(base) -> (weak base, [weak views]). An in-place op
# under autograd on the base or through one view gives every other view the base's new history, as PyTorch's
# version counter makes it regenerate a view's grad_fn (AsStridedBackward0 of the base) when the view is next used.
_VIEWS: dict[int, tuple] = {}
_PRUNE_FROM = 64  # a list this long (and each power of two after it) drops the views that died


def _forget(key):
    def drop(ref):
        entry = _VIEWS.get(key)
        if entry is not None and entry[0] is ref:
            del _VIEWS[key]
    return drop


def remember_view(view) -> None:
    """view (whose _view_base is set) is one its base's in-place ops must re-derive."""
    base = view._view_base
    key = id(base)
    entry = _VIEWS.get(key)
    if entry is None or entry[0]() is not base:
        entry = _VIEWS[key] = (weakref.ref(base, _forget(key)), [])
    refs = entry[1]
    refs.append(weakref.ref(view))
    n = len(refs)
    if n >= _PRUNE_FROM and not n & (n - 1):  # amortised: a loop of x[i] keeps only the views still alive
        refs[:] = [r for r in refs if r() is not None]


def live_views(base) -> list:
    """The views of base remembered and still alive."""
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        return []
    return [v for v in (r() for r in entry[1]) if v is not None]
