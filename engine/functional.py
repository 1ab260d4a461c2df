"""torch.* functions built from op-table primitives, in the same node structure PyTorch builds."""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import einsum_parse
from .boundary import check_where, expect_tensor
from .creation import tensor
from .dispatch import accepts_numpy_names
from .ops import OPS
from .tensor_core import _REAL, Tensor, _dim, apply
from .tensor_index import _index_key, index  # noqa: F401 — torch's functional forms of Tensor methods
from .tensor_math import matmul as _matmul


def _t(x):
    if isinstance(x, Tensor):
        return x
    return tensor(x)


dot = Tensor.dot
mv = Tensor.mv
bmm = Tensor.bmm


def cat(tensors, dim=0):
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = _dim(dim, tensors[0].ndim)
    ref = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.ndim != len(ref) or builtins.any(x.shape[j] != ref[j] for j in range(len(ref)) if j != d):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                               f"{ref[1 - d] if len(ref) > 1 else ref[0]} but got size "
                               f"{x.shape[1 - d] if x.ndim > 1 else x.shape[0]} for tensor number {i} in the list.")
    return apply(OPS["cat"], tensors, (d,))


concat = cat


def stack(tensors, dim=0):
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at entry 0 "
                               f"and {list(x.shape)} at entry {i}")
    return apply(OPS["stack"], tensors, (_dim(dim, tensors[0].ndim + 1),))


def where(condition, input=None, other=None):  # noqa: A002
    if input is None and other is None:
        expect_tensor(condition, "where", "condition", 1)
        return tuple(Tensor._wrap(i) for i in np.nonzero(condition._data))
    check_where(condition, input, other)
    return apply(OPS["where"], (condition, input, other))


def maximum(a, b):
    return apply(OPS["maximum"], (_t(a), _t(b)))


def minimum(a, b):
    return apply(OPS["minimum"], (_t(a), _t(b)))


def maximum_or_minimum(name, a, b):
    return maximum(a, b) if name == "max" else minimum(a, b)


def softmax(x, dim=None, dtype=None):
    expect_tensor(x, "softmax", "input", 1)
    return x.softmax(dim if dim is not None else -1)


def log_softmax(x, dim=None, dtype=None):
    expect_tensor(x, "log_softmax", "input", 1)
    return x.log_softmax(dim if dim is not None else -1)


def _unary(name):
    def fn(input, *args, **kwargs):  # noqa: A002 — torch's keyword name: torch.exp(input=x)
        return getattr(_t(input), name)(*args, **kwargs)

    fn.__name__ = name
    return fn


exp, log, sin, cos, tanh, sigmoid, relu, sqrt, reciprocal, sign = (
    _unary(n) for n in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "reciprocal", "sign"))
nan_to_num = _unary("nan_to_num")
isnan, isinf, isfinite, isposinf, isneginf, isreal = (
    _unary(n) for n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal"))
(exp2, log2, log10, rsqrt, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, trunc, frac, deg2rad, rad2deg,
 arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix) = (
    _unary(n) for n in ("exp2 log2 log10 rsqrt tan asin acos atan sinh cosh asinh acosh atanh trunc frac deg2rad "
                        "rad2deg arcsin arccos arctan arcsinh arccosh arctanh fix").split())
all = _unary("all")  # noqa: A001 — torch.all
any = _unary("any")  # noqa: A001 — torch.any
clamp = clip = _unary("clamp")
sum = _unary("sum")  # noqa: A001 — torch.sum
mean = _unary("mean")
argmax = _unary("argmax")
argmin = _unary("argmin")
reshape = _unary("reshape")
flatten = _unary("flatten")
transpose = _unary("transpose")
permute = _unary("permute")
squeeze = _unary("squeeze")
unsqueeze = _unary("unsqueeze")
t = _unary("t")
square = _unary("square")
neg = _unary("neg")
clone = _unary("clone")
detach = _unary("detach")
numel = _unary("numel")


def abs(x):  # noqa: A001
    return _t(x).abs()


@accepts_numpy_names
def max(input, dim=None, keepdim=False):  # noqa: A001, A002 — torch.max(x, axis=1) too
    return _t(input).max(dim, keepdim)


@accepts_numpy_names
def min(input, dim=None, keepdim=False):  # noqa: A001, A002
    return _t(input).min(dim, keepdim)


def pow(input, exponent):  # noqa: A001, A002 — torch's keyword names: torch.pow(input=x, exponent=2)
    if isinstance(input, _REAL):
        return exponent.__rpow__(input)
    return _t(input) ** exponent


def add(input, other, *, alpha=1):  # noqa: A002
    if isinstance(input, _REAL) and isinstance(other, Tensor) and alpha == 1:  # torch.add(3, t): 3 stays a number
        return other + input
    return _t(input).add(other, alpha=alpha)


def sub(input, other, *, alpha=1):  # noqa: A002
    if isinstance(input, _REAL) and not isinstance(other, _REAL):  # torch.sub(5, t): 5 - t, in t's dtype
        return (other * alpha if alpha != 1 else other).__rsub__(input)
    return _t(input).sub(other, alpha=alpha)


def mul(input, other):  # noqa: A002
    if isinstance(input, _REAL) and isinstance(other, Tensor):  # torch.mul(3, t): 3 is a Python number, not a tensor
        return other * input
    return _t(input) * other


def div(input, other, *, rounding_mode=None):  # noqa: A002
    if rounding_mode is None:
        return _t(input) / other
    if rounding_mode in ("floor", "trunc"):
        return _t(input).div(other, rounding_mode=rounding_mode)
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


def remainder(input, other):  # noqa: A002
    if isinstance(input, _REAL):  # torch.remainder(5, x): PyTorch's Scalar_Tensor overload
        return other.__rmod__(input)
    return _t(input).remainder(other)


def fmod(input, other):  # noqa: A002
    return _t(input).fmod(other)


def floor_divide(input, other):  # noqa: A002
    if isinstance(input, _REAL):
        return other.__rfloordiv__(input)
    return _t(input).floor_divide(other)


def matmul(input, other):  # noqa: A002 — torch.matmul(input=a, other=b)
    return _matmul(input, other)


def mm(input, mat2):  # noqa: A002
    expect_tensor(input, "mm", "input", 1)
    return input.mm(mat2)


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def equal(a, b) -> bool:
    expect_tensor(a, "equal", "input", 1)
    expect_tensor(b, "equal", "other", 2)
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))


# ---------------------------------------------------------------- tensor functions tutorials use (issue 9 section 5)
def _method(name, what="input"):
    """torch.name(x, ...) as x.name(...), after PyTorch's check that x is a tensor."""
    def fn(input, *args, **kwargs):  # noqa: A002
        expect_tensor(input, name, what, 1)
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    return fn


(logsumexp, gather, scatter, scatter_add, masked_fill, cumsum, cumprod, topk, sort, argsort, chunk, split, tril,
 triu, diag, diagonal, outer, ger, flip, fliplr, flipud, roll, index_select, isclose, clamp_min, clamp_max, erf, log1p,
 expm1, atan2, arctan2, floor, ceil, round, prod, std, var, argwhere, narrow) = (  # noqa: A001
    _method(n) for n in ("logsumexp gather scatter scatter_add masked_fill cumsum cumprod topk sort argsort chunk "
                         "split tril triu diag diagonal outer ger flip fliplr flipud roll index_select isclose "
                         "clamp_min clamp_max erf log1p expm1 atan2 arctan2 floor ceil round prod std var "
                         "argwhere narrow").split())


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    expect_tensor(input, "std_mean", "input", 1)
    return input._spread("std", dim, unbiased, keepdim, correction, with_mean=True)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    expect_tensor(input, "var_mean", "input", 1)
    return input._spread("var", dim, unbiased, keepdim, correction, with_mean=True)


def nonzero(input, *, as_tuple=False):  # noqa: A002
    expect_tensor(input, "nonzero", "input", 1)
    return input.nonzero(as_tuple=as_tuple)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):  # noqa: A002 — torch.norm(x, p, dim)
    expect_tensor(input, "norm", "input", 1)
    return input.norm(p, dim, keepdim, dtype)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    expect_tensor(a, "allclose", "input", 1)
    expect_tensor(b, "allclose", "other", 2)
    return a.allclose(b, rtol, atol, equal_nan)


def einsum(equation, *operands):
    """torch.einsum as PyTorch runs it: repeated subscripts become diagonals, subscripts only one operand has
    and the output lacks are summed, and each pair of operands is contracted by one bmm between permutes and
    views (a pair with nothing to contract is a broadcast multiply)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    for i, x in enumerate(operands):
        expect_tensor(x, "einsum", "operands", i + 2)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    terms, out = einsum_parse.parse(equation, [x.shape for x in operands])  # '...' expanded into free letters
    sizes = {}
    for i, (term, x) in enumerate(zip(terms, operands)):
        for ch, n in zip(term, x.shape):
            if sizes.setdefault(ch, n) != n and n != 1 and sizes[ch] != 1:
                raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {sizes[ch]}")
            sizes[ch] = builtins.max(sizes[ch], n)
    seen = set()
    for ch in out:  # a set, not out.count: the equation is program text of any length
        if ch in seen:
            raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
        seen.add(ch)
        if ch not in sizes:
            raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any input "
                               "operand")
    return _einsum_contract(operands, terms, out, sorted(ch for ch in sizes if ch not in out))


def _einsum_contract(operands, terms, out, contracted):
    """PyTorch's einsum (ATen Linear.cpp), node for node: every operand is laid out as [output subscripts,
    contracted subscripts] (diagonal + movedim for a repeated subscript, unsqueeze for a missing one, one permute);
    dims only one operand has are summed (keepdim); operands are contracted left to right by sumproduct_pair;
    the contracted size-1 dims are viewed away at the end (a single operand sums them)."""
    order = list(out) + contracted
    ops = []
    for x, term in zip(operands, terms):
        where = {}
        labels = list(term)
        j = 0
        while j < len(labels):
            ch = labels[j]
            if ch in where:  # a repeated subscript: its diagonal, moved back to the first one's place
                first = where[ch]
                x = x.diagonal(0, first, j)
                x = x.permute(*_moved_last_to(x.ndim, first))
                del labels[j]
                continue
            where[ch] = j
            j += 1
        perm = [where.get(ch, -1) for ch in order]
        for k, p in enumerate(perm):
            if p == -1:
                x = x.unsqueeze(-1)
                perm[k] = x.ndim - 1
        ops.append(x.permute(*perm))
    n_out, n_all = len(out), len(order)
    if len(ops) == 1:
        x = ops[0]
        return x.sum(tuple(range(n_out, n_all))) if n_all > n_out else x
    counts = [builtins.sum(1 for x in ops if x.shape[d] != 1) for d in range(n_all)]
    for i, x in enumerate(ops):
        alone = [d for d in range(n_out, n_all) if x.shape[d] != 1 and counts[d] == 1]
        if alone:
            ops[i] = x.sum(alone, keepdim=True)
            for d in alone:
                counts[d] = 0
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sums, b_sums = [], [], []
        for d in range(n_out, n_all):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a.shape[d] != 1:
                    a_sums.append(d)
                    counts[d] = 0
                elif b.shape[d] != 1:
                    b_sums.append(d)
                    counts[d] = 0
        if a_sums:
            a = a.sum(a_sums, keepdim=True)
        if b_sums:
            b = b.sum(b_sums, keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    x = ops[0]
    return x.view(*x.shape[:n_out]) if n_all > n_out else x


def _moved_last_to(ndim, dim):
    """The permutation of movedim(-1, dim)."""
    rest = list(range(ndim - 1))
    return rest[:dim] + [ndim - 1] + rest[dim:]


def _sumproduct_pair(left, right, sum_dims):
    """PyTorch's sumproduct_pair (keepdim): a broadcast multiply when nothing is summed, else permute and reshape
    both to (lro, lo, sum) x (lro, sum, ro), one bmm, view, permute back."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, keepdim=True)
            elif sr:
                right = right.sum(i, keepdim=True)
        elif sl and sr:
            lro.append(i)
        elif sl:
            lo.append(i)
        else:
            ro.append(i)
    lro_size = int(np.prod([left.shape[d] for d in lro]))
    lo_size = int(np.prod([left.shape[d] for d in lo]))
    ro_size = int(np.prod([right.shape[d] for d in ro]))
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = left.permute(*(lro + lo + sum_dims + ro)).reshape(lro_size, lo_size, sum_size)
    right = right.permute(*(lro + sum_dims + ro + lo)).reshape(lro_size, sum_size, ro_size)
    return apply(OPS["bmm"], (left, right)).view(*out_size).permute(*operm)


_MESHGRID_INDEXING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


def meshgrid(*tensors, indexing=None):
    """PyTorch's meshgrid: each input viewed along its own dim and expanded to all the lengths ("ij"); "xy" swaps the
    first two inputs and the first two outputs. Without `indexing`, PyTorch warns and uses "ij"."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(_MESHGRID_INDEXING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for i, x in enumerate(tensors):
        expect_tensor(x, "meshgrid", "tensors", i + 1)
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {x!r}")
        if x.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
    refs = list(tensors)
    swap = indexing == "xy" and len(refs) >= 2
    if swap:
        refs[0], refs[1] = refs[1], refs[0]
    shape = tuple(x.numel() for x in refs)
    grids = []
    for i, x in enumerate(refs):
        view_shape = [1] * len(refs)
        view_shape[i] = -1
        grids.append(x.view(*view_shape).expand(*shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
