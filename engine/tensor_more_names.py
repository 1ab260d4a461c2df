"""torch.fmax / fmin / copysign / signbit / sinc / logaddexp / take / float_power / baddbmm / searchsorted /
bucketize / rot90 / tensor_split / ravel / column_stack / logit and their Tensor methods: names tutorials and courses reach
for (issue 21 §3), with PyTorch's nodes, dtypes and argument errors. Composite where PyTorch composes them
(tensor_split slices, ravel views, column_stack concatenates, float_power casts then powers)."""
from __future__ import annotations

import numpy as np

from . import dtypes, registry
from .boundary import expect_tensor
from .dispatch import apply
from .grad_mode import STATE
from .ops import OPS
from .tensor_core import Tensor
from .tensor_tutorial_names import hstack

_NUMBER = (bool, int, float)


def _step():
    """A step of the program's budget (the sandbox's check) per piece made in a loop here: none is unbounded."""
    if STATE.tick is not None:
        STATE.tick()


def _floating(t):
    """An integer or bool tensor in float32, the default dtype (PyTorch's int-to-float ops: sinc, copysign)."""
    return t if t._data.dtype.kind == "f" else t.float()


def fmax(input, other):  # noqa: A002 — torch's names
    """The larger of each pair, a nan losing to a number (torch.maximum propagates it)."""
    expect_tensor(input, "fmax", "input", 1)
    expect_tensor(other, "fmax", "other", 2)
    return apply(OPS["fmax"], (input, other))


def fmin(input, other):  # noqa: A002
    expect_tensor(input, "fmin", "input", 1)
    expect_tensor(other, "fmin", "other", 2)
    return apply(OPS["fmin"], (input, other))


def copysign(input, other):  # noqa: A002
    """|input| with the sign of other: a tensor (CopysignBackward0) or a number (CopysignBackward1); float result."""
    expect_tensor(input, "copysign", "input", 1)
    if isinstance(other, _NUMBER):
        return apply(OPS["copysign_scalar"], (_floating(input),), (float(other),))
    expect_tensor(other, "copysign", "other", 2)
    if input._data.dtype.kind != "f" and other._data.dtype.kind != "f":
        input = _floating(input)  # noqa: A001
    return apply(OPS["copysign"], (input, other))


def signbit(input):  # noqa: A002
    """Whether the sign bit is set (-0.0 too): a bool tensor, outside the graph."""
    expect_tensor(input, "signbit", "input", 1)
    return registry.new_tensor(np.signbit(input._data))


def sinc(input):  # noqa: A002
    """sin(pi x) / (pi x), 1 at 0; an integer tensor computes in the default float dtype."""
    expect_tensor(input, "sinc", "input", 1)
    return apply(OPS["sinc"], (_floating(input),))


def logaddexp(input, other):  # noqa: A002
    """log(exp(input) + exp(other)) without overflow."""
    expect_tensor(input, "logaddexp", "input", 1)
    expect_tensor(other, "logaddexp", "other", 2)
    for t in (input, other):
        if t._data.dtype.kind != "f":
            raise NotImplementedError(f"\"logaddexp_cpu\" not implemented for '{dtypes.scalar_type_name(t._data.dtype)}'")
    return apply(OPS["logaddexp"], (input, other))


def take(input, index):  # noqa: A002
    """input as if flattened, read at index (any shape; negative indices count from the end)."""
    expect_tensor(input, "take", "input", 1)
    expect_tensor(index, "take", "index", 2)
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {dtypes.scalar_type_name(index._data.dtype)}")
    n = int(input._data.size)
    flat = np.asarray(index._data).reshape(-1)
    bad = flat[(flat >= n) | (flat < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")
    return apply(OPS["take"], (input, index))


def float_power(input, exponent):  # noqa: A002
    """input ** exponent in float64 (PyTorch casts both first, so the graph shows ToCopyBackward0 and PowBackward)."""
    if not isinstance(input, Tensor):
        if not isinstance(input, _NUMBER):
            raise TypeError(f"float_power(): argument 'input' must be Tensor or Number, not {type(input).__name__}")
        expect_tensor(exponent, "float_power", "exponent", 2)
        return float(input) ** exponent.double()
    if isinstance(exponent, Tensor):
        return input.double() ** exponent.double()
    if not isinstance(exponent, _NUMBER):
        raise TypeError(f"float_power(): argument 'exponent' must be Tensor or Number, not {type(exponent).__name__}")
    return input.double() ** float(exponent)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """beta * input + alpha * (batch1 @ batch2) over a batch of matrices, one BaddbmmBackward0 node."""
    expect_tensor(input, "baddbmm", "input", 1)
    expect_tensor(batch1, "baddbmm", "batch1", 2)
    expect_tensor(batch2, "baddbmm", "batch2", 3)
    for what, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{what} must be a 3D tensor")
    (b, n, m), (b2, m2, p) = batch1.shape, batch2.shape
    if (b2, m2) != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {m}] but got: "
                           f"[{b2}, {m2}].")
    _check_expands(tuple(input.shape), (b, n, p))
    for name, v in (("beta", beta), ("alpha", alpha)):
        if not isinstance(v, _NUMBER):
            raise TypeError(f"baddbmm(): argument '{name}' must be Number, not {type(v).__name__}")
    return apply(OPS["baddbmm"], (input, batch1, batch2), (beta, alpha))


def _check_expands(shape, target):
    """PyTorch's expand check of baddbmm's input against the product's shape, in its words."""
    if len(shape) > len(target):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    for i in range(1, len(shape) + 1):
        if shape[-i] != 1 and shape[-i] != target[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({shape[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(shape)}")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):  # noqa: A002
    """Where each value would go in the sorted innermost dim of sorted_sequence (its rows matching input's leading
    dims); `right` / side='right' after equal values. int64 (int32 with out_int32), outside the graph."""
    expect_tensor(sorted_sequence, "searchsorted", "sorted_sequence", 1)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                               "right was True")
        right = side == "right"
    seq = sorted_sequence._data
    if sorter is not None:
        expect_tensor(sorter, "searchsorted", "sorter", 5)
        if tuple(sorter.shape) != tuple(np.shape(seq)):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(np.shape(seq))}and got sorter tensor {list(sorter.shape)}")
        seq = np.take_along_axis(seq, sorter._data.astype(np.intp), axis=-1)
    scalar = isinstance(input, _NUMBER)
    if not scalar:
        expect_tensor(input, "searchsorted", "input", 2)
    values = np.asarray(input) if scalar else input._data
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    how = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=how)
    elif scalar or values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(np.shape(values))}")
    else:
        rows, last = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        found = []
        for r, v in zip(rows, last):
            _step()
            found.append(np.searchsorted(r, v, side=how))
        out = np.stack(found).reshape(values.shape)
    return registry.new_tensor(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """The bucket of each value among 1-d boundaries: searchsorted(boundaries, input, right=right)."""
    expect_tensor(boundaries, "bucketize", "boundaries", 2)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """A quarter turn k times, from the first of dims towards the second (Rot90Backward0)."""
    expect_tensor(input, "rot90", "input", 1)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (d % input.ndim if -input.ndim <= d < input.ndim else None for d in dims)
    if d0 is None or d1 is None:
        bad = dims[0] if d0 is None else dims[1]
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {bad})")
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return apply(OPS["rot90"], (input,), (int(k) % 4, (d0, d1)))


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """Views along dim: n sections (the first size % n one longer), or cut at the given indices."""
    expect_tensor(input, "tensor_split", "input", 1)
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {indices_or_sections.ndim} dims")
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        small, extra = divmod(size, n)
        cuts, at = [], 0
        for i in range(n - 1):
            _step()
            at += small + (1 if i < extra else 0)
            cuts.append(at)
    elif isinstance(indices_or_sections, (list, tuple)) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in indices_or_sections):
        cuts = list(indices_or_sections)
    else:
        raise TypeError("tensor_split() received an invalid combination of arguments: indices_or_sections must be "
                        f"an int, a tuple of ints or a tensor, not {type(indices_or_sections).__name__}")
    pieces, start = [], 0
    for end in [*cuts, size]:
        _step()
        lo, hi = min(max(start, 0), size), min(max(end, 0), size)
        pieces.append(input.narrow(dim, lo, max(hi - lo, 0)))
        start = end
    return tuple(pieces)


def ravel(input):  # noqa: A002
    """The elements in one dim: a view of a contiguous tensor, else of its contiguous copy."""
    expect_tensor(input, "ravel", "input", 1)
    return input.contiguous().view(-1)


def column_stack(tensors):
    """Columns side by side: 0-d and 1-d tensors become columns, the rest are concatenated along dim 1."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"column_stack(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = []
    for t in tensors:
        _step()
        expect_tensor(t, "column_stack", "tensors", 1)
        columns.append(t.reshape(-1, 1) if t.ndim <= 1 else t)
    return hstack(columns)


def logit(input, eps=None):  # noqa: A002
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] first when eps is given (LogitBackward0)."""
    expect_tensor(input, "logit", "input", 1)
    if eps is not None and not isinstance(eps, _NUMBER):
        raise TypeError(f"logit(): argument 'eps' must be float, not {type(eps).__name__}")
    return apply(OPS["logit"], (_floating(input),), (None if eps is None else float(eps),))


Tensor.logit = logit
Tensor.fmax = fmax
Tensor.fmin = fmin
Tensor.copysign = copysign
Tensor.signbit = signbit
Tensor.sinc = sinc
Tensor.logaddexp = logaddexp
Tensor.take = take
Tensor.float_power = float_power
Tensor.baddbmm = baddbmm
Tensor.rot90 = rot90
Tensor.tensor_split = tensor_split
Tensor.ravel = ravel
