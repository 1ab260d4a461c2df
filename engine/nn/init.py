"""torch.nn.init: in-place initialisers drawing from the engine's generator."""
import contextlib
import math

from ..autograd import STATE


@contextlib.contextmanager
def no_grad():
    """Initialisation is setup, not part of the program's graph: no grad and nothing recorded."""
    prev = STATE.grad_enabled, STATE.recorder
    STATE.grad_enabled, STATE.recorder = False, None
    try:
        yield
    finally:
        STATE.grad_enabled, STATE.recorder = prev


def uniform_(t, a=0.0, b=1.0):
    with no_grad():
        return t.uniform_(a, b)


def normal_(t, mean=0.0, std=1.0):
    with no_grad():
        return t.normal_(mean, std)


def zeros_(t):
    with no_grad():
        return t.zero_()


def ones_(t):
    with no_grad():
        return t.fill_(1.0)


def constant_(t, val):
    with no_grad():
        return t.fill_(val)


def _fans(t):
    fan_in = t.shape[1] if t.ndim > 1 else t.shape[0]
    return fan_in, t.shape[0]


def kaiming_uniform_(t, a=0.0, nonlinearity="leaky_relu"):
    fan_in, _ = _fans(t)
    gain = math.sqrt(2.0 / (1 + a * a)) if nonlinearity == "leaky_relu" else math.sqrt(2.0)
    bound = gain * math.sqrt(3.0 / fan_in)
    return uniform_(t, -bound, bound)


def xavier_uniform_(t, gain=1.0):
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t, gain=1.0):
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))
