"""torch.erfc / erfinv / lgamma / digamma / polygamma / kthvalue / mode / aminmax / msort / gcd / lcm / isin / vander and their
Tensor methods (issue 21 §3: names a probe of tutorial one-liners found missing), with PyTorch's nodes, dtypes and
argument errors. Composite where ATen composes them (msort sorts, vander takes cumprod then flips)."""
from __future__ import annotations

import numpy as np

from . import creation, dtypes, registry
from .boundary import expect_tensor
from .dispatch import _dim, apply
from .functional import cat
from .ops import OPS
from .tensor_core import Tensor
from .tensor_funcs import return_type
from .tensor_promotion_names import result_type
from .tensor_stats import _int_arg

kthvalue_result = return_type("kthvalue")
mode_result = return_type("mode")
aminmax_result = return_type("aminmax", ("min", "max"))


def _floating(t):
    return t if t._data.dtype.kind == "f" else t.float()


def erfc(input):  # noqa: A002 — torch's names
    """1 - erf(x), without its cancellation (MKL's erfc, as ATen's)."""
    expect_tensor(input, "erfc", "input", 1)
    return apply(OPS["erfc"], (_floating(input),))


def erfinv(input):  # noqa: A002
    """The inverse of erf on (-1, 1): ±inf at ±1, NaN outside (MKL's, as ATen's)."""
    expect_tensor(input, "erfinv", "input", 1)
    return apply(OPS["erfinv"], (_floating(input),))


def _not_bool(input, kernel):  # noqa: A002
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _picked_dim(input, fn, dim, position):  # noqa: A002
    """The dim a row-picking reduction reads (checked as ATen does), and whether it has rows to pick from."""
    d = _dim(_int_arg(dim, fn, "dim", position), input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")
    return d


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """The k-th smallest value of each row along `dim` and its index (KthvalueBackward0: the gradient to it)."""
    expect_tensor(input, "kthvalue", "input", 1)
    k = _int_arg(k, "kthvalue", "k", 2)
    _not_bool(input, "kthvalue_cpu")
    d = _picked_dim(input, "kthvalue", dim, 3)
    if not 1 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        return kthvalue_result(input.clone(), creation.tensor(0))
    keep = bool(keepdim)
    return kthvalue_result(apply(OPS["kthvalue"], (input,), (k, d, keep)),
                           apply(OPS["kthvalue_indices"], (input,), (k, d, keep)))


def mode(input, dim=-1, keepdim=False):  # noqa: A002
    """The most frequent value of each row (the smallest of equally frequent ones) and the index of its last copy."""
    expect_tensor(input, "mode", "input", 1)
    d = _picked_dim(input, "mode", dim, 2)
    if input.ndim == 0:
        return mode_result(input.clone(), creation.tensor(0))
    keep = bool(keepdim)
    return mode_result(apply(OPS["mode"], (input,), (d, keep)), apply(OPS["mode_indices"], (input,), (d, keep)))


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    """(amin, amax) over all elements or one dim: each shares its gradient among tied extremes (AminmaxBackward0)."""
    expect_tensor(input, "aminmax", "input", 1)
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = tuple(range(input.ndim))
    else:
        d = _dim(_int_arg(dim, "aminmax", "dim", 2), input.ndim)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if input.ndim else ()
    keep = bool(keepdim)
    return aminmax_result(apply(OPS["aminmax_min"], (input,), (dims, keep)),
                          apply(OPS["aminmax_max"], (input,), (dims, keep)))


def msort(input):  # noqa: A002
    """Sorted along the first dim (ATen: sort(dim=0).values; its node is SortBackward0)."""
    expect_tensor(input, "msort", "input", 1)
    return input.sort(dim=0).values


def _integer_pair(fn, input, other):  # noqa: A002
    expect_tensor(input, fn, "input", 1)
    expect_tensor(other, fn, "other", 2)
    for t in (input, other):
        if t._data.dtype.kind not in "iu":
            raise NotImplementedError(f'"{fn}_cpu" not implemented for \'{dtypes.scalar_type_name(t._data.dtype)}\'')
    dtype = dtypes.to_numpy_dtype(result_type(input, other))  # PyTorch's promotion: a 0-d tensor does not widen
    return input._data.astype(dtype, copy=False), other._data.astype(dtype, copy=False)


def gcd(input, other):  # noqa: A002
    """The greatest common divisor of each pair of integers (non-negative; gcd(0, 0) = 0), outside the graph."""
    a, b = _integer_pair("gcd", input, other)
    return registry.new_tensor(np.gcd(a, b))


def lcm(input, other):  # noqa: A002
    a, b = _integer_pair("lcm", input, other)
    return registry.new_tensor(np.lcm(a, b))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is among test_elements (either may be a number): a bool tensor, outside the graph."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (elements, test_elements): "
                        "at least one of them must be a Tensor")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return registry.new_tensor(np.isin(a, b, assume_unique=bool(assume_unique), invert=bool(invert)))


def vander(x, N=None, increasing=False):  # noqa: N803 — torch's name
    """Columns x^(N-1) ... x^0 (or x^0 ... x^(N-1)): ATen's ones then cumprod of x, flipped unless increasing;
    an integer x gives int64, as cumprod does."""
    expect_tensor(x, "vander", "x", 1)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else _int_arg(N, "vander", "N", 2)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu":
        x = x.long()
    columns = [creation.ones((x.shape[0], min(n, 1)), dtype=x.dtype)]
    if n > 1:
        columns.append(x.unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1))
    result = cat(columns, 1) if len(columns) > 1 else columns[0]
    return result if increasing else result.flip([1])


def lgamma(input):  # noqa: A002
    """log |Gamma(x)|: +inf at the poles (LgammaBackward0: digamma)."""
    expect_tensor(input, "lgamma", "input", 1)
    return apply(OPS["lgamma"], (_floating(input),))


def digamma(input):  # noqa: A002
    """The derivative of lgamma (DigammaBackward0: polygamma(1, x))."""
    expect_tensor(input, "digamma", "input", 1)
    return apply(OPS["digamma"], (_floating(input),))


def polygamma(n, input):  # noqa: A002
    """The n-th derivative of digamma (PolygammaBackward0: polygamma(n + 1, x))."""
    n = _int_arg(n, "polygamma", "n", 1)
    expect_tensor(input, "polygamma", "input", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return apply(OPS["polygamma"], (_floating(input),), (n,))


def _erfc_(self):
    return self._inplace("erfc_", lambda a, _: erfc(a))


def _erfinv_(self):
    return self._inplace("erfinv_", lambda a, _: erfinv(a))


Tensor.erfc = erfc
Tensor.lgamma = lgamma
Tensor.digamma = digamma
Tensor.polygamma = lambda self, n: polygamma(n, self)
Tensor.lgamma_ = lambda self: self._inplace("lgamma_", lambda a, _: lgamma(a))
Tensor.digamma_ = lambda self: self._inplace("digamma_", lambda a, _: digamma(a))
Tensor.polygamma_ = lambda self, n: self._inplace("polygamma_", lambda a, _: polygamma(n, a))
Tensor.erfinv = erfinv
Tensor.erfc_ = _erfc_
Tensor.erfinv_ = _erfinv_
Tensor.kthvalue = kthvalue
Tensor.mode = mode
Tensor.aminmax = aminmax
Tensor.msort = msort
Tensor.gcd = gcd
Tensor.lcm = lcm
Tensor.gcd_ = lambda self, other: self._inplace("gcd_", lambda a, b: gcd(a, b), other)
Tensor.lcm_ = lambda self, other: self._inplace("lcm_", lambda a, b: lcm(a, b), other)
