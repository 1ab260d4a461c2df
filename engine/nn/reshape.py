"""Unflatten (Flatten lives in modules.py)."""
from __future__ import annotations

from .modules import Module


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type " + type(unflattened_size).__name__)
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):  # noqa: A002
        d = self.dim % input.ndim
        shape = tuple(input.shape[:d]) + self.unflattened_size + tuple(input.shape[d + 1:])
        return input.view(*shape)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
