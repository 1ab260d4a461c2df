"""Plain SGD's fused update of small float32 parameters: which of a group's parameters join the one
multiply-add over their concatenation, and where each one's part of the result goes back to.

The plan depends only on the parameter arrays themselves (dtype, ownership, layout, size), so it is kept
while a step sees the same array objects (the plan holds them: their ids cannot be reused meanwhile) and made
again when a program replaces one (`p.data = ...`). Writing back through a flat view and a slice made once
costs a third of a reshape-and-copyto per parameter per step; the concatenations go into buffers the plan
keeps, padded with zeros to whole saxpy blocks (blas_axpy.add_at: one call, no numpy tail).
"""
from __future__ import annotations

from operator import is_, itemgetter

import numpy as np

FUSED_UP_TO = 1 << 14  # elements: bigger parameters are updated on their own (no copies in and out)
KEEP_UP_TO = 1 << 20  # elements: a plan keeps its buffers between steps up to this size (8 MB for the two)
ENABLED = True  # False: no plans, every parameter updated on its own (bench/engine.py --without fused)


_array = itemgetter(1)  # an item's parameter array


class FusedPlan:
    __slots__ = ("arrays", "small", "big", "parts", "total", "small_arrays", "z", "g", "_views")

    def __init__(self, arrays):
        self.arrays = arrays
        self.small = []  # item indices of the fused parameters, in order
        self.big = []  # item indices updated one at a time
        self.parts = []  # (flat view of the parameter's array, its slice of the concatenation)
        start = 0
        for i, a in enumerate(arrays):
            if a.size <= FUSED_UP_TO and a.flags.c_contiguous:  # C order: concatenate(axis=None)'s order
                self.small.append(i)
                self.parts.append((a.reshape(-1), slice(start, start + a.size)))
                start += a.size
            else:
                self.big.append(i)
        self.total = start
        self.small_arrays = [arrays[i] for i in self.small]  # the parameters' concatenation reads these each step
        self.z = self.g = self._views = None
        if start <= KEEP_UP_TO:  # kept buffers: views() is made once
            self.z, self.g = self._buffers()
            self._views = self.views()

    def fits(self, items):
        """Whether the plan was made for these items' arrays (the same objects, in order)."""
        arrays = self.arrays
        return len(arrays) == len(items) and all(map(is_, arrays, map(_array, items)))

    def _buffers(self):
        """The concatenations' buffers, zero-padded to a multiple of 64 elements (blas_axpy's calls)."""
        padded = -(-self.total // 64) * 64
        return np.zeros(padded, np.float32), np.zeros(padded, np.float32)

    def views(self):
        """What a step writes through: (the parameters' concatenation, the gradients', their buffers' addresses,
        the buffers' size, (flat parameter, its part of the result) per parameter). The kept buffers' once; else
        new buffers each step, where keeping them would hold too much memory between steps."""
        if self._views is not None:
            return self._views
        z, g = (self.z, self.g) if self.z is not None else self._buffers()
        new = z[:self.total]
        return (new, g[:self.total], z.ctypes.data, g.ctypes.data, z.size,
                [(flat, new[part]) for flat, part in self.parts])


def plan_for(cached, items):
    """The plan for `items` ((parameter, array, gradient array) per parameter): `cached` if it was made for
    the same arrays, else a new one; None where the update can't be fused (not float32, a view, or one
    array twice: one at a time, in order, is what those need)."""
    if not ENABLED:
        return None
    if cached is not None and cached.fits(items):
        return cached
    arrays = tuple(data for _, data, _ in items)
    if any(a.dtype != np.float32 or a.base is not None for a in arrays) or len(set(map(id, arrays))) < len(arrays):
        return None
    return FusedPlan(arrays)
