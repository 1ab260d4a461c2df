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


_array = itemgetter(1)  # an item's parameter array


class FusedPlan:
    __slots__ = ("arrays", "small", "big", "parts", "total", "z", "g", "z_address", "g_address",
                 "write_backs", "small_arrays", "kept")

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
        self.z = self.g = None
        if start <= KEEP_UP_TO:
            self.z, self.g, self.z_address, self.g_address = self.buffers()
        # with kept buffers, each parameter's slice of the result is a view made once (a slice costs per step)
        self.write_backs = None if self.z is None else [(flat, self.z[part]) for flat, part in self.parts]
        # what a step reads with kept buffers, made once: (concatenation views, buffer addresses and size)
        self.kept = None if self.z is None else (self.z[:start], self.g[:start], self.z_address, self.g_address,
                                                 self.z.size)

    def fits(self, items):
        """Whether the plan was made for these items' arrays (the same objects, in order)."""
        arrays = self.arrays
        return len(arrays) == len(items) and all(map(is_, arrays, map(_array, items)))

    def buffers(self):
        """The concatenations' buffers, zero-padded to a multiple of 64 elements (blas_axpy's calls), and their
        addresses: the kept ones, or new ones where keeping them would hold too much memory between steps."""
        if self.z is not None:
            return self.z, self.g, self.z_address, self.g_address
        padded = -(-self.total // 64) * 64
        z, g = np.zeros(padded, np.float32), np.zeros(padded, np.float32)
        return z, g, z.ctypes.data, g.ctypes.data


def plan_for(cached, items):
    """The plan for `items` ((parameter, array, gradient array) per parameter): `cached` if it was made for
    the same arrays, else a new one; None where the update can't be fused (not float32, a view, or one
    array twice: one at a time, in order, is what those need)."""
    if cached is not None and cached.fits(items):
        return cached
    arrays = tuple(data for _, data, _ in items)
    if any(a.dtype != np.float32 or a.base is not None for a in arrays) or len(set(map(id, arrays))) < len(arrays):
        return None
    return FusedPlan(arrays)
