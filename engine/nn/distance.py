"""nn.CosineSimilarity and nn.PairwiseDistance (PyTorch prints neither's settings)."""
from __future__ import annotations

from . import functional_extra as FX
from .modules import Module


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return FX.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return FX.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
