"""Allowlists of names: which functions and classes of torch/nn/F/optim/math a program can reach.

Nothing outside these lists is reachable by name (`backend.py` builds the module proxies from them).
Which *attributes* of a value a program may use is the attribute policy, in `attributes.py`.
"""

from __future__ import annotations

from types import MappingProxyType

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
tanh_ celu selu dropout cosine_similarity pairwise_distance
heaviside sinc deg2rad rad2deg hypot fmax fmin nan_to_num cummax cummin diff kron meshgrid
nn optim autograd float_power reciprocal xlogy
""".split())
# Tensor functions tutorials use (issue 9 section 5): the names the list above lacks.
TORCH_NAMES |= frozenset("scatter_add arctan2 argwhere fliplr flipud ger".split())
# issue 21: the rest of the elementwise family, histograms, PyTorch's legacy typed classes and its version string
TORCH_NAMES |= frozenset("""asinh acosh atanh arcsin arccos arctan arcsinh arccosh arctanh fix histc histogram
FloatTensor DoubleTensor HalfTensor LongTensor IntTensor ByteTensor BoolTensor __version__""".split())
# issue 21: the rest of the value tests (isnan isinf isfinite are above)
TORCH_NAMES |= frozenset("isposinf isneginf isreal".split())
TORCH_NAMES |= frozenset(["short"])  # issue 21 §3: torch.int16's other name (int8 and int16 are above)
TORCH_NAMES |= frozenset("std_mean var_mean".split())  # issue 21 §3: (spread, mean), both with gradients
TORCH_NAMES |= frozenset(["narrow"])  # issue 21: Tensor.narrow was allowed but the engine had none
# issue 21: torch functions of the Tensor methods added with them (engine/tensor_tutorial_names.py)
TORCH_NAMES |= frozenset("unflatten index_add row_stack".split())
# issue 21: statistics, fused products and index helpers programs bring (engine/tensor_stats.py)
TORCH_NAMES |= frozenset("""median nansum nanmean bincount addcmul addcdiv movedim moveaxis take_along_dim
tril_indices triu_indices""".split())
TORCH_NAMES |= frozenset("svd cholesky slogdet pinverse cov corrcoef qr".split())  # engine/linalg_solve.py
TORCH_NAMES |= frozenset("finfo iinfo atleast_1d atleast_2d atleast_3d".split())  # engine/type_info.py, surface.py
TORCH_NAMES |= frozenset("quantile nanquantile".split())  # engine/tensor_quantile.py
# type promotion asked directly (engine/tensor_promotion_names.py): dtypes in, a dtype or a bool out
TORCH_NAMES |= frozenset("result_type promote_types can_cast".split())
# bitwise ops on integer and bool tensors (engine/tensor_bitwise_names.py)
TORCH_NAMES |= frozenset("bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift".split())
# issue 10: PyTorch's generator objects and the global generator's state (engine/random.py). Generators
# are per-run objects (the interpreter charges each one's state); get/set_rng_state copy a 5056-byte tensor.
RANDOM_NAMES = frozenset("Generator seed get_rng_state set_rng_state".split())
TORCH_NAMES = TORCH_NAMES | RANDOM_NAMES
# issue 10: torch.nn.utils (gradient clipping, parameters <-> one vector)
NN_UTILS_NAMES = frozenset("clip_grad_norm_ clip_grad_value_ clip_grad_norm parameters_to_vector "
                           "vector_to_parameters".split())
# issue 21 §3: names tutorials and courses reach for (engine/tensor_more_names.py; fmax fmin sinc float_power baddbmm
# are above)
TORCH_NAMES |= frozenset("""copysign signbit logaddexp take searchsorted bucketize rot90 tensor_split ravel column_stack
logit""".split())
# issue 21 §3: ATen's composites (engine/tensor_composites.py)
TORCH_NAMES |= frozenset("inner tensordot matrix_power trapezoid cartesian_prod combinations".split())
# issue 21 §3: engine/tensor_extra_names.py
TORCH_NAMES |= frozenset("erfc erfinv kthvalue mode aminmax msort gcd lcm isin vander lgamma digamma polygamma".split())
# torch.special (engine/special.py): the names it shares with torch, and expit
SPECIAL_NAMES = frozenset("erf erfc erfinv exp2 expit expm1 log1p log_softmax logit logsumexp round sinc softmax "
                          "xlogy digamma gammaln polygamma psi".split())
# Never exposed even if the engine has them: file access, global state shared by runs, internals.
TORCH_DENY = frozenset("""
save load set_default_dtype set_default_tensor_type jit
use_deterministic_algorithms hub limits recorder sandbox formatting apply defop threads
unbroadcast STATE Op OPS reset_run_state
""".split())
# Engine helpers that nn.functional / nn.init import for their own use: torch's modules have no such names
SUBMODULE_DENY = {
    "torch.nn.functional": frozenset("expect_attribute expect_tensor matmul refused".split()),
    "torch.nn.init": frozenset("expect_attribute fill_normal fill_uniform no_grad plain_text".split()),
}
# devices as a CPU-only torch has them, and print options (engine/devices.py, engine/formatting.py; the engine
# resets both at the start of every run)
# (torch has no top-level get_printoptions: tests/sandbox/test_surface_matches_torch.py walks the surface)
TORCH_NAMES |= frozenset("set_default_device get_default_device set_printoptions".split())
# the thread count: checked and remembered for the run; the engine computes on one thread (engine/threads.py)
TORCH_NAMES |= frozenset("set_num_threads get_num_threads".split())
# torch.compile: a module in PyTorch's OptimizedModule wrapper, a function as it is (engine/compiled.py: runs eagerly)
TORCH_NAMES |= frozenset({"compile"})
# mixed precision (engine/amp.py): CUDA autocast / GradScaler disable themselves on a CPU-only build, a CPU scaler
# scales, CPU autocast is refused; torch.amp and torch.cuda.amp import as modules
TORCH_NAMES |= frozenset({"autocast"})
AMP_CLASS_NAMES = {("amp", "autocast"): "torch.amp.autocast_mode.autocast",
                   ("amp", "GradScaler"): "torch.amp.grad_scaler.GradScaler",
                   ("cuda.amp", "autocast"): "torch.cuda.amp.autocast_mode.autocast",
                   ("cuda.amp", "GradScaler"): "torch.cuda.amp.grad_scaler.GradScaler"}
# torch.cuda, torch.backends.mps / cudnn, torch.accelerator: submodules with a CPU-only build's answers
DEVICE_MODULES = {
    "cuda": frozenset("""is_available device_count is_initialized manual_seed manual_seed_all current_device
                         get_device_name synchronize empty_cache is_bf16_supported""".split()),
    "backends.mps": frozenset({"is_available", "is_built"}),
    "backends.cudnn": frozenset({"is_available"}),
    "accelerator": frozenset({"is_available", "device_count", "current_accelerator"}),
    "amp": frozenset({"autocast", "GradScaler"}),
    "cuda.amp": frozenset({"autocast", "GradScaler"}),
}
AUTOGRAD_NAMES = frozenset({"grad", "backward", "Variable"})
# torch.autograd.Function (a program subclasses it; sandbox/calls.py, attributes.py)
AUTOGRAD_NAMES = AUTOGRAD_NAMES | {"Function"}
# issue 21: gradcheck / gradgradcheck; torch.autograd.functional and torch.func (engine/autograd/functional.py,
# engine/func.py): the programs' functions they take are called back through the interpreter
AUTOGRAD_NAMES = AUTOGRAD_NAMES | {"gradcheck", "gradgradcheck"}
# issue 21: anomaly mode (backward names the node whose gradient holds a nan)
AUTOGRAD_NAMES = AUTOGRAD_NAMES | {"set_detect_anomaly", "detect_anomaly"}
TORCH_NAMES |= frozenset({"is_anomaly_enabled"})
AUTOGRAD_FUNCTIONAL_NAMES = frozenset("jacobian hessian vjp jvp hvp vhp".split())
FUNC_NAMES = frozenset("grad grad_and_value vjp jacrev jacfwd hessian vmap functional_call".split())
# torch.utils.data (torch.utils has nothing else): datasets and the single-process DataLoader
DATA_NAMES = frozenset("Dataset TensorDataset Subset DataLoader random_split".split())
# issue 10: the samplers DataLoader takes (RandomSampler with replacement draws PyTorch's indices)
DATA_NAMES = DATA_NAMES | frozenset("Sampler SequentialSampler RandomSampler BatchSampler".split())
# issue 21: what programs people bring combine datasets and sample with
DATA_NAMES = DATA_NAMES | frozenset("ConcatDataset SubsetRandomSampler WeightedRandomSampler".split())
# the submodules tutorials import them from (`from torch.utils.data.dataset import random_split`)
DATA_SUBMODULES = {"dataset": "Dataset TensorDataset Subset ConcatDataset random_split", "dataloader": "DataLoader",
                   "sampler": "Sampler SequentialSampler RandomSampler BatchSampler SubsetRandomSampler WeightedRandomSampler"}
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

# torch's qualified names for engine classes whose proxy path (`torch.no_grad`) is not where torch defines
# them, and for engine classes a program meets without reaching them by name: what `type(x)` and reprs show.
TORCH_CLASS_NAMES = {
    "no_grad": "torch.autograd.grad_mode.no_grad",
    "enable_grad": "torch.autograd.grad_mode.enable_grad",
    "inference_mode": "torch.autograd.grad_mode.inference_mode",
    "set_grad_enabled": "torch.autograd.grad_mode.set_grad_enabled",
    "Generator": "torch._C.Generator",
}

# where torch defines each nn class (`type(layer)` prints `<class 'torch.nn.modules.linear.Linear'>`)
NN_CLASS_MODULES = {name: f"torch.nn.modules.{where}" for where, names in {
    "activation": "CELU ELU GELU GLU Hardsigmoid Hardswish Hardtanh LeakyReLU LogSigmoid LogSoftmax Mish "
                  "MultiheadAttention PReLU ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmin Softplus Softsign Tanh "
                  "Tanhshrink Threshold RReLU Softmax2d",
    "batchnorm": "BatchNorm1d BatchNorm2d LazyBatchNorm1d LazyBatchNorm2d",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": "Conv1d Conv2d ConvTranspose1d ConvTranspose2d LazyConv1d LazyConv2d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "Dropout Dropout1d Dropout2d",
    "flatten": "Flatten Unflatten",
    "linear": "Identity LazyLinear Linear Bilinear",
    "loss": "BCELoss BCEWithLogitsLoss CrossEntropyLoss HuberLoss KLDivLoss L1Loss MSELoss NLLLoss SmoothL1Loss "
            "GaussianNLLLoss MarginRankingLoss TripletMarginLoss",
    "module": "Module",
    "normalization": "GroupNorm LayerNorm RMSNorm",
    "instancenorm": "InstanceNorm1d InstanceNorm2d",
    "padding": "ConstantPad1d ConstantPad2d ReflectionPad1d ReflectionPad2d ReplicationPad1d ReplicationPad2d "
               "ZeroPad1d ZeroPad2d",
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool2d AvgPool1d AvgPool2d MaxPool1d MaxPool2d AdaptiveMaxPool1d "
               "AdaptiveMaxPool2d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNCell",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}.items() for name in names.split()}
# class attributes of engine classes a program may read (a module made from a pretrained table of rows)
ENGINE_CLASS_ATTRIBUTES = MappingProxyType({"torch.nn.modules.sparse.Embedding": frozenset({"from_pretrained"}),
                                            "torch.nn.modules.sparse.EmbeddingBag": frozenset({"from_pretrained"})})
# torch.nn.parameter: the parameter classes (importable as that module too)
NN_PARAMETER_NAMES = ("Parameter", "UninitializedParameter", "UninitializedBuffer", "is_lazy")

# torch <-> numpy (sandbox/numpy_module.py checks the arrays): from_numpy shares the array's memory, as torch's does
TORCH_NUMPY_NAMES = frozenset({"from_numpy"})

# torch.linalg: the norms tutorials use and the singular values behind the nuclear and 2-norms (engine/linalg.py)
LINALG_NAMES = frozenset("norm vector_norm matrix_norm svdvals".split())
# issue 21 §3: determinants, inverses and cross products (engine/linalg_more.py)
LINALG_NAMES = LINALG_NAMES | frozenset("det inv cross".split())
# issue 21: least squares, PCA, Gaussian processes (engine/linalg_solve.py)
LINALG_NAMES = LINALG_NAMES | frozenset("solve lstsq pinv eigh eigvalsh cholesky slogdet matrix_rank svd qr".split())
# torch.backends.cudnn's switches with a CPU build's values, and the setter names its errors quote
CUDNN_SWITCHES = MappingProxyType({"enabled": True, "deterministic": False, "benchmark": False, "allow_tf32": True})
CUDNN_SWITCHES_SETTERS = MappingProxyType({"enabled": "set_enabled_cudnn", "deterministic": "set_deterministic_cudnn",
                                           "benchmark": "set_benchmark_cudnn", "allow_tf32": "set_allow_tf32_cublas"})
DETERMINISM_FUNCTIONS = frozenset({"use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                                   "is_deterministic_algorithms_warn_only_enabled"})


# ---- Tensor methods beyond the attribute table's own list (sandbox/attributes.py adds them to its tensor rule)
# Tensor functions tutorials use (issue 9 section 5): the methods the tensor list below lacks.
TENSOR_FUNCS = " scatter_ scatter_add scatter_add_ atan2 arctan2 argwhere fliplr flipud ger tril_ triu_"
# issue 21: % and // as methods, Tensor.type(), the rest of the elementwise family
TENSOR_FUNCS += (" remainder remainder_ fmod fmod_ floor_divide floor_divide_ type exp2 asin acos atan sinh cosh asinh"
                  " acosh atanh arcsin arccos arctan arcsinh arccosh arctanh deg2rad rad2deg fix")
# bitwise methods and their in-place forms, the logical family's in-place forms (engine/tensor_bitwise_names.py)
TENSOR_FUNCS += (" bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift bitwise_and_"
                  " bitwise_or_ bitwise_xor_ bitwise_not_ bitwise_left_shift_ bitwise_right_shift_ logical_and_"
                  " logical_or_ logical_xor_ logical_not_")

# issue 21 §3: engine/tensor_more_names.py's methods (float_power and baddbmm are in the tensor rule's own list)
TENSOR_FUNCS += " fmax fmin copysign signbit sinc logaddexp take rot90 tensor_split ravel logit inner matrix_power"
TENSOR_FUNCS += " erfc erfc_ erfinv erfinv_ kthvalue mode aminmax msort gcd gcd_ lcm lcm_"  # engine/tensor_extra_names.py
TENSOR_FUNCS += " lgamma lgamma_ digamma digamma_ polygamma polygamma_"
# issue 21: statistics, fused updates, linear algebra and windows programs bring (engine/tensor_stats.py,
# engine/linalg_solve.py)
TENSOR_FUNCS += (" median nansum nanmean dist bincount addcmul addcmul_ addcdiv addcdiv_ movedim moveaxis take_along_dim"
                 " multinomial svd cholesky slogdet pinverse stride unfold quantile nanquantile qr")
# issue 21: a PackedSequence's methods (engine/nn/packed.py), besides its fields
PACKED_SEQUENCE_METHODS = frozenset("to cpu double float half long int is_cuda is_pinned".split())

# views and copies as tutorials show them: the memory a tensor shares with its views (engine/storage.py)
TENSOR_FUNCS += " storage untyped_storage data_ptr storage_offset"
TORCH_NAMES |= frozenset(["TypedStorage", "UntypedStorage"])
TORCH_CLASS_NAMES.update({n: f"torch.storage.{n}" for n in ("TypedStorage", "UntypedStorage")})
NOT_CONSTRUCTIBLE |= frozenset(["TypedStorage", "UntypedStorage"])  # isinstance() only: a storage is a tensor's
STORAGE_NAMES = "dtype device size tolist element_size nbytes data_ptr is_shared type"
# torch.linalg.cond (engine/linalg.py): the condition number tutorials print beside a least-squares fit
LINALG_NAMES |= frozenset(["cond"])
