"""torch.distributions: Normal, Categorical, Bernoulli, Uniform and kl_divergence, as torch/distributions/*.py writes them.

Each is written on the engine's own tensor ops, so log_prob, entropy and rsample carry gradients through the ordinary
graph (a VAE's reparameterised sample, REINFORCE's log-probabilities) and the page draws their nodes. Samples draw from
the generator with the same calls PyTorch makes (normal_ on an empty tensor, torch.normal, torch.rand, torch.multinomial,
torch.bernoulli), so under torch.manual_seed they are PyTorch's numbers. Arguments are validated as PyTorch validates
them by default (validate_args=True), with its messages.
"""
from __future__ import annotations

import math
from numbers import Number

import numpy as np

from . import surface as T
from .nn import functional as F
from .tensor_core import Size, Tensor

_NO_SHAPE = Size()  # torch.Size(): one sample
__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "kl_divergence"]


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Number):
        return T.tensor(float(x), dtype=like.dtype if like is not None else T.get_default_dtype())
    return T.as_tensor(x)


def broadcast_all(*values):
    """torch.distributions.utils.broadcast_all: numbers become tensors of the tensors' dtype, then broadcast."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    return T.broadcast_tensors(*[_as_tensor(v, like) for v in values])


def _shape(sample_shape) -> tuple:
    if isinstance(sample_shape, Tensor) or not isinstance(sample_shape, (tuple, list, Size)):
        raise TypeError(f"sample_shape must be a tuple of ints (torch.Size), not {type(sample_shape).__name__}")
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in sample_shape):
        raise TypeError("sample_shape must be a tuple of ints (torch.Size)")
    return tuple(int(n) for n in sample_shape)


class Distribution:
    """The base: batch and event shapes, sample through rsample without gradient, validation, PyTorch's repr."""

    has_rsample = False
    _validate_args = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = bool(validate_args)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return Size(_shape(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=_NO_SHAPE):
        with T.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_NO_SHAPE):
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _invalid(self, name, value, constraint):
        return ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                          f"distribution {self!r} to satisfy the constraint {constraint}, but found invalid values:\n"
                          f"{value}")

    def _check_value(self, value, ok, support):
        if self._validate_args and not bool(ok.all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def __repr__(self):
        shown = []
        for p in self._params:
            v = self.__dict__.get(p)
            if v is None:
                continue
            shown.append(f"{p}: {format(v, '') if v.numel() == 1 else v.size()}")
        return f"{type(self).__name__}({', '.join(shown)})"


class Normal(Distribution):
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)
        if self._validate_args and not bool((self.scale > 0).all()):
            raise self._invalid("scale", self.scale, "GreaterThan(lower_bound=0.0)")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        with T.no_grad():
            return T.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = T.empty(shape, dtype=self.loc.dtype).normal_()  # torch.distributions.utils._standard_normal
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = _as_tensor(value, self.loc)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        value = _as_tensor(value, self.loc)
        return 0.5 * (1 + T.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + T.log(self.scale)


def _probs_to_logits(probs, is_binary=False):
    eps = float(np.finfo(np.dtype(str(probs.dtype).replace("torch.", ""))).eps)
    clamped = probs.clamp(min=eps, max=1 - eps)
    return T.log(clamped) - T.log1p(-clamped) if is_binary else T.log(clamped)


class _ProbsOrLogits(Distribution):
    """Categorical's and Bernoulli's: one parameterisation given (`_given`), the other made from it on first read, as
    PyTorch's lazy_property makes it (`_to_probs` / `_to_logits`)."""

    @staticmethod
    def _one_of(probs, logits):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")

    def __getattr__(self, name):
        if name == "probs" and "logits" in self.__dict__:
            self.probs = self._to_probs(self.logits)
            return self.probs
        if name == "logits" and "probs" in self.__dict__:
            self.logits = self._to_logits(self.probs)
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self):
        v = self.__dict__[self._given]
        return f"{type(self).__name__}({self._given}: {format(v, '') if v.numel() == 1 else v.size()})"


class Categorical(_ProbsOrLogits):
    @staticmethod
    def _to_probs(logits):
        return F.softmax(logits, dim=-1)

    _to_logits = staticmethod(_probs_to_logits)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._one_of(probs, logits)
        if probs is not None:
            if not isinstance(probs, Tensor) or probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._given = "probs"
        else:
            if not isinstance(logits, Tensor) or logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._given = "logits"
        param = self.probs if probs is not None else self.logits
        self._num_events = param.size()[-1]
        super().__init__(param.size()[:-1] if param.dim() > 1 else Size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((probs >= 0).all()):
            raise self._invalid("probs", self.probs, "Simplex()")

    @property
    def param_shape(self):
        return self.__dict__[self._given].size()

    @property
    def mean(self):
        return T.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return T.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = _shape(sample_shape)
        n = int(np.prod(shape)) if shape else 1
        with T.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = T.multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        value = _as_tensor(value)
        ok = (value >= 0) & (value < self._num_events) & (value == value.floor())
        self._check_value(value, ok, f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})")
        value = value.long().unsqueeze(-1)
        value, log_pmf = T.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(np.float32 if self.logits.dtype == T.float32 else np.float64).min)
        logits = T.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)


class Bernoulli(_ProbsOrLogits):
    _to_probs = staticmethod(T.sigmoid)

    @staticmethod
    def _to_logits(probs):
        return _probs_to_logits(probs, is_binary=True)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            self._given = "probs"
            if validate_args is not False and not bool(((self.probs >= 0) & (self.probs <= 1)).all()):
                raise self._invalid("probs", self.probs, "Interval(lower_bound=0.0, upper_bound=1.0)")
        else:
            (self.logits,) = broadcast_all(logits)
            self._given = "logits"
        super().__init__(self.__dict__[self._given].size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        with T.no_grad():
            return T.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        value = _as_tensor(value, self.logits)
        self._check_value(value, (value == 0) | (value == 1), "Boolean()")
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Uniform(Distribution):
    has_rsample = True
    _params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise self._invalid("low", self.low, "LessThan(upper_bound=" + str(self.high) + ")")

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return T.full_like(self.high, float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=_NO_SHAPE):
        shape = self._extended_shape(sample_shape)
        rand = T.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        value = _as_tensor(value, self.low)
        self._check_value(value, (value >= self.low) & (value < self.high),
                          f"Interval(lower_bound={self.low}, upper_bound={self.high})")
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return T.log(lb.mul(ub)) - T.log(self.high - self.low)

    def cdf(self, value):
        value = _as_tensor(value, self.low)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def entropy(self):
        return T.log(self.high - self.low)


def kl_divergence(p, q):
    """KL(p || q) for the pairs PyTorch registers among these distributions (torch/distributions/kl.py)."""
    if type(p) is Normal and type(q) is Normal:
        var_ratio = (p.scale / q.scale).pow(2)
        t1 = ((p.loc - q.loc) / q.scale).pow(2)
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if type(p) is Categorical and type(q) is Categorical:
        t = p.probs * (p.logits - q.logits)
        t = T.where((q.probs == 0).expand_as(t), T.full_like(t, float("inf")), t)
        t = T.where((p.probs == 0).expand_as(t), T.zeros_like(t), t)
        return t.sum(-1)
    if type(p) is Bernoulli and type(q) is Bernoulli:
        t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
        t1 = T.where(q.probs == 0, T.full_like(t1, float("inf")), t1)
        t1 = T.where(p.probs == 0, T.zeros_like(t1), t1)
        t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
        t2 = T.where(q.probs == 1, T.full_like(t2, float("inf")), t2)
        t2 = T.where(p.probs == 1, T.zeros_like(t2), t2)
        return t1 + t2
    if type(p) is Uniform and type(q) is Uniform:
        result = ((q.high - q.low) / (p.high - p.low)).log()
        return T.where((q.low > p.low) | (q.high < p.high), T.full_like(result, float("inf")), result)
    raise NotImplementedError(f"No KL(p || q) is implemented for p = {type(p).__name__}, q = {type(q).__name__}")
