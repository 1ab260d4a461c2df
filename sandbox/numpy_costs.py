"""What one numpy call will allocate and how much work it will do, computed from its arguments before numpy runs.

Every numpy entry point of a run (`np.<name>`, array methods, operators, `np.random`, `np.linalg`) binds its
arguments to numpy's own parameter names (`inspect.signature`), then asks `COST_RULES[name]` for a `Cost`:
the shapes numpy will allocate (results and temporaries bigger than the inputs: the broadcast of *every*
array-like argument, keyword ones included, `q`'s shape times a reduced array, a product's shape, ...) and
its work (multiply-adds of products, elements for the rest, the partitions of `percentile`, `diff`'s n passes).
The gate (numpy_module.NumpyGate.check_cost) holds them against the tensors' limits: max_tensor_elements and
max_live_elements for the shapes, max_op_flops for the work. Shapes of lists are read from their structure,
never by converting them (`np.shape(list)` would build the whole array first).
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np

# parameters that are options, never data that broadcasts into a result
OPTION_PARAMS = frozenset("""
out dtype order casting subok signature copy equal_nan decimals axis axes keepdims ddof kind stable device like
endpoint retstep num shape size return_index return_inverse return_counts indexing sparse method overwrite_input
replace n k N M offset axis1 axis2 source destination reps repeats shift ndmin sorted returned initial where
""".split())
# parameters holding a sequence of arrays that numpy converts one by one (never as one array)
SEQUENCE_PARAMS = frozenset({"arrays", "tup", "xi", "arys"})


@dataclass
class Cost:
    """`outputs`: shapes of the arrays the call returns (counted against max_live_elements together);
    `temporaries`: shapes it allocates on the way; `work`: its operations; `product`: work is multiply-adds."""
    outputs: list = field(default_factory=list)
    temporaries: list = field(default_factory=list)
    work: int = 0
    product: bool = False


# ---------------------------------------------------------------- shapes without allocating
def shape_of(v):
    """The shape numpy gives `v` (numbers, arrays, nested lists of them), or None for a non-array (an option
    string, None, a dtype). Lists: the first item of each level (numpy refuses ragged lists of numbers, after
    reading their structure and before allocating), so this costs the depth, not the items."""
    if isinstance(v, (np.ndarray, np.generic)):
        return tuple(v.shape)
    t = type(v)
    if t in (int, float, bool):
        return ()
    if t in (list, tuple):
        dims = []
        x = v
        while type(x) in (list, tuple):
            dims.append(len(x))
            if not x:
                return tuple(dims)
            x = x[0]
        if isinstance(x, (np.ndarray, np.generic)):
            dims.extend(x.shape)
        return tuple(dims)
    return None


def size_of(shape) -> int:
    return math.prod(int(s) for s in shape) if shape is not None else 0


def broadcast(*shapes):
    """numpy's broadcast shape of `shapes` (None entries skipped), or None when numpy will refuse them."""
    shapes = [s for s in shapes if s is not None]
    if not shapes:
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def as_shape(size):
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


def reduced(shape, axis, keepdims=False):
    """The shape left after reducing `shape` over `axis` (an int, a tuple, or None: all)."""
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = len(shape)
    try:
        gone = {int(a) % n for a in axes} if n else set()
    except (TypeError, ValueError):
        return tuple(shape)  # numpy reports the bad axis
    return tuple((1 if keepdims else None) if i in gone else s for i, s in enumerate(shape)
                 if keepdims or i not in gone)


# ---------------------------------------------------------------- binding
_SIGNATURES: dict = {}


def bind(name, fn, args, kwargs) -> dict:
    """The arguments of `fn(*args, **kwargs)` by numpy's parameter names (a *args parameter as its tuple)."""
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None
    out = dict(bound.arguments)
    for p in sig.parameters.values():  # `**kwargs` (np.clip's min=/max=): flattened into the names
        if p.kind is p.VAR_KEYWORD and p.name in out:
            out.update(out.pop(p.name))
    return out


def data_shapes(b: dict) -> list:
    """The shapes of every array-like argument that is data (not an option), whatever its name or position."""
    out = []
    for k, v in b.items():
        if k in OPTION_PARAMS or k in SEQUENCE_PARAMS:
            continue
        s = shape_of(v)
        if s is not None:
            out.append(s)
    return out


def conversions(b: dict) -> list:
    """Shapes of the lists numpy will turn into arrays (those allocate too, before numpy looks further)."""
    out = []
    for k, v in b.items():
        if type(v) not in (list, tuple) or k in ("shape", "size", "axis", "axes", "reps"):
            continue
        if k in SEQUENCE_PARAMS:
            out.extend(shape_of(x) for x in v if type(x) in (list, tuple))
        else:
            out.append(shape_of(v))
    return [s for s in out if s is not None]


# ---------------------------------------------------------------- the rules
def _elementwise(b):
    out = broadcast(*data_shapes(b))
    if out is None:
        return Cost()  # numpy reports the mismatch before it allocates
    return Cost([out], work=size_of(out))


def _where(b):
    """where(condition) alone is nonzero(condition): one index array per dimension."""
    return _elementwise(b) if len(b) > 1 else _nonzero(b)


def _broadcast_temporary(b):
    """allclose: a boolean array of the broadcast shape, reduced to one answer."""
    tmp = broadcast(*data_shapes(b))
    return Cost([], [tmp] if tmp is not None else [], work=size_of(tmp))


def _first(b):
    return next(iter(b.values()), None)


def _not_growing(b):
    """Views, copies and reductions: nothing bigger than the input, whose size is known."""
    return Cost(work=size_of(shape_of(_first(b))))


def _sorting(b):
    n = size_of(shape_of(_first(b)))
    return Cost(work=n * max(1, n.bit_length()))


def _reduction(b):
    a = shape_of(_first(b))
    if a is None:
        return Cost()
    return Cost([reduced(a, b.get("axis"), bool(b.get("keepdims") or False))], work=size_of(a))


def _average(b):
    cost = _reduction(b)
    w = shape_of(b.get("weights"))
    tmp = broadcast(shape_of(b.get("a")), w) if w is not None else None
    cost.temporaries = [tmp] if tmp is not None else []
    return cost


def _nonzero(b):
    a = shape_of(_first(b)) or ()
    n = size_of(a)
    return Cost([(n,)] * max(len(a), 1), work=n)


def _split(b):
    """split / array_split: the sections as views of the input; each one is an array object, counted as an item
    (np.array_split(a, 10**9) would make a billion empty arrays)."""
    a = shape_of(b.get("ary")) or ()
    sections = b.get("indices_or_sections")
    n = len(sections) + 1 if isinstance(sections, (list, tuple, np.ndarray)) else int(sections)
    return Cost([(size_of(a) + max(n, 0),)], work=size_of(a) + max(n, 0))


def _argwhere(b):
    a = shape_of(_first(b)) or ()
    return Cost([(size_of(a), len(a))], work=size_of(a))


def _triangle(b):
    """triu/tril: a 1-d input of length M makes an (M, M) result (and a mask of that shape)."""
    m = shape_of(b.get("m")) or ()
    out = m if len(m) >= 2 else (m[-1], m[-1]) if m else ()
    return Cost([out], [out[-2:]], work=size_of(out))


def _quantiles(b):
    """percentile/quantile: q's shape times the reduced array. numpy partitions each lane at up to 2 indices per
    q; NOTE: indices close together cost it about one pass each (20,000 values at 10,000 q take ~0.25 s, 20x
    longer than 200,000 values at the same q): modelled as a sort of the lane plus the square of the indices."""
    a = shape_of(b.get("a")) or ()
    q = shape_of(b.get("q")) or ()
    axis = b.get("axis")
    rest = reduced(a, axis, bool(b.get("keepdims") or False))
    n = size_of(a)
    lane = n if axis is None else n // max(size_of(reduced(a, axis)), 1)
    lanes = n // lane if lane else 0
    kth = min(2 * size_of(q) + 2, lane)
    return Cost([tuple(q) + tuple(rest)], [a], work=lanes * (lane * max(lane.bit_length(), 1) + kth * kth))


def _diff(b):
    """diff: numpy loops n times, also past an empty result (diff(a, 10**9) never ends), each pass a subtraction."""
    a = shape_of(b.get("a")) or ()
    n = b.get("n", 1)
    n = int(n) if n is not None else 1
    if n > max(a or (1,)):
        raise ValueError(f"diff(): n = {n} is more than the array's length")
    try:
        length = int(a[int(b.get("axis", -1))])
    except (IndexError, TypeError, ValueError):
        length = 1  # numpy reports the bad axis
    face = size_of(a) // max(length, 1)  # a scalar prepend/append broadcasts to one slice
    total = size_of(a) + sum(max(size_of(shape_of(b[k])), face) for k in ("prepend", "append") if k in b)
    return Cost([(total,)], work=total * max(n, 1))


def _roll(b):
    """roll: a shift per axis pair (numpy walks the broadcast of `shift` and `axis` in Python)."""
    pairs = size_of(broadcast(shape_of(b.get("shift")), shape_of(b.get("axis"))) or ())
    n = size_of(shape_of(b.get("a")))
    return Cost([], work=n + 1000 * pairs)


def _filled(b):
    out = as_shape(b.get("shape"))
    return Cost([out], work=size_of(out))


def _like(b):
    shape = b.get("shape")
    out = as_shape(shape) if shape is not None else shape_of(b.get("a"))
    return Cost([out], work=size_of(out))


def _eye(b):
    n, m = b.get("N"), b.get("M")
    return Cost([(int(n), int(n if m is None else m))])


def _identity(b):
    n = int(b.get("n"))
    return Cost([(n, n)])


def _arange(b):
    start, stop, step = b.get("start_or_stop"), b.get("stop"), b.get("step", 1)
    if stop is None:
        start, stop = 0, start
    if stop is None:
        return Cost()
    n = (float(stop) - float(start or 0)) / float(step if step is not None else 1)
    n = max(math.ceil(n), 0) if math.isfinite(n) else 2**62  # NOTE: arange(inf) is numpy's error, after this
    return Cost([(n,)], work=n)


def _spaced(b):
    """linspace/logspace: `num` points inserted at `axis` into the broadcast of the endpoints (and base)."""
    num = b.get("num", 50)
    num = int(num) if num is not None else 50
    ends = broadcast(shape_of(b.get("start")), shape_of(b.get("stop")), shape_of(b.get("base"))) or ()
    axis = int(b.get("axis") or 0)
    out = list(ends)
    out.insert(axis % (len(ends) + 1) if axis < 0 else min(axis, len(ends)), max(num, 0))
    return Cost([tuple(out)], [tuple(out)], work=size_of(out))


def _joined(b):
    seq = b.get("arrays", b.get("tup"))
    if type(seq) not in (list, tuple):
        return Cost([shape_of(seq) or ()])
    total = sum(size_of(shape_of(a)) for a in seq)
    return Cost([(total,)], work=total)


def _product_shape(a, b, how):
    """The result's shape of dot/matmul/inner of arrays shaped `a` and `b` (numpy's rules)."""
    if not a or not b:  # a scalar operand: an elementwise product
        return broadcast(a, b) or (), 1
    if how == "inner":
        return tuple(a[:-1]) + tuple(b[:-1]), a[-1]
    if how == "dot":
        if len(b) == 1:
            return tuple(a[:-1]), a[-1]
        return tuple(a[:-1]) + tuple(b[:-2]) + tuple(b[-1:]), a[-1]
    # matmul: 1-d operands are promoted, leading dimensions broadcast
    lead = broadcast(tuple(a[:-2]), tuple(b[:-2])) or ()
    rows = tuple(a[-2:-1]) if len(a) >= 2 else ()
    cols = tuple(b[-1:]) if len(b) >= 2 else ()
    return lead + rows + cols, a[-1]


def product_cost(a, b, how):
    out, inner = _product_shape(a, b, how)
    return Cost([out], work=size_of(out) * max(int(inner), 1), product=True)


def _product(how):
    def rule(b):
        values = list(b.values())
        return product_cost(shape_of(values[0]) or (), shape_of(values[1]) or (), how)
    return rule


def _outer(b):
    out = (size_of(shape_of(b.get("a"))), size_of(shape_of(b.get("b"))))
    return Cost([out], work=size_of(out), product=True)


def _diag(b):
    s = shape_of(b.get("v")) or ()
    k = abs(int(b.get("k") or 0))
    return Cost([(s[0] + k, s[0] + k)] if len(s) == 1 else [], work=size_of(s))


def _meshgrid(b):
    sizes = tuple(size_of(shape_of(x)) for x in b.get("xi", ()))
    if b.get("sparse"):
        return Cost([], work=sum(sizes))
    return Cost([sizes] * len(sizes), work=size_of(sizes) * len(sizes))


def _tile(b):
    reps = as_shape(b.get("reps"))
    n = size_of(shape_of(b.get("A"))) * size_of(reps)
    return Cost([(n,)], work=n)


def _repeat(b):
    a = shape_of(b.get("a")) or ()
    reps = b.get("repeats")
    axis = b.get("axis")
    if isinstance(reps, (list, tuple, np.ndarray)) and size_of(shape_of(reps)) > 1:
        # one count per element along the axis (or per element, flattened): the counts' sum replaces that length
        others = size_of(a) // max(a[int(axis)], 1) if axis is not None and a else 1
        n = others * max(int(np.sum(reps)), 0)
    else:
        r = int(np.sum(reps)) if isinstance(reps, (list, tuple, np.ndarray)) else int(reps)
        n = size_of(a) * max(r, 0)
    return Cost([(n,)], work=n)


ELEMENTWISE_RULE = _elementwise
COST_RULES = {
    "where": _where, "allclose": _broadcast_temporary, "array_equal": _not_growing,
    "sort": _sorting, "argsort": _sorting, "unique": _sorting, "median": _sorting,
    "sum": _reduction, "mean": _reduction, "std": _reduction, "var": _reduction, "max": _reduction,
    "min": _reduction, "amax": _reduction, "amin": _reduction, "argmax": _reduction, "argmin": _reduction,
    "prod": _reduction, "any": _reduction, "all": _reduction, "count_nonzero": _reduction, "nansum": _reduction,
    "nanmean": _reduction, "nanmax": _reduction, "nanmin": _reduction, "average": _average,
    "nonzero": _nonzero, "argwhere": _argwhere, "triu": _triangle, "tril": _triangle,
    "percentile": _quantiles, "quantile": _quantiles, "diff": _diff, "roll": _roll,
    "zeros": _filled, "ones": _filled, "full": _filled, "zeros_like": _like, "ones_like": _like, "full_like": _like,
    "eye": _eye, "identity": _identity, "arange": _arange, "linspace": _spaced, "logspace": _spaced,
    "concatenate": _joined, "stack": _joined, "vstack": _joined, "hstack": _joined, "column_stack": _joined,
    "dot": _product("dot"), "matmul": _product("matmul"), "inner": _product("inner"), "outer": _outer,
    "diag": _diag, "meshgrid": _meshgrid, "tile": _tile, "repeat": _repeat, "split": _split, "array_split": _split,
}
# views and same-size copies: the input's size bounds them (reshape of an empty array is checked on its result)
for _name in """cumsum cumprod reshape transpose squeeze expand_dims ravel swapaxes moveaxis flip fliplr flipud copy
asarray array diagonal trace atleast_1d atleast_2d shape ndim size""".split():
    COST_RULES[_name] = _not_growing


def cost_of(name, b: dict) -> Cost:
    return COST_RULES.get(name, ELEMENTWISE_RULE)(b)


# ---------------------------------------------------------------- np.random
def random_cost(name, b: dict) -> Cost:
    """A draw: `size` when given, else the broadcast of the distribution's parameters (both allocated)."""
    if name in ("rand", "randn"):
        return Cost([as_shape(list(b.get("args", ())))])
    params = broadcast(*[shape_of(b.get(k)) for k in ("low", "high", "loc", "scale")]) or ()
    size = b.get("size")
    if size is None:
        return Cost([params], work=size_of(params))
    out = as_shape(size)
    return Cost([out], [params], work=size_of(out) + size_of(params))
