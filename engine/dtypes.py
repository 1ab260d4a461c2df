"""PyTorch's dtype objects over numpy dtypes."""
import builtins
import math

import numpy as np

from .promotion import can_cast


class dtype:  # noqa: N801 — named as torch names it
    __slots__ = ("name", "np", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (from_numpy_dtype, (self.np,))


class _Unavailable(dtype):
    """A dtype PyTorch has and numpy lacks (torch.bfloat16): a program may name it, compare and print it (nanoGPT's
    `{'bfloat16': torch.bfloat16, ...}[dtype]`), and any tensor of it is refused with the reason."""

    __slots__ = ()

    def __init__(self, name: str, itemsize: int):  # noqa: D107 - (the slots, without a numpy dtype)
        self.name, self.is_floating_point, self.itemsize = name, True, itemsize

    @property
    def np(self):
        raise TypeError(f"torch.{self.name} is not available in flowgrad: numpy has no {self.name}, so flowgrad cannot "
                        "compute in it exactly; use torch.float32")

    def __reduce__(self):
        return self.name  # the module's global of that name (pickle and copy keep the one object)


float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
float16 = dtype("float16", np.float16)
int64 = dtype("int64", np.int64)
int32 = dtype("int32", np.int32)
uint8 = dtype("uint8", np.uint8)
int16 = dtype("int16", np.int16)  # issue 21 §3
int8 = dtype("int8", np.int8)
bfloat16 = _Unavailable("bfloat16", 2)  # named, never computed in (numpy has no bfloat16)
bool_ = dtype("bool", np.bool_)
float = float32  # noqa: A001 — torch.float is float32
double = float64
long = int64
int = int32  # noqa: A001
half = float16
short = int16

# PyTorch's ScalarType names, as its messages print them ("expected ... Long", "torch.FloatTensor [3]").
SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                     "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


# the C++ type names ATen's messages print ("expected m1 and m2 to have the same dtype, but got: float != double")
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def c_type_name(np_dtype) -> str:
    name = np.dtype(np_dtype).name
    return _C_TYPE_NAMES.get(name, name)


def scalar_type_name(np_dtype) -> str:
    name = np.dtype(np_dtype).name
    return SCALAR_TYPE_NAMES.get(name, name)


def check_can_cast(src, dst) -> None:
    """PyTorch's refusal to write a result of numpy dtype `src` into a tensor of `dst` (a float into an integer
    tensor, anything but bool into a bool one): an in-place op's or an `out=` argument's."""
    if src is not dst and not can_cast(src, dst):  # an integer result writes into uint8 (int16 -> uint8 wraps)
        raise RuntimeError(f"result type {scalar_type_name(src)} can't be cast to the desired output type "
                           f"{scalar_type_name(dst)}")


def legacy_tensor_type(np_dtype) -> str:
    """`FloatTensor`, `LongTensor`…: PyTorch's legacy type name; `Tensor` for a dtype without one."""
    name = SCALAR_TYPE_NAMES.get(np.dtype(np_dtype).name)
    return name + "Tensor" if name else "Tensor"


# 'FloatTensor' -> float32 ...: the names Tensor.type() accepts (the legacy classes of engine/legacy_tensors.py)
LEGACY_BY_NAME = {SCALAR_TYPE_NAMES[d.np.name] + "Tensor": d for d in (float32, float64, float16, int64, int32, int16, int8,
                                                                     uint8, bool_)}


_BY_NP = {d.np: d for d in (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)}
NP_F32 = np.dtype(np.float32)
NP_F64 = np.dtype(np.float64)


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"unsupported dtype {np_dtype}") from None


def to_numpy_dtype(d) -> np.dtype:
    if isinstance(d, dtype):
        return d.np
    if d is None:
        return None
    if d in (__builtins__["float"] if isinstance(__builtins__, dict) else __import__("builtins").float,):
        return NP_F32
    raise TypeError(f"dtype must be a torch.dtype, not {type(d).__name__}")


def check_fits(value, dtype) -> None:
    """PyTorch's refusal to fill a float tensor with a finite number past its range (torch.full((2,), 1e300) and
    fill_: numpy would store inf)."""
    real, whole = builtins.float, builtins.int  # (this module's float and int are torch's dtypes)
    if dtype.kind == "f" and isinstance(value, (real, whole)) and not isinstance(value, bool):
        number = real(value) if isinstance(value, real) or abs(value) < 2**1024 else math.inf
        if math.isfinite(number) and abs(number) > real(np.finfo(dtype).max) or isinstance(value, whole) and number == math.inf:
            raise RuntimeError(f"value cannot be converted to type {c_type_name(dtype)} without overflow")

