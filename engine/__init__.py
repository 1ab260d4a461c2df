"""flowgrad's engine: a small numpy PyTorch. `import engine as torch` for the supported subset.

Importing it changes no process state (the worker's process setup tunes malloc: engine/allocator.py) and loads
the core only: torch.nn, torch.optim and torch.utils load on first use (PEP 562 `__getattr__` below), so a
process that needs only the trace contract or the op table (the HTTP server) never loads them.
"""
import importlib as _importlib

from . import autograd, linalg, random
from .autograd import STATE, enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .creation import (
    Variable,
    arange,
    as_tensor,
    bernoulli,
    empty,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .device import accelerator, backends, cuda, device, get_default_device, reset_default_device, set_default_device
from .dtypes import bool_ as bool  # noqa: A001 — torch.bool
from .dtypes import double, dtype, float16, float32, float64, half, int32, int64, long, uint8
from .dtypes import float as float  # noqa: A001, PLC0414
from .dtypes import int as int  # noqa: A001, PLC0414
from .formatting import get_printoptions, reset_printoptions, set_printoptions

# Tensor functions tutorials use (issue 9 section 5)
from .functional import (  # noqa: F811
    abs,
    add,
    allclose,
    arctan2,
    argmax,
    argmin,
    argsort,
    argwhere,
    atan2,
    bmm,
    cat,
    ceil,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    clone,
    concat,
    cos,
    cumprod,
    cumsum,
    detach,
    diag,
    diagonal,
    div,
    dot,
    einsum,
    equal,
    erf,
    exp,
    expm1,
    flatten,
    flip,
    fliplr,
    flipud,
    floor,
    gather,
    ger,
    index_select,
    is_tensor,
    isclose,
    log,
    log1p,
    log_softmax,
    logsumexp,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    mv,
    neg,
    nonzero,
    norm,
    numel,
    outer,
    permute,
    pow,
    prod,
    reciprocal,
    relu,
    reshape,
    roll,
    round,
    scatter,
    scatter_add,
    sigmoid,
    sign,
    sin,
    softmax,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sub,
    sum,
    t,
    tanh,
    topk,
    transpose,
    tril,
    triu,
    unsqueeze,
    var,
    where,
)

# torch.linalg (norms, singular values) and torch.amax / torch.amin (engine/linalg.py)
from .linalg import amax, amin
from .outparam import with_out as _with_out
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .tensor import Size, Tensor

autograd.Variable = Variable  # torch.autograd.Variable: a function that makes a Tensor, kept with the factories
# torch's keyword out= on the functions that make a new tensor (engine/outparam.py)
for _name in ("abs add cat clamp clip concat cos div dot exp log matmul maximum minimum mm mul neg pow reciprocal "
              "sigmoid sign sin sqrt square stack sub tanh").split():
    globals()[_name] = _with_out(globals()[_name], _name)
del _name

# The heavy surface, loaded on first use: `torch.nn`, `from engine import optim`, `torch.utils.data`.
_LAZY = ("nn", "optim", "utils")


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _importlib.import_module(f"{__name__}.{name}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def reset_run_state():
    """Fresh process-wide state for a new program run: grad mode on, default seed, no recorder or limits."""
    STATE.grad_enabled = True
    STATE.recorder = None
    STATE.limits = None
    random.manual_seed(random.DEFAULT_SEED)
    reset_default_device()
    reset_printoptions()


def get_default_dtype():
    return float32


__version__ = "2.13.0+flowgrad"
