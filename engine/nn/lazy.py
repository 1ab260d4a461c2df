"""Lazy modules (torch.nn.modules.lazy): layers whose parameters take their shapes from the first input.

`nn.LazyLinear(256)` holds `UninitializedParameter`s until it is first called; that call infers `in_features` from
the input, materializes the parameters, initialises them as the eager layer does (drawing from the generator then,
not when the layer was made) and turns the module into the eager class (`cls_to_become`): `type(layer) is nn.Linear`
afterwards, as in PyTorch. Loading a state dict into a lazy module materializes its parameters at the loaded shapes.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from .. import creation, dtypes
from ..tensor_core import Size, Tensor
from . import init
from .conv import Conv1d, Conv2d
from .modules import Linear, Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d

_ENGINE_DIR = os.path.dirname(os.path.dirname(__file__))  # as the code objects name their files
_DATA = Tensor.__dict__["_data"]  # the slot itself: an uninitialized tensor's `_data` attribute refuses every use

_USE_MESSAGE = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a `LazyModule` "
                "or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When using LazyModules "
                "Call `forward` with a dummy batch to initialize the parameters before calling torch functions")
_SHAPE_MESSAGE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                  "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                  "`forward` to initialize the parameters before accessing their attributes.")

def _refused_use():
    """The error for any use of an uninitialized tensor, naming the Tensor method the program called (the outermost
    engine frame that is one), as PyTorch names the function its __torch_function__ saw."""
    name, frame = "op", sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE_DIR):
        code = frame.f_code.co_name
        dunder = code.startswith("__") and code.endswith("__")
        if (dunder or not code.startswith("_")) and hasattr(Tensor, code):
            name = code[2:-2] if dunder and code not in ("__getitem__", "__setitem__") else code
        frame = frame.f_back
    raise ValueError(_USE_MESSAGE.format(f"<method '{name}' of 'torch._C.TensorBase' objects>"))

# the Tensor methods PyTorch lets an uninitialized tensor take (UninitializedTensorMixin._allowed_methods), and its own
_ALLOWED_METHODS = frozenset({"size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
                              "short", "int", "long", "cuda", "cpu", "to", "get_device", "materialize"})


def _refusing(name):
    def refused(*args, **kwargs):
        raise ValueError(_USE_MESSAGE.format(f"<method '{name}' of 'torch._C.TensorBase' objects>"))
    return refused


class UninitializedTensorMixin:
    """What PyTorch lets a program do with a tensor no forward has shaped yet: print it, ask its dtype, device,
    size (torch.Size([0])) and requires_grad, and `materialize` it. Anything else is refused with PyTorch's error
    (its shape with the error load_state_dict users meet)."""

    __slots__ = ()
    _uninitialized = True
    cls_to_become = Tensor
    requires_grad_by_default = False

    def __new__(cls, requires_grad=None, device=None, dtype=None):
        # (Parameter's __new__ would ask requires_grad_, which refuses an uninitialized tensor)
        t = object.__new__(cls)
        dt = creation.empty(0, dtype=dtype, device=device)._data.dtype  # the dtype and device checked as torch.empty's
        t._set_fields(np.zeros(0, dt), cls.requires_grad_by_default if requires_grad is None else bool(requires_grad))
        return t

    def __init__(self, requires_grad=None, device=None, dtype=None):
        pass

    def __getattribute__(self, name):
        # a Tensor method called on it is refused by name, before the method checks anything else (as PyTorch's
        # __torch_function__ refuses it); the few PyTorch allows, and the attributes, are read as they are
        if name[:1] != "_" and name not in _ALLOWED_METHODS:
            method = getattr(Tensor, name, None)
            if callable(method) and not isinstance(method, property):
                return _refusing(name)
        return super().__getattribute__(name)

    @property
    def _data(self):
        _refused_use()

    @_data.setter
    def _data(self, value):
        _DATA.__set__(self, value)

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor `shape` (uninitialised values: zeros here) and turn it into `cls_to_become`."""
        shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
        if not (isinstance(shape, (tuple, list)) and all(isinstance(n, (int, np.integer)) for n in shape)):
            raise TypeError(f"empty(): argument 'size' (position 1) must be tuple of ints, not {type(shape).__name__}")
        made = creation.empty(*shape, dtype=self.dtype if dtype is None else dtype, device=device)
        self.__class__ = self.cls_to_become
        Tensor.data.fset(self, made)  # counted against the run's limits as `p.data = ...` is

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_MESSAGE)

    def size(self, dim=None):
        if dim is None:
            return Size((0,))
        _refused_use()

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(_DATA.__get__(self).dtype)

    @property
    def data(self):
        return Tensor._wrap(np.zeros(0, _DATA.__get__(self).dtype))

    @data.setter
    def data(self, value):  # `module.double()` casts it: still without a shape, of the new dtype
        _DATA.__set__(self, np.zeros(0, value._data.dtype if isinstance(value, Tensor) else np.asarray(value).dtype))

    def is_floating_point(self) -> bool:
        return _DATA.__get__(self).dtype.kind == "f"

    def is_complex(self) -> bool:
        return _DATA.__get__(self).dtype.kind == "c"

    def __deepcopy__(self, memo):
        out = memo[id(self)] = type(self)(requires_grad=self._requires_grad, dtype=self.dtype)
        return out

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle an uninitialized {type(self).__name__}: call forward first")

class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """torch.nn.parameter.UninitializedParameter: a lazy module's parameter before its first forward."""

    __slots__ = ()
    cls_to_become = Parameter
    requires_grad_by_default = True


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """torch.nn.parameter.UninitializedBuffer: a lazy module's buffer (BatchNorm's running statistics)."""

    __slots__ = ()
    cls_to_become = Tensor


def is_lazy(tensor) -> bool:
    """torch.nn.parameter.is_lazy: the tensor waits for a forward to shape it."""
    return isinstance(tensor, UninitializedTensorMixin)

class LazyModuleMixin:
    """A module whose first call shapes its parameters (`initialize_parameters(input)`), then becomes
    `cls_to_become`. As PyTorch's, it runs before the module's forward pre-hooks and its forward."""

    cls_to_become = None
    inferred = ""  # the size the first input decides (in_features, in_channels, num_features)

    def reset_parameters(self):
        """The eager layer's initialisation, once the first input has shaped the parameters (never before)."""
        if not self.has_uninitialized_params() and getattr(self, self.inferred) != 0:
            super().reset_parameters()

    def _lazy_weight(self, out_name, out_size, bias, dtype):
        """A weight (and a bias) waiting for the first input, and the size the layer was made with."""
        self.weight = UninitializedParameter(dtype=dtype)
        setattr(self, out_name, out_size)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def __call__(self, *args, **kwargs):
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)

    def _materialize_from(self, state_dict, prefix=""):
        """load_state_dict's hook: each uninitialized parameter or buffer takes the shape of the tensor loaded
        into it (a lazy one there is left as it is)."""
        for table in (self._parameters, self._buffers):
            for name, t in table.items():
                v = state_dict.get(prefix + name)
                if is_lazy(t) and isinstance(v, Tensor) and not is_lazy(v):
                    with init.no_grad():
                        t.materialize(tuple(v._data.shape))

class LazyLinear(LazyModuleMixin, Linear):
    """nn.LazyLinear(out_features): a Linear whose in_features is the first input's last dimension."""

    cls_to_become = Linear
    inferred = "in_features"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, dtype=dtype, device=device)
        self._lazy_weight("out_features", out_features, bias, dtype)

    def initialize_parameters(self, input, *args, **kwargs):  # noqa: A002
        if self.has_uninitialized_params():
            with init.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # parameters loaded from a state dict: in_features from the input, checked
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvMixin(LazyModuleMixin):
    """nn.LazyConv1d / LazyConv2d(out_channels, kernel_size, ...): in_channels from the first input's channel
    dimension (dim 1, or dim 0 of an unbatched input)."""

    inferred = "in_channels"

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._lazy_weight("out_channels", out_channels, bias, dtype)

    def initialize_parameters(self, input, *args, **kwargs):  # noqa: A002
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with init.no_grad():
                self.weight.materialize(self._weight_shape())
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):  # noqa: A002
        unbatched = self._nd + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d

class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d

class _LazyNormMixin(LazyModuleMixin):
    """nn.LazyBatchNorm1d / 2d(): num_features from the first input's dimension 1."""

    inferred = "num_features"

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = creation.tensor(0)


    def initialize_parameters(self, input, *args, **kwargs):  # noqa: A002
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with init.no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if t is not None:
                        t.materialize((self.num_features,))
                self.reset_parameters()

class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    cls_to_become = BatchNorm1d

class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    cls_to_become = BatchNorm2d

