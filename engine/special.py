"""torch.special: the functions it shares with torch (softmax, xlogy, sinc, ...) under their torch.special names, and
its own names for them (expit is sigmoid). Each is the engine's function: the graph shows PyTorch's nodes."""
from __future__ import annotations

from .surface import (  # noqa: F401 — torch.special's names
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    lgamma,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    polygamma,
    round,
    sigmoid,
    sinc,
    softmax,
    xlogy,
)

expit = sigmoid  # torch.special.expit is torch.sigmoid
gammaln = lgamma  # torch.special's names for torch.lgamma / torch.digamma
psi = digamma

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "log1p", "log_softmax", "logit",
           "logsumexp", "polygamma", "psi", "round", "sinc", "softmax", "xlogy"]
