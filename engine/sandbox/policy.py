"""Allowlists: which names of torch/nn/optim/math a program sees, which attributes of which types.

Nothing outside these lists is reachable from a program. Attribute names starting with `_` are
refused before this point, on the syntax tree.
"""

from __future__ import annotations

# ---------------------------------------------------------------- torch / nn / F / optim names
TORCH_NAMES = frozenset("""
tensor Tensor as_tensor zeros ones zeros_like ones_like full full_like empty empty_like eye arange
linspace logspace rand randn randint rand_like randn_like randint_like randperm normal bernoulli
multinomial manual_seed initial_seed exp exp2 log log2 log10 log1p expm1 sin cos tan asin acos atan atan2
sinh cosh tanh sigmoid relu sqrt rsqrt abs neg negative square pow clamp clamp_min clamp_max clip sum
mean max min amax amin argmax argmin std var prod cumsum cumprod norm matmul mm bmm mv dot outer mul
multiply add sub subtract div divide true_divide floor_divide remainder fmod maximum minimum where cat
concat concatenate stack hstack vstack split chunk unbind reshape flatten squeeze unsqueeze transpose
permute t softmax log_softmax sign floor ceil round trunc frac allclose equal isclose isnan isinf
isfinite logsumexp einsum tril triu diag diagonal trace gather scatter index_select masked_select
topk sort argsort masked_fill lerp erf detach clone broadcast_to broadcast_tensors expand_copy
numel is_tensor is_floating_point no_grad enable_grad inference_mode set_grad_enabled
is_grad_enabled is_inference_mode_enabled Size dtype float32 float64 float16 bfloat16 int64 int32
int16 int8 uint8 bool float double long int half device get_default_dtype flip roll tile
repeat_interleave cross det inverse logical_and logical_or logical_not logical_xor eq ne lt le gt ge
greater less any all count_nonzero nonzero unique cdist dist addmm baddbmm outer relu_ sigmoid_
tanh_ softplus celu selu gelu silu mish hardtanh dropout cosine_similarity pairwise_distance
heaviside sinc deg2rad rad2deg hypot fmax fmin nan_to_num cummax cummin diff kron meshgrid
nn optim autograd float_power reciprocal xlogy
""".split())
# Never exposed even if the engine has them: file access, global state shared by runs, internals.
TORCH_DENY = frozenset("""
save load set_default_dtype set_printoptions set_default_tensor_type from_numpy compile jit
use_deterministic_algorithms set_num_threads hub utils limits recorder sandbox formatting apply defop
unbroadcast STATE Op OPS reset_run_state
""".split())
AUTOGRAD_NAMES = frozenset({"grad", "backward", "Variable"})
# Engine classes a program may name (isinstance, type()) but not call.
NOT_CONSTRUCTIBLE = frozenset({"dtype"})

MATH_NAMES = frozenset("""
sqrt exp log log2 log10 log1p expm1 pi e tau sin cos tan asin acos atan atan2 sinh cosh tanh asinh
acosh atanh floor ceil trunc isclose inf nan fabs isnan isinf isfinite erf erfc gamma lgamma hypot
degrees radians copysign fmod pow
""".split())

# Bare names bound without importing (the hostile examples use them): torch functions and nn classes.
BARE_TORCH = ("tensor zeros ones randn rand arange linspace exp log sin cos tanh sigmoid relu sqrt "
              "manual_seed no_grad eye full zeros_like ones_like randint matmul cat stack where "
              "softmax").split()
BARE_NN = ("Linear ReLU Sigmoid Tanh Softmax LogSoftmax Sequential Module ModuleList MSELoss "
           "CrossEntropyLoss BCELoss BCEWithLogitsLoss L1Loss NLLLoss LeakyReLU GELU Dropout "
           "Parameter Identity Flatten Embedding LayerNorm BatchNorm1d Conv1d Conv2d").split()
BARE_OPTIM = ("SGD Adam AdamW RMSprop Adagrad").split()

# ---------------------------------------------------------------- attributes per type
TENSOR_ATTRS = frozenset("""
data grad requires_grad is_leaf grad_fn shape dtype ndim T mT H size dim item tolist detach detach_
requires_grad_ retain_grad retains_grad view view_as reshape reshape_as transpose t t_ permute
squeeze unsqueeze flatten unflatten expand expand_as repeat repeat_interleave sum mean max min amax
amin argmax argmin std var prod norm cumsum cumprod exp exp_ log log_ log2 log10 log1p expm1 softmax
log_softmax sin cos tan tanh tanh_ sigmoid sigmoid_ relu relu_ abs abs_ sqrt sqrt_ rsqrt square
clamp clamp_ clamp_min clamp_max clip clip_ pow pow_ matmul mm bmm mv dot outer mul mul_ add add_
sub sub_ div div_ neg neg_ reciprocal backward zero_ fill_ copy_ clone numel nelement float double
half int long bool contiguous is_contiguous element_size eq ne lt le gt ge equal allclose isclose
all any where masked_fill masked_fill_ gather scatter index_select topk sort argsort chunk split
unbind floor ceil round trunc frac sign sign_ maximum minimum register_hook is_floating_point
new_zeros new_ones new_full new_tensor new_empty tril triu diag diagonal trace logsumexp normal_
uniform_ random_ bernoulli_ exponential_ fill_diagonal_ flip roll type_as to cpu device is_cuda
lerp erf isnan isinf isfinite nan_to_num count_nonzero nonzero unique cross det inverse
logical_and logical_or logical_not squeeze_ unsqueeze_ transpose_ resize_ narrow select
index_add index_add_ index_fill masked_select softplus gelu tile addmm baddbmm mean_ sum_to_size
float_power std_mean var_mean requires_grad_ name names_ is_inference output_nr
""".split())
TENSOR_SETTABLE = frozenset({"data", "grad", "requires_grad"})

MODULE_ATTRS = frozenset("""
parameters named_parameters buffers named_buffers children named_children modules named_modules
zero_grad train eval forward training requires_grad_ apply state_dict load_state_dict to cpu float
double half add_module register_buffer register_parameter register_module extra_repr get_submodule
get_parameter append extend insert keys values items pop update
""".split())
OPTIMIZER_ATTRS = frozenset({"step", "zero_grad", "param_groups", "add_param_group", "defaults",
                             "state_dict", "load_state_dict"})
SCHEDULER_ATTRS = frozenset({"step", "get_last_lr", "last_epoch", "optimizer", "base_lrs"})
GRADFN_ATTRS = frozenset({"name", "next_functions", "metadata", "variable"})
DTYPE_ATTRS = frozenset({"is_floating_point", "itemsize", "is_complex", "is_signed"})
CONTEXT_ATTRS = frozenset()

STR_ATTRS = frozenset("""
upper lower strip lstrip rstrip split rsplit splitlines join replace startswith endswith find rfind
index rindex count isdigit isalpha isalnum isspace islower isupper isnumeric isdecimal title
capitalize casefold swapcase center ljust rjust zfill partition rpartition removeprefix
removesuffix format
""".split())
LIST_ATTRS = frozenset("append extend pop insert remove index count sort reverse copy clear".split())
TUPLE_ATTRS = frozenset("index count".split())
SIZE_ATTRS = frozenset("index count numel".split())
DICT_ATTRS = frozenset("keys values items get pop update setdefault copy clear popitem".split())
SET_ATTRS = frozenset("""add remove discard pop clear copy union intersection difference
symmetric_difference issubset issuperset isdisjoint update""".split())
INT_ATTRS = frozenset("bit_length real imag conjugate numerator denominator is_integer".split())
FLOAT_ATTRS = frozenset("is_integer real imag conjugate".split())
RANGE_ATTRS = frozenset("start stop step index count".split())
SLICE_ATTRS = frozenset("start stop step".split())
