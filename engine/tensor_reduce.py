"""Tensor's reductions: sum, mean, max/min (values and indices), argmax/argmin, norm."""
from __future__ import annotations

from collections import namedtuple

from . import dispatch
from .dispatch import _dim, _dims, apply
from .ops import OPS

max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


class ReduceMixin:
    """Reductions over all elements or along dims."""

    __slots__ = ()

    # ----- reductions -----
    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return apply(OPS["sum"], (self,))
        return apply(OPS["sum_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def mean(self, dim=None, keepdim=False):
        if self._data.dtype.kind != "f":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {str(self.dtype)[6:].capitalize()}")
        if dim is None:
            return apply(OPS["mean"], (self,))
        return apply(OPS["mean_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def _extreme(self, name, dim, keepdim, result):
        if dim is None:
            if self._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return apply(OPS[name], (self,))
        if isinstance(dim, dispatch.Tensor):
            from .functional import maximum_or_minimum

            return maximum_or_minimum(name, self, dim)
        d = _dim(dim, self.ndim)
        values = apply(OPS[name + "_dim"], (self,), (d, keepdim))
        indices = apply(OPS["arg" + name], (self,), (d, keepdim))
        return result(values, indices)

    def max(self, dim=None, keepdim=False):
        return self._extreme("max", dim, keepdim, max_result)

    def min(self, dim=None, keepdim=False):
        return self._extreme("min", dim, keepdim, min_result)

    def argmax(self, dim=None, keepdim=False):
        return apply(OPS["argmax"], (self,), (_dim(dim, self.ndim), keepdim))

    def argmin(self, dim=None, keepdim=False):
        return apply(OPS["argmin"], (self,), (_dim(dim, self.ndim), keepdim))

    def norm(self, p=2):
        if p != 2:
            raise NotImplementedError("flowgrad's norm supports p=2 only")
        return apply(OPS["norm"], (self,))
