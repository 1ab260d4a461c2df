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

from .numpy_costs import Cost, as_shape, bind, conversions, cost_of, product_cost, random_cost, shape_of
from .objects import Builtin, BuiltinType, ModuleProxy, NumpyRandomState

# what one np.random.RandomState keeps for the run (MT19937: 624 words, and its position), charged as items
RANDOM_STATE_ITEMS = 640

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
# the elementwise functions that take `out=` (numpy ufuncs plus clip/around/round)
ELEMENTWISE_OUT = frozenset(n for n in ELEMENTWISE if isinstance(getattr(np, n), np.ufunc)) | {"clip", "round",
                                                                                             "around"}
# Reductions and other functions whose output is no bigger than their input.
NOT_GROWING = """
sum mean std var max min amax amin argmax argmin prod cumsum cumprod median average any all
count_nonzero nansum nanmean nanmax nanmin allclose array_equal sort argsort unique reshape transpose
squeeze expand_dims ravel swapaxes moveaxis flip fliplr flipud copy asarray array diagonal trace
nonzero argwhere atleast_1d atleast_2d triu tril shape ndim size percentile quantile diff roll
""".split()
# Functions whose output can be bigger than their inputs (sandbox/numpy_costs.py has a rule for each).
SIZED = """
zeros ones full zeros_like ones_like full_like arange linspace logspace eye identity concatenate
stack vstack hstack column_stack dot matmul outer inner diag meshgrid tile repeat split array_split
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
# the methods that are also numpy functions with the same parameters after the array (their cost rules apply)
METHOD_FUNCTIONS = frozenset("""
sum mean std var max min argmax argmin prod cumsum cumprod all any clip round dot sort argsort swapaxes nonzero
trace diagonal repeat squeeze ravel
""".split())
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


# the shape helpers of the cost rules (no list is converted to learn its shape)
_shape_of = shape_of
_as_shape = as_shape
# plain numbers: a list of only these needs no walk item by item
_PLAIN = frozenset({int, float, bool})


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
        if n > limits.max_tensor_elements or n == 0:
            self.before(arr.shape)  # the limit's own message (an empty array: what it spans, as a tensor's)
        limits.count_external(n)
        weakref.finalize(arr, limits.count_external, -n)
        if limits.over_live():
            raise self.B.LimitExceeded(f"this run holds {limits.live_elements:,} tensor elements at once; the limit is "
                                       f"max_live_elements = {limits.max_live_elements:,}")

    def check_cost(self, name, cost: Cost, inputs=()):
        """Refuse a call before numpy runs it: the lists it will convert (`inputs`), its results (together
        against max_live_elements) and temporaries against the tensors' limits, its work against max_op_flops."""
        limits = self.limits
        if limits is None:
            return
        for shape in (*inputs, *cost.temporaries, *cost.outputs):
            self.before(shape)
        total = sum(math.prod(int(d) for d in s) for s in cost.outputs)
        if len(cost.outputs) > 1 and limits.over_live(total):
            raise self.B.LimitExceeded(f"this run would hold {limits.live_elements + total:,} tensor elements at once; "
                                       f"the limit is max_live_elements = {limits.max_live_elements:,}")
        flops = limits.max_op_flops
        if flops is not None and cost.work > flops:
            if cost.product:
                raise self.B.LimitExceeded(f"this matrix product takes {cost.work:,} multiply-adds; the limit is "
                                           f"max_op_flops = {flops:,}")
            raise self.B.LimitExceeded(f"numpy.{name} would take about {cost.work:,} operations here; the limit is "
                                       f"max_op_flops = {flops:,}")

    # ------------------------------------------------------------ arguments
    def arg(self, v, depth=0, seen=None):
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
            seen = {} if seen is None else seen  # a list repeated in a list ([row] * 1000) is checked once
            done = seen.get(id(v))
            if done is None:
                if set(map(type, v)) <= _PLAIN:  # numbers only: nothing to convert (a C-speed look at the items)
                    done = seen[id(v)] = v
                else:
                    done = seen[id(v)] = t(self.arg(x, depth + 1, seen) for x in v)
            return done
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
        out = self.out_array(name, kwargs)
        if out is not None:
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        args, kwargs = self.prepare(name, args, kwargs)
        bound = bind(name, fn, args, kwargs)
        self.check_cost(name, cost_of(name, bound), conversions(bound))
        if out is not None:
            fn(*args, out=out, **kwargs)  # numpy checks the shape, the casting and that `out` is writable
            return out  # NOTE: already counted as live when the program got it; counting again would leak
        return self.result(fn(*args, **kwargs))

    def out_array(self, name, kwargs):
        """`np.add(n, 1, out=n)` (the PyTorch "Tensors" tutorial): elementwise functions may write into an array the
        program already holds; nothing new is allocated, so no limit is passed (as `n[...] = ...`)."""
        if "out" not in kwargs:
            return None
        out = kwargs["out"]
        if name not in ELEMENTWISE_OUT:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out' (not available in flowgrad)")
        if type(out) is not np.ndarray or out.dtype.kind not in NUMERIC_KINDS:
            raise TypeError(f"{name}(): out= takes a numpy array of numbers, not '{self.interp.type_name(out)}'")
        return out

    def method(self, arr, name):
        """A bound, checked method of an array or numpy scalar (`a.reshape(2, 3)`, `a.astype(np.float32)`).
        A method that is also a numpy function (`a.clip(lo, hi)` is `np.clip(a, lo, hi)`) gets its cost rule."""
        def call(*args, **kwargs):
            args, kwargs = self.prepare(name, args, kwargs)
            if name == "astype":
                args = [self.dtype(a) for a in args[:1]] + args[1:]
            elif name in METHOD_FUNCTIONS:
                bound = bind(name, getattr(np, name), [arr, *args], kwargs)
                self.check_cost(name, cost_of(name, bound), conversions(bound))
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
        value = self.arg(value)
        if type(value) in (list, tuple):  # numpy converts it first, whatever the target's size
            self.before(shape_of(value))
        arr[key] = value

    def before_binop(self, a, b, matmul):
        """An operator with an array operand: the broadcast shape (or a product's shape and multiply-adds) first."""
        sa, sb = _shape_of(self.arg(a)), _shape_of(self.arg(b))
        if sa is None or sb is None:
            return  # numpy reports the operand it cannot take
        if matmul:
            if not sa or not sb:
                return  # numpy refuses a scalar operand of @
            self.check_cost("matmul", product_cost(sa, sb, "matmul"))
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


def _random_functions(gate, rng=None) -> dict:
    """np.random: the run's own RandomState (or `rng`, a program's `np.random.RandomState(seed)`), with sizes
    checked before it draws."""
    rng = gate.rng if rng is None else rng
    interp = gate.interp

    def sized(name):
        fn = getattr(rng, name)

        def draw(*args, **kwargs):
            args, kwargs = gate.prepare(name, args, kwargs)
            bound = bind(name, fn, args, kwargs)
            gate.check_cost(name, random_cost(name, bound), conversions(bound))
            return gate.result(fn(*args, **kwargs))
        return draw

    def seed(value=None):
        if value is not None and not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError("np.random.seed() in flowgrad programs takes an int")
        rng.seed(value)

    def choice(a, size=None, replace=True, p=None):
        args, kwargs = gate.prepare("choice", [a], {"size": size, "replace": replace, "p": p})
        a = args[0]
        gate.check_cost("choice", Cost(), [s for s in (shape_of(a), shape_of(kwargs["p"])) if s])
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
        **{name: sized(name) for name in ("rand", "randn", "randint", "random", "random_sample", "standard_normal",
                                          "normal", "uniform")},
    }


class IndexTrick:
    """`np.r_` / `np.c_`: `np.r_[a, b, 0:5]` joins along the first axis (a slice is an arange, or a linspace for a
    complex step), `np.c_[xx.ravel(), yy.ravel()]` stacks columns; each part goes through the gate's checked
    arange / linspace / concatenate / column_stack. numpy's string directives (`np.r_['0,2', ...]`) are not here."""

    __slots__ = ("gate", "columns")

    def __init__(self, gate, columns: bool):
        self.gate = gate
        self.columns = columns

    def __getitem__(self, key):
        gate = self.gate
        parts = list(key) if type(key) is tuple else [key]
        if parts and type(parts[0]) is str:
            raise TypeError(f"np.{'c_' if self.columns else 'r_'}['{parts[0][:20]}', ...]: numpy's string "
                            "directives are not available in flowgrad")
        arrays = []
        for p in parts:
            if type(p) is slice:
                start = 0 if p.start is None else p.start
                step = 1 if p.step is None else p.step
                if type(step) is complex:
                    arrays.append(gate.call("linspace", np.linspace, [start, p.stop, int(abs(step.imag))], {}))
                else:
                    arrays.append(gate.call("arange", np.arange, [start, p.stop, step], {}))
            else:
                arrays.append(p)
        if self.columns:
            return gate.call("column_stack", np.column_stack, [arrays], {})
        arrays = [gate.call("atleast_1d", np.atleast_1d, [a], {}) if isinstance(a, (int, float, np.number)) else a
                  for a in arrays]
        return gate.call("concatenate", np.concatenate, [arrays], {})

    def __repr__(self):
        return f"<numpy.lib._index_tricks_impl.{'CClass' if self.columns else 'RClass'} object>"


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
                  "generic": np.generic, "dtype": np.dtype, "r_": IndexTrick(gate, False), "c_": IndexTrick(gate, True)})
    random_attrs = {name: Builtin(name, fn, interp) for name, fn in _random_functions(gate).items()}

    def random_state(seed=None):
        if seed is not None and not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError("np.random.RandomState() in flowgrad programs takes an int seed")
        interp.alloc(RANDOM_STATE_ITEMS, "RandomState")
        rng = np.random.RandomState(seed)  # (seed None: fresh entropy, as numpy's)
        return NumpyRandomState({name: Builtin(name, fn, interp) for name, fn in _random_functions(gate, rng).items()})

    random_attrs["RandomState"] = BuiltinType("RandomState", NumpyRandomState, random_state, interp)
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
