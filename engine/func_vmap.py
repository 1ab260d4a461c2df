"""torch.func.vmap and torch.func.functional_call, with PyTorch 2.13's results and messages.

vmap runs the function once per batch index on the slices (a Python loop, as the issue allows) and stacks the
results along out_dims: the same numbers as PyTorch's batching rules, and the slices and the stack are graph ops,
so vmap inside grad (per-sample gradients) differentiates. Unlike PyTorch, random ops and `.item()` simply run
per sample (PyTorch refuses them under randomness="error"). The stacked output's grad_fn is named as PyTorch's
batched result names it: the per-sample op's name, or the node PyTorch's batching rule ends with (BATCHED_NAMES).
"""
from __future__ import annotations

from .creation import zeros
from .func_transforms import _flatten, _named_like, _transform_level, _unflatten
from .functional import stack
from .grad_mode import STATE
from .nodes import NODE_CLASSES, Node, callable_name
from .tensor_core import Tensor

__all__ = ["functional_call", "vmap"]

# The node PyTorch 2.13's batching rules end with where it is not the per-sample op's own: a full reduction becomes
# one over the sample's dims, matrix-vector products become batched matrix products, mse_loss a mean.
BATCHED_NAMES = {
    "SumBackward0": "SumBackward1", "MeanBackward0": "MeanBackward1", "ProdBackward0": "ProdBackward1",
    "MaxBackward1": "MaxBackward0", "MinBackward1": "MinBackward0", "MvBackward0": "PermuteBackward0",
    "SqueezeBackward4": "SqueezeBackward5", "DotBackward0": "SqueezeBackward1", "TBackward0": "TransposeBackward0",
    "MseLossBackward0": "MeanBackward1", "MmBackward0": "UnsafeViewBackward0",
}
_RENAMED: dict[str, type] = {}


def _name_as_batched(result, sample):
    """Give the stack node of a vmap output the name PyTorch's batched result has (its backward stays the stack's)."""
    node, inner = result._grad_fn, sample._grad_fn
    if type(inner) not in NODE_CLASSES.values() and type(inner) not in _RENAMED.values() or node is None:
        return
    name = type(inner).__name__
    name = BATCHED_NAMES.get(name, name)
    cls = _RENAMED.get(name)
    if cls is None:
        cls = _RENAMED[name] = type(name, (Node,), {"__slots__": ()})
    node.__class__ = cls


def _tree_spec_text(spec):
    """torch's TreeSpec repr (`TreeSpec(tuple, None, [*,\n  *])`) for the structure messages."""
    if spec is None:
        return "*"
    kind, children = spec
    if kind is dict:
        keys = [k for k, _ in children]
        inner = [_tree_spec_text(c) for _, c in children]
        return f"TreeSpec(dict, {keys}, [" + ",\n  ".join(inner) + "])"
    return f"TreeSpec({kind.__name__}, None, [" + ",\n  ".join(_tree_spec_text(c) for c in children) + "])"


def _broadcast_dims(dims, tree, prefix):
    """The in_dim of every leaf of `tree`: an int or None applies to a whole subtree, a tuple/list/dict matches it."""
    if dims is None or (isinstance(dims, int) and not isinstance(dims, bool)):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and type(tree) in (tuple, list) and len(dims) == len(tree):
        return [d for sub_dims, sub in zip(dims, tree) for d in _broadcast_dims(sub_dims, sub, prefix)]
    if type(dims) is dict and type(tree) is dict and dims.keys() == tree.keys():
        return [d for key in tree for d in _broadcast_dims(dims[key], tree[key], prefix)]
    in_spec = _flatten(dims)[1]
    raise ValueError(f"{prefix}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                     f"{_tree_spec_text(in_spec)} but inputs has structure {_tree_spec_text(_flatten(tree)[1])}.")


def _select(x, dim, index):
    return x[(slice(None),) * dim + (index,)]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=1):
    """func mapped over a batch dimension of its inputs (in_dims), the results stacked along out_dims."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    name = callable_name(func) if callable(func) else repr(func)

    def wrapper(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                             "to vmap over a function with no inputs. The latter is unsupported.")
        prefix = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not (isinstance(in_dims, (int, tuple)) and not isinstance(in_dims, bool)):
            raise ValueError(f"{prefix}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        leaves, spec = _flatten(args)
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), args, prefix)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(d, int) or isinstance(d, bool):
                raise ValueError(f"{prefix}: Got in_dim={d} for an input but in_dim must be either an integer "
                                 "dimension or None.")
            if not isinstance(x, Tensor):
                raise ValueError(f"{prefix}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                                 "vmap over non-Tensor arguments, please use None as the respective in_dim")
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(f"{prefix}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            sizes.append(x.shape[d % n])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        batch = sizes[0]
        with _transform_level(differentiates=False):
            samples = []
            for b in range(max(batch, 1)):  # an empty batch runs once on zeros for the output's shapes
                if STATE.tick is not None:  # a step of the program's budget per sample
                    STATE.tick()
                sliced = [x if d is None else (_select(x, d % x.dim(), b) if batch else
                                               zeros(tuple(s for i, s in enumerate(x.shape) if i != d % x.dim()),
                                                     dtype=x.dtype))
                          for x, d in zip(leaves, dims)]
                samples.append(func(*_unflatten(sliced, spec), **kwargs))
        return _stack_outputs(samples, batch, name)

    def _stack_outputs(samples, batch, fname):
        out_leaves, out_spec = _flatten(samples[0])
        per_sample = [_flatten(s)[0] for s in samples]
        if isinstance(out_dims, (tuple, list)) and len(out_leaves) == 1 and out_spec is None:
            odims = list(out_dims) if len(out_dims) == 1 else [None]
            if len(out_dims) != 1:
                raise ValueError(f"vmap({fname}, ...): out_dims is not compatible with the structure of `outputs`. "
                                 f"out_dims has structure {_tree_spec_text(_flatten(tuple(out_dims))[1])} but outputs "
                                 "has structure *.")
        else:
            odims = _broadcast_dims(out_dims, samples[0], f"vmap({fname}, ...)")
        stacked = []
        for k, (leaf, od) in enumerate(zip(out_leaves, odims)):
            if od is None:
                stacked.append(leaf)
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap({fname}, ...): `{fname}` must only return Tensors, got type {type(leaf)}. Did "
                                 "you mean to set out_dims= to None for output?")
            column = [s[k] for s in per_sample]
            result = stack(column, od)
            if not batch:
                result = _select_empty(result, od % result.dim())
            elif isinstance(column[0], Tensor):
                _name_as_batched(result, column[0])
            stacked.append(result)
        return _unflatten(stacked, out_spec)

    return _named_like(wrapper, func)


def _select_empty(x, dim):
    return x[(slice(None),) * dim + (slice(0, 0),)]


# ---- functional_call
def _merge_dicts(parameter_and_buffer_dicts):
    if type(parameter_and_buffer_dicts) is dict:
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, (tuple, list)) or not all(
            type(d) is dict for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    merged, repeated = {}, []
    for d in parameter_and_buffer_dicts:
        for k, v in d.items():
            if k in merged:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


def _slot(module, path):
    """(owning module, registry dict, name) of a dotted parameter or buffer name, or None if it names neither."""
    *parents, leaf = path.split(".")
    owner = module
    for part in parents:
        owner = owner.__dict__.get("_modules", {}).get(part)
        if owner is None:
            return None
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if d is not None and leaf in d:
            return d, leaf
    return None


def _all_named(module, table):
    """{dotted name: tensor} of every parameter (or buffer) under every name it has (tied ones repeated)."""
    out, stack_, seen = {}, [("", module)], set()
    while stack_:
        prefix, m = stack_.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        for name, v in m.__dict__.get(table, {}).items():
            if v is not None:
                out[prefix + name] = v
        for name, sub in reversed(list(m.__dict__.get("_modules", {}).items())):
            if sub is not None:
                stack_.append((prefix + name + ".", sub))
    return out


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced, for the call, by the given tensors."""
    if "_parameters" not in getattr(module, "__dict__", {}):
        raise TypeError(f"functional_call expects an nn.Module, got {type(module).__name__}")
    values = _merge_dicts(parameter_and_buffer_dicts)
    for key, value in values.items():
        if type(key) is not str:
            raise TypeError(f"functional_call: keys must be str, got {type(key).__name__}")
        if value is not None and not isinstance(value, Tensor):
            shown = repr(value) if type(value) in (int, float, bool) else f"a {type(value).__name__}"
            raise TypeError(f"{shown} is not an instance of torch.Tensor")
    named, named_buffers = _all_named(module, "_parameters"), _all_named(module, "_buffers")
    if tie_weights:  # a tied tensor given under one name replaces it under all its names
        by_id = {}
        for n, t in {**named, **named_buffers}.items():
            by_id.setdefault(id(t), []).append(n)
        values = dict(values)
        for key in list(values):
            original = named.get(key, named_buffers.get(key))
            if original is not None:
                for alias in by_id[id(original)]:
                    values.setdefault(alias, values[key])
    if strict:
        expected = set(named) | set(named_buffers)
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        if missing or unexpected:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    saved = []
    try:
        for key, value in values.items():
            slot = _slot(module, key)
            if slot is None:
                continue  # as torch's: a name the module does not have is ignored unless strict
            table, leaf = slot
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        return module(*args, **kwargs)
    finally:
        for table, leaf, original in reversed(saved):
            table[leaf] = original
