"""`Tensor.storage()`, `untyped_storage()`, `data_ptr()`, `storage_offset()`: the memory a tensor and its views share.

A tensor's storage is its base's array (a view op's output shares its input's, engine/views.py `_view_base`), read in
memory order, as PyTorch's TypedStorage lists it. Tutorials use these to show that a view shares memory and a copy does
not (`x.storage().data_ptr() == y.storage().data_ptr()`); the addresses are those of the run's numpy arrays.
"""
from __future__ import annotations

import operator

import numpy as np

from . import dtypes
from .tensor_core import Tensor


def _storage_of(t) -> tuple[np.ndarray, object]:
    """The array that holds t's elements and its views' (its base's, for a view), and what owns it: that array, or the
    tensor itself where it holds a numpy scalar (made an array afresh on each read)."""
    base = t._view_base
    owner = base if base is not None else t
    data = owner._data
    return (data, data) if type(data) is np.ndarray else (np.asarray(data), owner)


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _memory_order(a: np.ndarray) -> np.ndarray:
    """a's elements as they lie in memory (a transposed base lists column by column, as its storage does)."""
    if a.flags.c_contiguous or a.ndim < 2:
        return a.reshape(-1)
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    return np.transpose(a, order).reshape(-1)


class TypedStorage:
    """torch.storage.TypedStorage, read-only: its elements, size, dtype and address."""

    __slots__ = ("_flat", "_array", "_owner")

    def __init__(self, array: np.ndarray, owner=None):
        self._array = array
        self._owner = array if owner is None else owner
        self._flat = self._elements(array)

    @staticmethod
    def _elements(array):
        return _memory_order(array)

    def _title(self) -> str:
        return f"TypedStorage(dtype={self.dtype}, device=cpu)"

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self._flat.dtype)

    @property
    def device(self):
        from .devices import device
        return device("cpu")

    def size(self) -> int:
        return int(self._flat.size)

    def __len__(self) -> int:
        return int(self._flat.size)

    @property
    def shape(self) -> tuple:
        """(size,): what a sandbox counts a tolist() by, as a tensor's."""
        return self._flat.shape

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._flat[i].tolist()
        return self._flat[operator.index(i)].item()

    def __iter__(self):
        flat = self._flat
        return (flat[i].item() for i in range(flat.size))  # one element at a time: no list of them all

    def tolist(self) -> list:
        return self._flat.tolist()

    def element_size(self) -> int:
        return int(self._flat.itemsize)

    def nbytes(self) -> int:
        return int(self._flat.nbytes)

    def data_ptr(self) -> int:
        return _address(self._array) - _lowest_offset(self._array)

    def is_shared(self) -> bool:
        return False

    def type(self) -> str:
        return f"torch.{dtypes.legacy_tensor_type(self._flat.dtype)[:-len('Tensor')]}Storage"

    def __str__(self) -> str:
        data = " " + "\n ".join(str(v) for v in self._flat.tolist())
        return f"{data}\n[torch.storage.{self._title()} of size {len(self)}]"

    __repr__ = __str__


class UntypedStorage(TypedStorage):
    """torch.storage.UntypedStorage: the same memory as bytes."""

    __slots__ = ()

    @staticmethod
    def _elements(array):
        return np.ascontiguousarray(_memory_order(array)).view(np.uint8)

    def _title(self) -> str:
        return "UntypedStorage(device=cpu)"


def _lowest_offset(a: np.ndarray) -> int:
    """Bytes from a's lowest element to its first (a view with negative strides starts past its lowest)."""
    return -sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0 and n > 0)


def storage(self) -> TypedStorage:
    return TypedStorage(*_storage_of(self))


def untyped_storage(self) -> UntypedStorage:
    return UntypedStorage(*_storage_of(self))


def storage_place(x) -> tuple[object, int, int]:
    """(what owns the storage, its bytes, the byte offset of x's first element in it) for a tensor or a storage;
    (None, 0, 0) for an empty tensor, whose data_ptr is 0. A sandbox numbers storages its own way from these."""
    if isinstance(x, TypedStorage):
        return x._owner, x._array.nbytes, 0
    if not np.size(x._data):
        return None, 0, 0
    base, owner = _storage_of(x)
    return owner, base.nbytes, storage_offset(x) * base.itemsize


def data_ptr(self) -> int:
    """The address of t's first element (0 for an empty tensor, as PyTorch's)."""
    data = np.asarray(self._data)
    return _address(data) if data.size else 0


def storage_offset(self) -> int:
    """Elements from the storage's start to t's first element."""
    data = self._data
    base = _storage_of(self)[0]
    if base is data or type(data) is not np.ndarray or not data.size or not np.may_share_memory(base, data):
        return 0
    return (_address(data) - (_address(base) - _lowest_offset(base))) // data.itemsize


Tensor.storage = storage
Tensor.untyped_storage = untyped_storage
Tensor.data_ptr = data_ptr
Tensor.storage_offset = storage_offset
