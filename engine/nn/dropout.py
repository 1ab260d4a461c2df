"""Dropout, Dropout1d, Dropout2d: active in train(), identity in eval(); masks from engine/random.py so a
seeded program drops the same elements as PyTorch."""
from __future__ import annotations

from . import functional_layers as FL
from .modules import Module


class _DropoutNd(Module):
    _fn = staticmethod(FL.dropout)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        FL._check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, input):  # noqa: A002
        return type(self)._fn(input, self.p, self.training, self.inplace)


class Dropout(_DropoutNd):
    pass


class Dropout1d(_DropoutNd):
    _fn = staticmethod(FL.dropout1d)


class Dropout2d(_DropoutNd):
    _fn = staticmethod(FL.dropout2d)
