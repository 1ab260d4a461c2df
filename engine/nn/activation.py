"""Activation modules beyond ReLU/Tanh/Sigmoid/Softmax (modules.py), with PyTorch's printouts."""
from __future__ import annotations

from .. import creation
from ..devices import resolve as resolve_device
from . import functional_extra as FX
from . import functional_layers as FL
from . import init as nn_init
from .modules import Module, Parameter


class _Act(Module):
    """An activation with keyword settings: `fields` are printed as PyTorch prints them."""

    fields = ()
    fn = None

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = self.fields + ("inplace",)
        values = dict(zip(names, args))
        values.update(kwargs)
        for name, default in zip(names, self.defaults + (False,)):
            setattr(self, name, values.get(name, default))

    def forward(self, input):  # noqa: A002
        return type(self).fn(input, *(getattr(self, f) for f in self.fields))

    def extra_repr(self):
        s = ", ".join(f"{f}={getattr(self, f)!r}" if isinstance(getattr(self, f), str) else f"{f}={getattr(self, f)}"
                      for f in self.fields)
        if self.inplace:
            s += (", " if s else "") + "inplace=True"
        return s

    defaults = ()


def _act(name, fn, fields=(), defaults=()):
    return type(name, (_Act,), {"fn": staticmethod(fn), "fields": fields, "defaults": defaults,
                                "__module__": __name__})


GELU = _act("GELU", FL.gelu, ("approximate",), ("none",))
LeakyReLU = _act("LeakyReLU", FL.leaky_relu, ("negative_slope",), (0.01,))
ELU = _act("ELU", FL.elu, ("alpha",), (1.0,))
CELU = _act("CELU", FL.celu, ("alpha",), (1.0,))
SELU = _act("SELU", FL.selu)
SiLU = _act("SiLU", FL.silu)
Mish = _act("Mish", FL.mish)
Hardtanh = _act("Hardtanh", FL.hardtanh, ("min_val", "max_val"), (-1.0, 1.0))
ReLU6 = _act("ReLU6", FL.relu6)
Hardswish = _act("Hardswish", FL.hardswish)
Hardsigmoid = _act("Hardsigmoid", FL.hardsigmoid)
LogSigmoid = _act("LogSigmoid", FL.logsigmoid)
Softsign = _act("Softsign", FL.softsign)
Tanhshrink = _act("Tanhshrink", FL.tanhshrink)
Softplus = _act("Softplus", FL.softplus, ("beta", "threshold"), (1.0, 20.0))
Threshold = _act("Threshold", FL.threshold, ("threshold", "value"), (None, None))


class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return FL.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """One learnt negative slope per channel (or one for all), each starting at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return FX.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return FX.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
