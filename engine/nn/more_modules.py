"""nn.PixelShuffle / PixelUnshuffle, AdaptiveMaxPool1d / 2d, Softmax2d, MarginRankingLoss, TripletMarginLoss,
GaussianNLLLoss, Bilinear and RReLU, with PyTorch's constructors and printouts (their functions:
engine/nn/functional_more.py)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import creation
from ..boundary import expect_attribute, plain_text, type_name
from ..devices import resolve as resolve_device
from ..dtypes import scalar_type_name
from . import functional_more as FM
from . import init
from .loss import _Loss
from .modules import Module, Parameter


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):  # noqa: A002
        return FM.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={plain_text(self.upscale_factor)}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):  # noqa: A002
        return FM.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={plain_text(self.downscale_factor)}"


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={plain_text(self.output_size)}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input):  # noqa: A002
        return FM.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input):  # noqa: A002
        return FM.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input: one SoftmaxBackward0 node."""

    def forward(self, input):  # noqa: A002
        expect_attribute(input, "dim")
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        if input._data.dtype.kind != "f":  # (the engine's softmax would take an integer tensor as float)
            raise NotImplementedError(f"\"softmax_kernel_impl\" not implemented for "
                                      f"'{scalar_type_name(input._data.dtype)}'")
        return input.softmax(-3)


class MarginRankingLoss(_Loss):
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return FM.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if not isinstance(margin, (numbers.Real, np.number)):  # (PyTorch's `margin <= 0` on anything else)
            raise TypeError(f"'<=' not supported between instances of '{type_name(margin)}' and 'int'")
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return FM.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                      swap=self.swap, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):  # noqa: A002
        return FM.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class Bilinear(Module):
    """y = x1^T A x2 + b: weight (out_features, in1_features, in2_features) and bias drawn from U(-1/sqrt(in1),
    1/sqrt(in1)), PyTorch's init (the same numbers under the same seed)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        for position, size in enumerate((out_features, in1_features, in2_features), 1):
            if not isinstance(size, (numbers.Integral, np.integer)):  # torch.empty's argument parser
                raise TypeError(f"empty(): argument 'size' failed to unpack the object at pos {position} with error "
                                f"\"type must be tuple of ints,but got {type_name(size)}\"")
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((int(out_features), int(in1_features), int(in2_features)), dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(int(out_features), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={plain_text(self.in1_features)})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return FM.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={plain_text(self.in1_features)}, in2_features={plain_text(self.in2_features)}, "
                f"out_features={plain_text(self.out_features)}, bias={self.bias is not None}")


class RReLU(Module):
    """Randomized leaky ReLU: in training a slope from U(lower, upper) per element <= 0 (PyTorch's draws), in eval
    the mean slope (lower + upper) / 2."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return FM.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={plain_text(self.lower)}, upper={plain_text(self.upper)}{inplace}"
