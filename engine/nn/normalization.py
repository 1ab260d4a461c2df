"""BatchNorm1d/2d (running statistics, momentum, train/eval), LayerNorm and GroupNorm, as PyTorch builds them."""
from __future__ import annotations

from .. import creation
from ..devices import resolve as resolve_device
from . import functional_extra as FX
from . import functional_layers as FL
from . import init
from .modules import Module, Parameter, _optional_parameters


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _optional_parameters(self, affine, ("weight", "bias"), num_features, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with init.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):  # noqa: A002
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.affine}, track_running_stats={self.track_running_stats}")

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked
            nbt._data = nbt._data + 1  # outside the graph, as PyTorch's add_ under no_grad
            factor = 1.0 / float(nbt._data) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return FL.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                             self.weight, self.bias, bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):  # noqa: A002
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class _InstanceNorm(_BatchNorm):
    """Each sample's channels normalised over their own positions (F.instance_norm); no affine parameters and no
    running statistics unless asked for. An input without its batch dim is one sample."""

    _sample_dims = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):  # noqa: A002
        if input.ndim not in (self._sample_dims, self._sample_dims + 1):
            raise ValueError(f"expected {self._sample_dims}D or {self._sample_dims + 1}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - self._sample_dims
        if input.shape[feature_dim] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), "
                             f"but got: {input.shape[feature_dim]}.")
        if input.ndim == self._sample_dims:
            return self._normalise(input.unsqueeze(0)).squeeze(0)
        return self._normalise(input)

    def _normalise(self, input):  # noqa: A002
        return FL.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                self.training or not self.track_running_stats,
                                self.momentum if self.momentum is not None else 0.0, self.eps)


class InstanceNorm1d(_InstanceNorm):
    _sample_dims = 2


class InstanceNorm2d(_InstanceNorm):
    _sample_dims = 3


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.ones(*self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(*self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        return FL.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation over the last dims (F.rms_norm), with a weight of ones when affine."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.ones(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return FL.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _optional_parameters(self, affine, ("weight",), num_channels, dtype=dtype)
        _optional_parameters(self, affine and bias, ("bias",), num_channels, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return FX.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
