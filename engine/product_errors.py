"""PyTorch's messages for matrix products whose shapes do not fit (mm, mv, dot, bmm, matmul) or whose operands'
dtypes differ (PyTorch never promotes a product's operands: `x_float64 @ w_float32` fails), checked before numpy
runs: a beginner's first error is usually one of these, so they read exactly as torch's."""
from __future__ import annotations

from .dispatch import _broadcast_message
from .dtypes import c_type_name, scalar_type_name


def check_product_dtypes(kind: str, a_dtype, b_dtype) -> None:
    """The operands of one product (``kind``: mm, mv, dot or bmm; mv's are the matrix and the vector) in PyTorch's
    words when their dtypes differ."""
    if a_dtype == b_dtype:
        return
    a, b = scalar_type_name(a_dtype), scalar_type_name(b_dtype)
    if kind == "mm":
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {c_type_name(a_dtype)} != "
                           f"{c_type_name(b_dtype)}")
    if kind == "mv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {b}, {a}, and {b}")
    if kind == "dot":
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a} and {b}")
    raise RuntimeError(f"expected scalar type {a} but found {b}")


def check_matmul_dtypes(a_ndim: int, b_ndim: int, a_dtype, b_dtype) -> None:
    """torch.matmul's dispatch (as check_matmul's), for the dtype error of the product it lands on."""
    if a_dtype == b_dtype:
        return
    if a_ndim == 1 and b_ndim == 1:
        kind = "dot"
    elif b_ndim == 1:
        kind = "mv"
    elif b_ndim == 2:
        kind = "mm"
    else:
        kind = "bmm"
    check_product_dtypes(kind, a_dtype, b_dtype)


def check_addmm_dtypes(self_dtype, mat1_dtype, mat2_dtype) -> None:
    """addmm (and nn.Linear with a bias): the bias against mat2 first, then mat1 against mat2."""
    for name, dtype in (("self", self_dtype), ("mat1", mat1_dtype)):
        if dtype != mat2_dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {scalar_type_name(dtype)} and "
                               f"{scalar_type_name(mat2_dtype)}")


def check_conv_dtypes(input_dtype, weight_dtype, bias_dtype) -> None:
    """A convolution's input against its bias (when it has one), then against its weight."""
    if bias_dtype is not None and bias_dtype != input_dtype:
        raise RuntimeError(f"Input type ({c_type_name(input_dtype)}) and bias type ({c_type_name(bias_dtype)}) should be "
                           "the same")
    if weight_dtype != input_dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input_dtype)} but found "
                           f"{scalar_type_name(weight_dtype)}")


def _x(shape) -> str:
    return "x".join(str(int(n)) for n in shape)


def check_mm(a_shape, b_shape) -> None:
    if len(a_shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b_shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a_shape[1] != b_shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(a_shape)} and {_x(b_shape)})")


def check_mv(a_shape, v_shape) -> None:
    if len(a_shape) != 2 or len(v_shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a_shape)}, {len(v_shape)}")
    if a_shape[1] != v_shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a_shape[0]}), mat ({_x(a_shape)}), vec ({v_shape[0]})")


def check_dot(a_shape, b_shape) -> None:
    if len(a_shape) != 1 or len(b_shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a_shape)}D and {len(b_shape)}D tensors")
    if a_shape[0] != b_shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a_shape[0]}] and src [{b_shape[0]}] to have "
                           f"the same number of elements, but got {a_shape[0]} and {b_shape[0]} elements respectively")


def check_bmm(a_shape, b_shape) -> None:
    if len(a_shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b_shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if (b_shape[0], b_shape[1]) != (a_shape[0], a_shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a_shape[0]}, "
                           f"{a_shape[2]}] but got: [{b_shape[0]}, {b_shape[1]}].")


def check_matmul(a_shape, b_shape) -> None:
    """torch.matmul's dispatch, for the error only: dot, mv, mm, folded mm / mv, or batched bmm."""
    da, db = len(a_shape), len(b_shape)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return check_dot(a_shape, b_shape)
    if da == 2 and db == 1:
        return check_mv(a_shape, b_shape)
    if da == 1 and db == 2:
        return check_mm((1, a_shape[0]), b_shape)
    if da == 2 and db == 2:
        return check_mm(a_shape, b_shape)
    if da >= 3 and db <= 2:  # torch folds the batch dims of a into its rows
        rows = 1
        for n in a_shape[:-1]:
            rows *= int(n)
        folded = (rows, a_shape[-1])
        return check_mv(folded, b_shape) if db == 1 else check_mm(folded, b_shape)
    batch_a = tuple(a_shape[:-2]) if da > 2 else ()
    batch_b = tuple(b_shape[:-2]) if db > 2 else ()
    batch = _broadcast(batch_a, batch_b)
    size = 1
    for n in batch:
        size *= int(n)
    rows_a = a_shape[-2] if da > 1 else 1
    rows_b = b_shape[-2] if db > 1 else b_shape[0]
    check_bmm((size, rows_a, a_shape[-1]), (size, rows_b, b_shape[-1] if db > 1 else 1))


def _broadcast(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(_broadcast_message([_Shaped(a), _Shaped(b)]))
        out.append(max(x, y) if min(x, y) != 0 else 0)
    return tuple(reversed(out))


class _Shaped:
    """A shape standing in for an array where only np.shape / np.ndim are read."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape

    @property
    def ndim(self):
        return len(self.shape)
