"""Tensor's shape ops: view/reshape, flatten, transpose/permute, squeeze/unsqueeze, expand, clone."""
from __future__ import annotations

import numpy as np

from .dispatch import _dim, _dims, _infer_shape, _shape_arg, apply
from .grad_mode import STATE
from .nodes import INPLACE_NODE_NAMES, NODE_CLASSES
from .ops import OPS

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


class ShapeMixin:
    """Ops that change a tensor's shape or layout, not its values."""

    __slots__ = ()

    # ----- shape -----
    def view(self, *shape):
        shape = _infer_shape(_shape_arg(shape), self._data.size)
        if not _viewable(self._data, shape):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return apply(OPS["view"], (self,), (shape,))

    def reshape(self, *shape):
        shape = _infer_shape(_shape_arg(shape), self._data.size)
        if _viewable(self._data, shape):
            return apply(OPS["view"], (self,), (shape,))
        # PyTorch copies a non-contiguous tensor first: CloneBackward0 under UnsafeViewBackward0.
        return apply(OPS["unsafe_view"], (apply(OPS["clone"], (self,)),), (shape,))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
        if s == e:
            return self
        shape = self.shape[:s] + (-1,) + self.shape[e + 1:]
        return self.reshape(shape)

    def transpose(self, dim0, dim1):
        return apply(OPS["transpose"], (self,), (_dim(dim0, self.ndim), _dim(dim1, self.ndim)))

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return apply(OPS["t"], (self,))

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def t_(self):
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self._shape_inplace("t", ())

    def transpose_(self, dim0, dim1):
        return self._shape_inplace("transpose", (_dim(dim0, self.ndim), _dim(dim1, self.ndim)))

    def _shape_inplace(self, op_name, params):
        """t_ / transpose_: the tensor itself takes the new layout (a view of the same memory, as torch's strides);
        under autograd its history is rebased onto the op's node, named as PyTorch names the in-place form."""
        self._refuse_leaf_inplace()  # a leaf, or a view of one, that requires grad: PyTorch's two errors
        if STATE.grad_enabled and self._requires_grad:
            result = apply(OPS[op_name], (self,), params)
            if op_name in INPLACE_NODE_NAMES:  # the squeeze_/unsqueeze_ rows carry their in-place names already
                result._grad_fn.__class__ = NODE_CLASSES[INPLACE_NODE_NAMES[op_name]]
            self._data, self._grad_fn = result._data, result._grad_fn
        else:
            self._data = OPS[op_name].forward(self._data, *params)
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, op_name + "_")
        return self

    @property
    def T(self):  # noqa: N802
        return self.permute(*reversed(range(self.ndim)))  # (PermuteBackward0 also for 0-d and 1-d, as torch's)

    @property
    def mT(self):  # noqa: N802
        self._need_matrices("mT")
        return self.transpose(-2, -1)

    @property
    def mH(self):  # noqa: N802 — real tensors: the conjugate is the tensor itself
        self._need_matrices("mH")
        return self.transpose(-2, -1)

    @property
    def H(self):  # noqa: N802
        if self.ndim == 0:
            return self  # PyTorch warns that H of a 0-d tensor is deprecated and returns it
        if self.ndim != 2:
            hint = ". For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "."
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor{hint}")
        return self.transpose(0, 1)

    def _need_matrices(self, name):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")

    def unflatten(self, dim, sizes):
        """dim split into `sizes` (one may be -1): a view, PyTorch's ViewBackward0."""
        if not isinstance(sizes, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            raise TypeError("unflatten(): argument 'sizes' (position 2) must be tuple of ints, not "
                            + type(sizes).__name__)
        if self.ndim == 0:
            raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
                               "dimensions")
        d = _dim(dim, self.ndim)
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        size = self.shape[d]
        if sizes.count(-1) > 1:
            raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        fits = size % known == 0 if -1 in sizes and known else known == size
        if not fits:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                               f"({size}) in the input tensor")
        middle = tuple(size // known if s == -1 else s for s in sizes)
        return self.view(self.shape[:d] + middle + self.shape[d + 1:])

    def squeeze_(self, dim=None):
        if dim is None:
            return self._shape_inplace("squeeze_inplace", ())
        if isinstance(dim, (tuple, list)):
            dims = tuple(d for d in _dims(dim, self.ndim) if self._data.shape[d] == 1)
            return self._shape_inplace("squeeze_dims_inplace", (dims,))
        return self._shape_inplace("squeeze_dim_inplace", (_dim(dim, self.ndim),))

    def unsqueeze_(self, dim):
        return self._shape_inplace("unsqueeze_inplace", (_dim(dim, self.ndim + 1),))

    # ----- memory layout (numpy's strides are torch's here: a transposed tensor is not contiguous in either)
    def is_contiguous(self, memory_format=None):
        data = self._data
        return not isinstance(data, np.ndarray) or bool(data.flags.c_contiguous)

    def element_size(self):
        return int(np.dtype(self._data.dtype).itemsize)

    @property
    def itemsize(self):
        return self.element_size()

    @property
    def nbytes(self):
        return int(np.size(self._data)) * self.element_size()

    def permute(self, *dims):
        dims = tuple(_dim(d, self.ndim) for d in _shape_arg(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               "length of the desired ordering of dimensions i.e. input.dim() = "
                               f"{self.ndim} is not equal to len(dims) = {len(dims)}")
        return apply(OPS["permute"], (self,), (dims,))

    def squeeze(self, dim=None):
        if dim is None:
            return apply(OPS["squeeze"], (self,))
        if isinstance(dim, (tuple, list)):
            dims = tuple(d for d in _dims(dim, self.ndim) if self._data.shape[d] == 1)
            return apply(OPS["squeeze_dims"], (self,), (dims,))
        return apply(OPS["squeeze_dim"], (self,), (_dim(dim, self.ndim),))

    def unsqueeze(self, dim):
        return apply(OPS["unsqueeze"], (self,), (_dim(dim, self.ndim + 1),))

    def expand(self, *shape):
        shape = _shape_arg(shape)
        lead = len(shape) - self.ndim
        shape = tuple(self._data.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        try:
            np.broadcast_shapes(self._data.shape, shape)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor must match the existing size at non-singleton "
                               f"dimension. Target sizes: {list(shape)}.  Tensor sizes: {list(self.shape)}") from None
        return apply(OPS["expand"], (self,), (shape,))

    def expand_as(self, other):
        return self.expand(other.shape)

    def clone(self):
        return apply(OPS["clone"], (self,))

    def contiguous(self, memory_format=None):
        """self when its elements already lie in row-major order, else a row-major copy (CloneBackward0), so that
        `.t().contiguous().view(-1)` works as in PyTorch."""
        if self.is_contiguous():
            return self
        return apply(OPS["clone_contiguous"], (self,))


def _viewable(arr, shape) -> bool:
    """Whether numpy can reshape without copying: torch's view succeeds exactly then (up to strides)."""
    if isinstance(arr, np.ndarray) and not arr.flags.c_contiguous and arr.size > 1:
        try:
            np.reshape(arr, shape, copy=False)
        except ValueError:
            return False
    return True
