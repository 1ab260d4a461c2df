"""torch.special: the functions it shares with torch (softmax, xlogy, sinc, ...) under their torch.special names, and
its own names for them (expit is sigmoid). Each is the engine's function: the graph shows PyTorch's nodes."""
from __future__ import annotations

from .surface import (  # noqa: F401 — torch.special's names
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    round,
    sigmoid,
    sinc,
    softmax,
    xlogy,
)

expit = sigmoid  # torch.special.expit is torch.sigmoid

__all__ = ["erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit", "logsumexp", "round", "sinc", "softmax",
           "xlogy"]
