"""torch.inner / tensordot / matrix_power / trapezoid / cartesian_prod / combinations: ATen's composites, written as
it writes them on the engine's own ops (so the graph ends in the node PyTorch's does: ViewBackward0, MmBackward0,
MulBackward1, StackBackward0), with PyTorch's argument errors (issue 21 §3)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from . import creation, linalg_more, registry
from .boundary import expect_tensor
from .dispatch import apply
from .functional import meshgrid, mm, stack
from .grad_mode import STATE
from .ops import OPS
from .tensor_core import Tensor


def _dim(d, ndim, fn):
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], "
                         f"but got {d})")
    return d % max(ndim, 1)


def tensordot(a, b, dims=2, out=None):
    """The sum over a's dims_a and b's dims_b of a ⊗ b: both permuted and flattened into one matrix product."""
    expect_tensor(a, "tensordot", "a", 1)
    expect_tensor(b, "tensordot", "b", 2)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    else:
        raise TypeError("tensordot(): argument 'dims' must be an int, a pair of lists of ints or a tensor")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [_dim(d, a.ndim, "tensordot") for d in dims_a]
    dims_b = [_dim(d, b.ndim, "tensordot") for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(*free_a, *dims_a).reshape(math.prod(a.shape[d] for d in free_a), size)
    right = b.permute(*dims_b, *free_b).reshape(size, math.prod(b.shape[d] for d in free_b))
    return mm(left, right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def inner(input, other):  # noqa: A002 — torch's names
    """The sum over the last dims of input ⊗ other (a 0-d operand multiplies)."""
    expect_tensor(input, "inner", "input", 1)
    expect_tensor(other, "inner", "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def matrix_power(input, n):  # noqa: A002
    """A square matrix (or a batch of them) to an integer power, by ATen's binary decomposition (MmBackward0)."""
    expect_tensor(input, "matrix_power", "input", 1)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        rows, cols = (input.shape[-2], input.shape[-1]) if input.ndim >= 2 else (None, None)
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {rows} by {cols} "
                           "matrices")
    if n == 0:  # ATen: a copy of input overwritten with the identity (CopyBackwards when input requires grad)
        eye = creation.eye(input.shape[-1], dtype=input.dtype)
        return input.clone().copy_(eye.expand(*input.shape))
    a = linalg_more.inv(input) if n < 0 else input
    n = abs(n)
    if n == 1:
        return a.clone()
    z = result = None
    while n > 0:
        if STATE.tick is not None:
            STATE.tick()
        bit, n = n % 2, n // 2
        z = a if z is None else z.matmul(z)
        if bit:
            result = z if result is None else result.matmul(z)
    return result


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: spacing dx (1 when neither is given) or the sample points x."""
    expect_tensor(y, "trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx cannot both be given")
    d = _dim(dim, y.ndim, "trapezoid")
    if y.shape[d] == 0:
        return y.sum(d)
    if x is None:
        step = 1.0 if dx is None else dx
        if not isinstance(step, (int, float)) or isinstance(step, bool):
            raise TypeError(f"trapezoid(): argument 'dx' must be Number, not {type(step).__name__}")
        # (ATen multiplies by C++ numbers: Tensor-Scalar products, MulBackward1, not the operator's MulBackward0)
        return _scaled((y.sum(d) - _scaled(y.select(d, 0) + y.select(d, -1), 0.5)), step)
    expect_tensor(x, "trapezoid", "x", 2)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point along the given "
                               f"dimension, but got {x.shape[0]} x values and {y.shape[d]} y values")
        spacing = x.diff().reshape(*[x.shape[0] - 1 if i == d else 1 for i in range(y.ndim)])
    else:
        spacing = x.diff(dim=d)
    n = y.shape[d]
    return apply(OPS["div_scalar"], ((spacing * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d),), (2.0,))


def _scaled(t, c):
    return apply(OPS["mul_scalar"], (t,), (float(c),))


def _vector(t, fn):
    expect_tensor(t, fn, "tensors", 1)
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-d tensor, one per row (StackBackward0)."""
    for t in tensors:
        _vector(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    rows = math.prod(t.shape[0] for t in tensors)
    if STATE.limits is not None:
        STATE.limits.before_alloc((rows, len(tensors)))
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The r-element combinations of a 1-d tensor's elements, in order, one per row (StackBackward0)."""
    _vector(input, "combinations")
    if not isinstance(r, int) or isinstance(r, bool) or r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.shape[0]
    if r == 0:
        return registry.new_tensor(np.zeros(0, input._data.dtype))
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if STATE.limits is not None:  # (the index table is as big as the answer: checked before it is made)
        STATE.limits.before_alloc((count, r))
    picks = (itertools.combinations_with_replacement if with_replacement else itertools.combinations)(range(n), r)
    index = np.array(list(picks), np.int64).reshape(count, r)
    return stack([input[registry.new_tensor(index[:, k])] for k in range(r)], 1)


Tensor.inner = inner
Tensor.matrix_power = matrix_power
