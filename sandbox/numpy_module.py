"""`import numpy as np` in a program: an allowlisted subset of NumPy on real ndarrays of numbers.

Every function a program reaches is a wrapper built here, per run (`numpy_module(interp)`): its
arguments are checked (numbers, numeric arrays and scalars, lists of these, tensors as their arrays,
allowlisted dtypes; nothing else reaches numpy), the size of what numpy will allocate is checked
against the run's tensor limits *before* the call (`Limits.before_alloc`), and what comes back must
be numeric (object and string arrays are refused) and is counted as live elements like a tensor.
`np.random` is a per-run `RandomState` (legacy seeding, the numbers NumPy gives), never the global one.
Nothing that reaches files, raw memory or print options is in the tables (`np.save`, `np.load`,
`np.frombuffer`, `np.lib`, `np.ctypeslib`, `np.set_printoptions`, `np.vectorize`, ...).
Array methods go through the same checks (`ARRAY_METHODS`, wrapped in `attributes.py`).
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from .objects import Builtin, BuiltinType, ModuleProxy

# ---------------------------------------------------------------- dtypes
ALLOWED_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                                 np.int64, np.uint8, np.bool_))
# the scalar types a program reaches by name (`np.float32`, `dtype=np.int64`, `isinstance(x, np.float64)`)
SCALAR_TYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "double": np.float64,
                "single": np.float32, "half": np.float16, "int8": np.int8, "int16": np.int16, "int32": np.int32,
                "int64": np.int64, "int_": np.int64, "uint8": np.uint8, "bool_": np.bool_, "bool": np.bool_}
NUMPY_CLASSES = frozenset(SCALAR_TYPES.values()) | {np.ndarray, np.integer, np.floating, np.number, np.generic,
                                                     np.dtype}
# what `type(x)` and reprs show for numpy classes
CLASS_NAMES = {cls: f"numpy.{cls.__name__}" for cls in NUMPY_CLASSES}
NUMERIC_KINDS = "biuf"


# ---------------------------------------------------------------- function tables
# Elementwise: the output has the broadcast shape of the array arguments (checked before the call).
ELEMENTWISE = """
exp exp2 expm1 log log2 log10 log1p sqrt cbrt square abs absolute fabs sign negative positive reciprocal
sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh degrees radians deg2rad
rad2deg hypot floor ceil trunc rint round around fix add subtract multiply divide true_divide floor_divide
power float_power mod remainder fmod maximum minimum fmax fmin clip where isnan isinf isfinite isclose
equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not logical_xor
heaviside sinc nan_to_num copysign signbit
""".split()
# Reductions and other functions whose output is no bigger than their input.
NOT_GROWING = """
sum mean std var max min amax amin argmax argmin prod cumsum cumprod median average any all
count_nonzero nansum nanmean nanmax nanmin allclose array_equal sort argsort unique reshape transpose
squeeze expand_dims ravel swapaxes moveaxis flip fliplr flipud copy asarray array diagonal trace
nonzero argwhere atleast_1d atleast_2d triu tril shape ndim size percentile quantile diff roll
""".split()
# Functions whose output size is computed here from the arguments (see `_predicted_shapes`).
SIZED = """
zeros ones full zeros_like ones_like full_like arange linspace logspace eye identity concatenate
stack vstack hstack column_stack dot matmul outer inner diag meshgrid tile repeat
""".split()
RANDOM_FUNCTIONS = """
seed rand randn randint random random_sample standard_normal normal uniform choice shuffle permutation
""".split()
CONSTANTS = {"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None, "euler_gamma": np.euler_gamma}
# Methods of arrays a program may call (attributes.py hands them out wrapped, through `call_method`),
# and the attributes it may read.
ARRAY_METHODS = """
reshape transpose flatten ravel squeeze astype copy tolist item sum mean std var max min argmax argmin prod
cumsum cumprod all any clip round dot fill sort argsort swapaxes nonzero trace diagonal repeat
""".split()
ARRAY_ATTRIBUTES = "shape ndim size dtype T itemsize nbytes real imag".split()
SCALAR_METHODS = "item tolist astype round".split()
SCALAR_ATTRIBUTES = "shape ndim size dtype itemsize real imag".split()
DTYPE_ATTRIBUTES = "name kind itemsize char str".split()

# Keyword arguments a wrapper passes on to numpy; anything else (`out=`, `like=`, `casting=`, ...) is refused.
ALLOWED_KEYWORDS = frozenset("""
axis keepdims dtype ddof size low high loc scale replace p endpoint num retstep step k n m M N shape
fill_value a_min a_max min max atol rtol equal_nan return_counts return_index return_inverse decimals
axes order newshape copy indexing base q weights reps repeats kind stable n_ prepend append shift
""".split())


def _shape_of(v):
    """The shape numpy will see for an argument (already checked to be numbers, arrays and lists)."""
    return np.shape(v) if not isinstance(v, np.ndarray) else v.shape


def _as_shape(size):
    """A `size`/`shape` argument as a tuple of ints (numpy's TypeError for anything else)."""
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) and not isinstance(size, (bool, np.bool_)):
        return (int(size),)
    if isinstance(size, (tuple, list)):
        return tuple(int(s) for s in size)
    if isinstance(size, np.ndarray) and size.ndim <= 1 and size.dtype.kind in "iu":
        return tuple(int(s) for s in size.reshape(-1))
    raise TypeError(f"'{type(size).__name__}' object cannot be interpreted as an integer")


class NumpyGate:
    """One run's numpy: argument checks, size checks before numpy allocates, result checks and counting."""

    def __init__(self, interp):
        self.interp = interp
        self.B = interp.B
        self.rng = np.random.RandomState()  # NOTE: never np.random's global state, which runs would share

    # ------------------------------------------------------------ limits
    @property
    def limits(self):
        return self.B.state.limits

    def before(self, shape):
        """Refuse an array of `shape` before numpy makes it (the tensors' limits)."""
        limits = self.limits
        if limits is not None:
            if any(int(s) < 0 for s in shape):
                raise ValueError("negative dimensions are not allowed")
            limits.before_alloc(tuple(int(s) for s in shape))

    def count(self, arr):
        """An array a program now holds counts as live elements, like a tensor's, until it dies."""
        limits = self.limits
        if limits is None:
            return
        n = int(arr.size)
        if n > limits.max_tensor_elements:
            self.before(arr.shape)  # the limit's own message
        limits.live_elements += n
        weakref.finalize(arr, _release, limits, n)
        if limits.live_elements > limits.max_live_elements:
            raise self.B.LimitExceeded(f"this run holds {limits.live_elements:,} tensor elements at once; the limit is "
                                       f"max_live_elements = {limits.max_live_elements:,}")

    # ------------------------------------------------------------ arguments
    def arg(self, v, depth=0):
        """A value numpy may see: numbers, numeric arrays and scalars, tensors (as their arrays, torch's
        rule for `requires_grad`), lists and tuples of these. Everything else is refused before numpy
        looks at it (numpy would read `__array__`, `__len__`, ... from any object)."""
        t = type(v)
        if t in (int, float, bool) or v is None or v is Ellipsis:
            return v
        if t is np.ndarray:
            if v.dtype.kind not in NUMERIC_KINDS:
                raise TypeError("flowgrad's numpy holds numbers only")
            return v
        if isinstance(v, np.generic):
            if v.dtype.kind not in NUMERIC_KINDS:
                raise TypeError("flowgrad's numpy holds numbers only")
            return v
        if isinstance(v, self.B.Tensor):
            return v.numpy()
        if t in (list, tuple):
            if depth > 32:
                raise ValueError("nested lists deeper than 32 levels are not supported in flowgrad programs")
            return t(self.arg(x, depth + 1) for x in v)
        if t is range:
            return list(v)
        if t is slice:
            return v
        if t is str:
            if len(v) > 16:
                raise ValueError("strings handed to numpy in flowgrad programs are option names (16 characters at most)")
            try:
                parsed = np.dtype(v)
            except TypeError:
                return v  # an option such as 'ij' or 'stable'
            if parsed not in ALLOWED_DTYPES:
                self.dtype(v)  # the dtype error
            return v
        if t is BuiltinType or isinstance(v, np.dtype) or (isinstance(v, type) and v in NUMPY_CLASSES):
            d = self.dtype(v)
            return v.pytype if t is BuiltinType else d
        raise TypeError(f"numpy in flowgrad programs takes numbers, lists, arrays and tensors, not "
                        f"'{self.interp.type_name(v)}'")

    def dtype(self, d):
        """A `dtype=` argument: one of the numeric dtypes (object, strings, records refused)."""
        if d is None:
            return None
        if type(d) is BuiltinType:  # the sandbox's `float`, `int`, `bool`
            d = d.pytype
        if d in (float, int, bool):
            return np.dtype(d)
        if isinstance(d, type) and d in NUMPY_CLASSES or isinstance(d, np.dtype) or \
                (type(d) is str and len(d) <= 16):
            try:
                dt = np.dtype(d)
            except TypeError:
                dt = None
            if dt in ALLOWED_DTYPES:
                return dt
        raise TypeError(f"flowgrad's numpy supports the dtypes float16, float32, float64, int8, int16, int32, "
                        f"int64, uint8 and bool, not {self.interp.to_str(d)[:60]}")

    def prepare(self, name, args, kwargs):
        self.interp.check_data(args, kwargs)
        for k in kwargs:
            if k not in ALLOWED_KEYWORDS:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}' (not available in flowgrad)")
        args = [self.arg(a) for a in args]
        kwargs = {k: (self.dtype(v) if k == "dtype" else self.arg(v)) for k, v in kwargs.items()}
        return args, kwargs

    # ------------------------------------------------------------ results
    def result(self, r, depth=0):
        if type(r) is np.ndarray:
            if r.dtype.kind not in NUMERIC_KINDS:
                raise TypeError("flowgrad's numpy holds numbers only (object and string arrays are refused)")
            self.count(r)
            return r
        if isinstance(r, np.generic):
            if r.dtype.kind not in NUMERIC_KINDS:
                raise TypeError("flowgrad's numpy holds numbers only")
            return r
        if type(r) in (tuple, list) and depth < 2:
            return type(r)(self.result(x, depth + 1) for x in r)
        if type(r) in (int, float, bool) or r is None:
            return r
        raise TypeError(f"numpy returned a '{type(r).__name__}', which flowgrad programs cannot hold")

    # ------------------------------------------------------------ calls
    def call(self, name, fn, args, kwargs):
        args, kwargs = self.prepare(name, args, kwargs)
        for shape in self.predicted_shapes(name, args, kwargs):
            self.before(shape)
        return self.result(fn(*args, **kwargs))

    def predicted_shapes(self, name, args, kwargs):
        """Shapes (upper bounds) of what numpy will allocate for `name(*args, **kwargs)`."""
        if name in ELEMENTWISE:
            shapes = [_shape_of(a) for a in args if not isinstance(a, slice)]
            try:
                return [np.broadcast_shapes(*shapes)] if shapes else []
            except ValueError:
                return []  # numpy reports the mismatch
        if name == "diff":  # NOTE: numpy loops n times, also past an empty result: diff(a, 10**9) never ends
            n = _Args(args, kwargs)(1, "n")
            if n is not None and int(n) > max(_shape_of(args[0]) or (1,)):
                raise ValueError(f"diff(): n = {int(n)} is more than the array's length")
            return []
        if name in NOT_GROWING:
            return []
        get = _Args(args, kwargs)
        if name in ("zeros", "ones", "full"):
            return [_as_shape(get(0, "shape"))]
        if name in ("zeros_like", "ones_like", "full_like"):
            shape = get(-1, "shape")
            return [_as_shape(shape) if shape is not None else _shape_of(get(0, "a"))]
        if name == "eye":
            n, m = get(0, "N"), get(1, "M")
            return [(int(n), int(n if m is None else m))]
        if name == "identity":
            return [(int(get(0, "n")), int(get(0, "n")))]
        if name == "arange":
            return [(_arange_length(args, kwargs),)]
        if name in ("linspace", "logspace"):
            num = get(2, "num")
            return [(int(50 if num is None else num),)]
        if name in ("concatenate", "stack", "vstack", "hstack", "column_stack"):
            seq = get(0, "arrays")
            if not isinstance(seq, (list, tuple)):
                return [_shape_of(seq)]
            return [(sum(math.prod(_shape_of(a)) for a in seq),)]
        if name in ("dot", "matmul", "inner"):
            a, b = _shape_of(get(0, "a")), _shape_of(get(1, "b"))
            return [tuple(a[:-1]) + tuple(b[:-2]) + tuple(b[-1:]) if len(b) >= 2 else tuple(a[:-1])]
        if name == "outer":
            return [(math.prod(_shape_of(get(0, "a"))), math.prod(_shape_of(get(1, "b"))))]
        if name == "diag":
            s = _shape_of(get(0, "v"))
            k = abs(int(get(1, "k") or 0))
            return [(s[0] + k, s[0] + k)] if len(s) == 1 else []
        if name == "meshgrid":
            sizes = [math.prod(_shape_of(a)) for a in args]
            return [tuple(sizes)] * len(sizes)
        if name == "tile":
            reps = _as_shape(get(1, "reps"))
            return [(math.prod(_shape_of(get(0, "A"))) * math.prod(reps),)]
        if name == "repeat":
            reps = get(1, "repeats")
            total = int(np.sum(reps)) if isinstance(reps, (list, tuple, np.ndarray)) else int(reps)
            return [(math.prod(_shape_of(get(0, "a"))) * max(total, 0),)]
        raise AssertionError(f"no size rule for numpy.{name}")  # every SIZED name has one above

    def method(self, arr, name):
        """A bound, checked method of an array or numpy scalar (`a.reshape(2, 3)`, `a.astype(np.float32)`)."""
        def call(*args, **kwargs):
            args, kwargs = self.prepare(name, args, kwargs)
            if name == "astype":
                args = [self.dtype(a) for a in args[:1]] + args[1:]
            elif name == "repeat":
                for shape in self.predicted_shapes("repeat", [arr, *args], kwargs):
                    self.before(shape)
            elif name == "dot":
                for shape in self.predicted_shapes("dot", [arr, *args], kwargs):
                    self.before(shape)
            elif name == "tolist":
                self.interp.alloc(self.interp.list_items(np.shape(arr)), "list")
            elif name == "fill" and args and not isinstance(args[0], (int, float, bool, np.generic)):
                raise TypeError("fill() takes a number")
            return self.result(getattr(arr, name)(*args, **kwargs))
        return call

    # ------------------------------------------------------------ items and operators (the interpreter's hooks)
    def get_item(self, arr, key):
        self.interp.check_data(key)
        key = self.arg(key) if type(key) in (list, tuple) else key
        if isinstance(key, self.B.Tensor):
            key = key.numpy()
        if type(key) is not np.ndarray and not isinstance(key, (int, np.integer, slice, tuple, list)) \
                and key is not None and key is not Ellipsis:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                             "boolean arrays are valid indices")
        if not isinstance(key, (int, np.integer, slice)) and key is not None and key is not Ellipsis:
            try:
                self.before(self.B.index_result_shape(arr.shape, key))
            except (IndexError, ValueError, TypeError):
                pass  # numpy reports the bad index itself
        return self.result(arr[key])

    def set_item(self, arr, key, value):
        self.interp.check_data(key, value)
        if isinstance(key, self.B.Tensor):
            key = key.numpy()
        key = self.arg(key) if type(key) in (list, tuple) else key
        arr[key] = self.arg(value)

    def before_binop(self, a, b, matmul):
        """An operator with an array operand: the broadcast (or product) shape checked first."""
        sa, sb = _shape_of(self.arg(a)), _shape_of(self.arg(b))
        if matmul:
            lead = ()
            try:
                lead = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
            except ValueError:
                return
            self.before(lead + tuple(sa[-2:-1]) + tuple(sb[-1:] if len(sb) >= 2 else ()))
            return
        try:
            self.before(np.broadcast_shapes(sa, sb))
        except ValueError:
            return

    def construct(self, cls, args, kwargs):
        """`np.float32(1.5)`, `np.int64(3)`: a scalar from a number (never from text or a list: those make
        arrays or parse strings); `np.ndarray(...)` is refused (uninitialised memory)."""
        if cls is np.dtype and len(args) == 1 and not kwargs:  # np.dtype('float32'): one of the allowed dtypes
            return self.dtype(args[0])
        if cls not in SCALAR_TYPES.values():
            raise TypeError(f"cannot create '{CLASS_NAMES.get(cls, cls.__name__)}' instances in flowgrad programs")
        if kwargs or len(args) > 1:
            raise TypeError(f"{cls.__name__}() takes at most 1 argument")
        value = self.arg(args[0]) if args else 0
        if isinstance(value, (list, tuple, np.ndarray)):
            raise TypeError(f"{cls.__name__}() in flowgrad programs takes a number")
        return cls(value)


def _release(limits, n):
    limits.live_elements -= n


class _Args:
    """Reads an argument by position or keyword (position -1: keyword only)."""

    def __init__(self, args, kwargs):
        self.args, self.kwargs = args, kwargs

    def __call__(self, i, name):
        if 0 <= i < len(self.args):
            return self.args[i]
        return self.kwargs.get(name)


def _arange_length(args, kwargs):
    nums = list(args[:3])
    if len(nums) == 1:
        start, stop, step = 0, nums[0], 1
    else:
        start, stop, step = (nums + [None, None, None])[:3]
    start = kwargs.get("start", start) or 0
    stop = kwargs.get("stop", stop)
    step = kwargs.get("step", step) or 1
    if stop is None:
        return 0
    n = (float(stop) - float(start)) / float(step)
    return max(math.ceil(n), 0) if math.isfinite(n) else 2**62  # NOTE: arange(inf) is numpy's error, after this


def _random_functions(gate) -> dict:
    """np.random: the run's own RandomState, with sizes checked before it draws."""
    rng = gate.rng
    interp = gate.interp

    def sized(name, size_of):
        fn = getattr(rng, name)

        def draw(*args, **kwargs):
            args, kwargs = gate.prepare(name, args, kwargs)
            gate.before(size_of(args, kwargs))
            return gate.result(fn(*args, **kwargs))
        return draw

    def dims(args, kwargs):
        return _as_shape(list(args))

    def keyword_size(position):
        return lambda args, kwargs: _as_shape(args[position] if len(args) > position else kwargs.get("size"))

    def seed(value=None):
        if value is not None and not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError("np.random.seed() in flowgrad programs takes an int")
        rng.seed(value)

    def choice(a, size=None, replace=True, p=None):
        args, kwargs = gate.prepare("choice", [a], {"size": size, "replace": replace, "p": p})
        a = args[0]
        population = int(a) if isinstance(a, (int, np.integer)) else math.prod(_shape_of(a))
        if not kwargs["replace"] or kwargs["p"] is not None:
            gate.before((population,))  # numpy permutes (or sums) the whole population first
        gate.before(_as_shape(size))
        return gate.result(rng.choice(a, **kwargs))

    def permutation(x):
        (x,), _ = gate.prepare("permutation", [x], {})
        gate.before((int(x),) if isinstance(x, (int, np.integer)) else _shape_of(x))
        return gate.result(rng.permutation(x))

    def shuffle(x):
        if type(x) is not np.ndarray and type(x) is not list:
            raise TypeError("shuffle() in flowgrad programs takes an array or a list")
        interp.check_data(x)
        if type(x) is list:
            for item in x:
                gate.arg(item)  # numpy swaps the items of a list (lists of rows): numbers only
        rng.shuffle(x)

    return {
        "seed": seed, "choice": choice, "permutation": permutation, "shuffle": shuffle,
        "rand": sized("rand", dims), "randn": sized("randn", dims),
        "randint": sized("randint", keyword_size(2)), "random": sized("random", keyword_size(0)),
        "random_sample": sized("random_sample", keyword_size(0)),
        "standard_normal": sized("standard_normal", keyword_size(0)),
        "normal": sized("normal", keyword_size(2)), "uniform": sized("uniform", keyword_size(2)),
    }


def numpy_module(interp) -> tuple[ModuleProxy, ModuleProxy]:
    """The `numpy` and `numpy.random` proxies of one run."""
    gate = gate_of(interp)
    attrs = {}
    for name in (*ELEMENTWISE, *NOT_GROWING, *SIZED):
        fn = getattr(np, name, None)
        if fn is None:
            continue
        attrs[name] = Builtin(name, _bound(gate, name, fn), interp)
    attrs.update(CONSTANTS)
    attrs.update(SCALAR_TYPES)
    attrs.update({"ndarray": np.ndarray, "integer": np.integer, "floating": np.floating, "number": np.number,
                  "generic": np.generic, "dtype": np.dtype})
    random_attrs = {name: Builtin(name, fn, interp) for name, fn in _random_functions(gate).items()}
    random_proxy = ModuleProxy("numpy.random", random_attrs)
    attrs["random"] = random_proxy
    from .numpy_linalg import linalg_module  # np.linalg: norm, inv, det, solve, eigh, svd, lstsq

    attrs["linalg"] = linalg_module(gate, interp)
    return ModuleProxy("numpy", attrs), random_proxy


def _bound(gate, name, fn):
    def call(*args, **kwargs):
        return gate.call(name, fn, args, kwargs)
    return call


def gate_of(interp) -> NumpyGate:
    """The run's NumpyGate, made on first use (an array can reach a program through `t.numpy()` alone)."""
    gate = interp.__dict__.get("numpy_gate")
    if gate is None:
        gate = interp.numpy_gate = NumpyGate(interp)
    return gate
