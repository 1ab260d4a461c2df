"""The torch surface (`import engine as torch`): every public name of `engine`, loaded by engine/__init__.py on
the first use of any of them, so a process that needs only the trace contract or the op table loads none of it."""
from . import amp, autograd, linalg, random
from .amp import autocast
from .autograd import (
    STATE,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .compiled import compile  # noqa: A004 - torch.compile
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
from .devices import accelerator, backends, cuda, device, get_default_device, reset_default_device, set_default_device
from .dtypes import bfloat16, double, dtype, float16, float32, float64, half, int8, int16, int32, int64, long, short, uint8
from .dtypes import bool_ as bool  # noqa: A001 — torch.bool
from .dtypes import float as float  # noqa: A001, PLC0414
from .dtypes import int as int  # noqa: A001, PLC0414
from .formatting import get_printoptions, reset_printoptions, set_printoptions

# Tensor functions tutorials use (issue 9 section 5)
from .functional import (  # noqa: F811
    abs,
    acos,
    acosh,
    add,
    all,
    allclose,
    any,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    argwhere,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
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
    cosh,
    cumprod,
    cumsum,
    deg2rad,
    detach,
    diag,
    diagonal,
    div,
    dot,
    einsum,
    equal,
    erf,
    exp,
    exp2,
    expm1,
    fix,
    flatten,
    flip,
    fliplr,
    flipud,
    floor,
    floor_divide,
    fmod,
    frac,
    gather,
    ger,
    index_select,
    is_tensor,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    log,
    log1p,
    log2,
    log10,
    log_softmax,
    logsumexp,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    meshgrid,
    min,
    minimum,
    mm,
    mul,
    mv,
    nan_to_num,
    narrow,
    neg,
    nonzero,
    norm,
    numel,
    outer,
    permute,
    pow,
    prod,
    rad2deg,
    reciprocal,
    relu,
    remainder,
    reshape,
    roll,
    round,
    rsqrt,
    scatter,
    scatter_add,
    sigmoid,
    sign,
    sin,
    sinh,
    softmax,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    std_mean,
    sub,
    sum,
    t,
    tan,
    tanh,
    topk,
    transpose,
    tril,
    triu,
    trunc,
    unsqueeze,
    var,
    var_mean,
    where,
)
from .histograms import histc, histogram
from .legacy_tensors import BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor

# torch.linalg (norms, singular values) and torch.amax / torch.amin (engine/linalg.py)
from .linalg import amax, amin
from .linalg_more import cdist, cross, cummax, cummin, det, inverse, kron  # issue 21 §3
from .linalg_solve import corrcoef, cov, pinverse  # issue 21: courses' linear algebra
from .linalg_solve import old_cholesky as cholesky
from .linalg_solve import old_qr as qr
from .linalg_solve import old_slogdet as slogdet
from .linalg_solve import old_svd as svd
from .nn.functional import cosine_similarity, pairwise_distance  # torch.cosine_similarity is F's
from .nn.functional_layers import celu, selu  # torch.selu / torch.celu: the same functions as F's
from .nn.functional_layers import dropout as _dropout
from .outparam import with_out as _with_out
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .storage import TypedStorage, UntypedStorage  # attaches Tensor.storage / data_ptr / storage_offset
from .tensor_binary_names import heaviside, hypot, xlogy  # issue 21 §3
from .tensor_bitwise_names import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
)
from .tensor_composites import cartesian_prod, combinations, inner, matrix_power, tensordot, trapezoid  # issue 21 §3
from .tensor_core import Size, Tensor
from .tensor_extra_names import (  # issue 21 §3
    aminmax,
    digamma,
    erfc,
    erfinv,
    gcd,
    isin,
    kthvalue,
    lcm,
    lgamma,
    mode,
    msort,
    polygamma,
    vander,
)
from .tensor_linalg_names import fill_diagonal_ as _fill_diagonal_  # noqa: F401 — attaches the Tensor methods
from .tensor_methods import eq, ge, greater, greater_equal, gt, le, less, less_equal, lt, ne, not_equal, unbind
from .tensor_more_names import (  # issue 21 §3: names tutorials and courses reach for
    baddbmm,
    bucketize,
    column_stack,
    copysign,
    float_power,
    fmax,
    fmin,
    logaddexp,
    logit,
    ravel,
    rot90,
    searchsorted,
    signbit,
    sinc,
    take,
    tensor_split,
)
from .tensor_promotion_names import can_cast, promote_types, result_type
from .tensor_quantile import nanquantile, quantile  # issue 21: names programs bring
from .tensor_stats import (  # issue 21: names programs bring
    addcdiv,
    addcmul,
    bincount,
    dist,
    median,
    moveaxis,
    movedim,
    nanmean,
    nansum,
    repeat_interleave,
    take_along_dim,
    tril_indices,
    triu_indices,
)
from .tensor_tutorial_names import (
    addmm,
    broadcast_tensors,
    broadcast_to,
    count_nonzero,
    diff,
    empty_like,
    hstack,
    index_add,
    is_floating_point,
    lerp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logspace,
    masked_select,
    relu_,
    row_stack,
    sigmoid_,
    tanh_,
    tile,
    trace,
    unflatten,
    unique,
    vstack,
)
from .threads import get_num_threads, set_num_threads
from .threads import reset as _reset_threads
from .type_info import finfo, iinfo
from .version import __version__  # torch.__version__: the release the engine follows

# torch's other names for the same functions (torch.multiply is torch.mul, ...)
multiply, subtract, divide, true_divide, negative, concatenate = mul, sub, div, div, neg, cat
cuda.amp = amp.cuda_amp  # torch.cuda.amp.autocast / GradScaler, the deprecated spellings
autograd.Variable = Variable  # torch.autograd.Variable: a function that makes a Tensor, kept with the factories
# torch's keyword out= on the functions that make a new tensor (engine/outparam.py)
for _name in ("abs add cat clamp clip concat cos div dot exp log matmul maximum minimum mm mul neg pow reciprocal "
              "sigmoid sign sin sqrt square stack sub tanh remainder fmod floor_divide exp2 log2 log10 rsqrt tan asin "
              "acos atan sinh cosh asinh acosh atanh trunc frac deg2rad rad2deg all any isposinf isneginf logical_and "
              "logical_or logical_xor logical_not multiply subtract divide true_divide negative concatenate addmm masked_select "
              "hstack vstack inverse cross kron bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift "
              "bitwise_right_shift").split():
    globals()[_name] = _with_out(globals()[_name], _name)
del _name

def reset_run_state():
    """Fresh process-wide state for a new program run: grad mode on, default seed, no recorder or limits."""
    STATE.grad_enabled = True
    STATE.anomaly = False
    STATE.inference = False
    STATE.recorder = None
    STATE.limits = None
    STATE.tick = None
    random.manual_seed(random.DEFAULT_SEED)
    reset_default_device()
    reset_printoptions()
    _reset_threads()


def dropout(input, p, train):  # noqa: A002 — torch.dropout(input, p, train): F.dropout's three arguments, all required
    return _dropout(input, p, train)


def _atleast(shaped, *tensors):
    """torch.atleast_Nd: one tensor, or a tuple of them for several (or a list) given."""
    many = len(tensors) != 1 or isinstance(tensors[0], (list, tuple))
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(shaped(x) for x in items)
    return out if many else out[0]


def atleast_1d(*tensors):
    return _atleast(lambda x: x.reshape(1) if x.ndim == 0 else x, *tensors)


def atleast_2d(*tensors):
    return _atleast(lambda x: x.reshape(1, 1) if x.ndim == 0 else x.unsqueeze(0) if x.ndim == 1 else x, *tensors)


def atleast_3d(*tensors):
    def three(x):
        if x.ndim == 0:
            return x.reshape(1, 1, 1)
        if x.ndim == 1:
            return x.unsqueeze(0).unsqueeze(-1)
        return x.unsqueeze(-1) if x.ndim == 2 else x
    return _atleast(three, *tensors)


def get_default_dtype():
    return float32

