"""Tensor's indexing: t[key] (forward and backward via engine.functional.index) and t[key] = value."""
from __future__ import annotations

import numpy as np

from . import dispatch
from .autograd import STATE
from .tensor_inplace import LEAF_INPLACE, _note_write


class IndexMixin:
    """__getitem__ / __setitem__."""

    __slots__ = ()

    # ----- indexing -----
    def __getitem__(self, key):
        from .functional import index

        return index(self, key)

    def __setitem__(self, key, value):
        if self._requires_grad and STATE.grad_enabled:
            if self._grad_fn is None:
                raise RuntimeError(LEAF_INPLACE)
            raise RuntimeError("flowgrad does not record index assignment into a tensor that requires grad; "
                               "build the tensor with torch.cat/torch.stack/torch.where instead")
        from .functional import _index_key

        self._data = np.asarray(self._data)
        _note_write(self)
        self._data[_index_key(key)] = value._data if isinstance(value, dispatch.Tensor) else value
        rec = STATE.recorder
        if rec is not None:
            rec.on_inplace(self, "__setitem__")
