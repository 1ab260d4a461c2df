"""Tensor's reductions: sum, mean, max/min (values and indices), argmax/argmin, norm."""
from __future__ import annotations

from . import dtypes, registry
from .dispatch import _dim, _dims, apply
from .linalg import amax as _amax
from .linalg import amin as _amin
from .linalg import matrix_norm
from .ops import OPS
from .tensor_funcs import return_type

max_result = return_type("max")  # prints as torch.return_types.max(values=..., indices=...)
min_result = return_type("min")


class ReduceMixin:
    """Reductions over all elements or along dims."""

    __slots__ = ()

    # ----- reductions -----
    def amax(self, dim=(), keepdim=False):
        return _amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim=False):
        return _amin(self, dim, keepdim)

    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return apply(OPS["sum"], (self,))
        return apply(OPS["sum_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def mean(self, dim=None, keepdim=False):
        if self._data.dtype.kind != "f":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {dtypes.scalar_type_name(self._data.dtype)}")
        if dim is None:
            return apply(OPS["mean"], (self,))
        return apply(OPS["mean_dim"], (self,), (_dims(dim, self.ndim), keepdim))

    def _extreme(self, name, dim, keepdim, result):
        if dim is None:
            if self._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return apply(OPS[name], (self,))
        if isinstance(dim, registry.Tensor):  # torch.max(a, b): the elementwise maximum
            return apply(OPS["maximum" if name == "max" else "minimum"], (self, dim))
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

    def all(self, dim=None, keepdim=False):
        return apply(OPS["all"], (self,), (None if dim is None else _dims(dim, self.ndim), keepdim))

    def any(self, dim=None, keepdim=False):
        return apply(OPS["any"], (self,), (None if dim is None else _dims(dim, self.ndim), keepdim))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """PyTorch's Tensor.norm: a vector norm over dim (all elements by default); "fro" is the 2-norm."""
        if isinstance(p, str):
            if p == "nuc":  # torch.linalg.matrix_norm's: the sum of the singular values
                return matrix_norm(self, "nuc", (-2, -1) if dim is None else (dim,) if isinstance(dim, int) else dim, keepdim)
            if p != "fro":
                raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
            p = 2
        if self._data.dtype.kind != "f":
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               + dtypes.scalar_type_name(self._data.dtype))
        if p == 2 and dim is None and not keepdim:
            return apply(OPS["norm"], (self,))
        dims = None if dim is None else _dims(dim, self.ndim)
        if not self.ndim:
            dims = None  # a 0-d tensor's dim 0 (or -1, checked above) is the tensor itself: numpy has no axis
        return apply(OPS["vector_norm"], (self,), (float(p), dims, keepdim))
