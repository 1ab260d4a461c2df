"""torch.func's autograd transforms: grad, grad_and_value, vjp, jacrev, jacfwd, hessian, with PyTorch 2.13's
results, argument checks and messages (engine/func.py gathers them with vmap and functional_call).

The transforms are built on autograd.grad, not on functorch's levels: a transform's inputs become fresh leaves
(or views that keep the graph when an outer transform or a program's own graph needs it), and create_graph is
on exactly when something outside will differentiate the result, so grad(grad(f)) and jacfwd(jacrev(f)) work.
jacfwd computes its Jacobian row by row in reverse mode (the engine has no dual numbers; the values agree with
PyTorch's forward mode); where it holds zeros, their signs come from forward products J·e_j by the double-backward
trick, as forward mode signs them (not through a custom Function, whose backward may not be differentiable).
"""
from __future__ import annotations

import contextlib

import numpy as np

from .backward import grad as autograd_grad
from .creation import zeros_like
from .functional import stack
from .grad_mode import STATE, enable_grad
from .nodes import AccumulateGrad, Node, callable_name
from .tensor_core import Tensor

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "vjp"]

# grad(grad(grad(...))) nests host frames per level and doubles the graph per level: far below Python's recursion
MAX_TRANSFORM_DEPTH = 16
_DEPTH = [0, 0]  # transforms running now, and how many of them differentiate (what inner ones return)
# the leaves every transform running now (and the inner ones it ran) made: kept alive so their ids stay theirs
_OWN_LEAVES: dict[int, Tensor] = {}


@contextlib.contextmanager
def _transform_level(differentiates=True):
    """One transform running: inside it grad mode is on (as functorch's), nested levels are counted; yields
    whether a differentiating transform outside this one will differentiate what it returns."""
    if _DEPTH[0] >= MAX_TRANSFORM_DEPTH:
        raise RuntimeError(f"torch.func transforms nested more than {MAX_TRANSFORM_DEPTH} deep (grad of grad of ...): "
                           "flowgrad's limit, each level doubles the graph")
    outer = _DEPTH[1] > 0
    _DEPTH[0] += 1
    _DEPTH[1] += differentiates
    try:
        with enable_grad() if differentiates else contextlib.nullcontext():  # vmap keeps the grad mode
            yield outer
    finally:
        _DEPTH[0] -= 1
        _DEPTH[1] -= differentiates
        if not _DEPTH[0]:
            _OWN_LEAVES.clear()


def _named_like(wrapper, func):
    """The transform's function carries func's name, as functools.wraps gives PyTorch's (`<function f at ...>`)."""
    wrapper.__name__ = wrapper.__qualname__ = callable_name(func)
    return wrapper


# ---- pytrees: nested tuples, lists and dicts of leaves, as torch.utils._pytree flattens them
def _flatten(tree):
    """(leaves, spec): spec rebuilds the same nesting around new leaves."""
    if isinstance(tree, (tuple, list)) and type(tree) in (tuple, list):
        leaves, specs = [], []
        for item in tree:
            sub_leaves, sub_spec = _flatten(item)
            leaves += sub_leaves
            specs.append(sub_spec)
        return leaves, (type(tree), specs)
    if type(tree) is dict:
        leaves, specs = [], []
        for key, item in tree.items():
            sub_leaves, sub_spec = _flatten(item)
            leaves += sub_leaves
            specs.append((key, sub_spec))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, children = s
        if kind is dict:
            return {key: build(child) for key, child in children}
        return kind(build(child) for child in children)
    return build(spec)


def _spec_text(spec):
    """torch's TreeSpec shorthand in messages: `*` a leaf, `(*, *)` a tuple."""
    if spec is None:
        return "*"
    kind, children = spec
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {_spec_text(c)}" for k, c in children) + "}"
    inner = ", ".join(_spec_text(c) for c in children)
    return f"({inner})" if kind is tuple else f"[{inner}]"


# ---- grad, grad_and_value, vjp
def _check_argnums(argnums, n_args):
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)) or (
            isinstance(argnums, tuple) and not all(isinstance(a, int) and not isinstance(a, bool) for a in argnums)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    for a in argnums if isinstance(argnums, tuple) else (argnums,):
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    if isinstance(argnums, tuple) and len({a % n_args for a in argnums}) != len(argnums):
        raise RuntimeError(f"argnums must be unique, got {argnums}")


def _diff_args(args, argnums):
    """The differentiated arguments (one pytree, or a tuple of them for a tuple argnums)."""
    return tuple(args[a] for a in argnums) if isinstance(argnums, tuple) else args[argnums]


def _with_diff_args(args, argnums, new):
    args = list(args)
    if isinstance(argnums, tuple):
        for a, value in zip(argnums, new):
            args[a] = value
    else:
        args[argnums] = new
    return tuple(args)


def _fresh_leaves(leaves, nested):
    """(the leaves a transform differentiates, whether they stay connected to an outer graph): views that keep that
    graph when the transform is nested or a leaf already requires grad, else new leaves requiring grad."""
    connected = nested or any(isinstance(x, Tensor) and x.requires_grad for x in leaves)
    out = []
    tick = STATE.tick
    for leaf in leaves:
        if tick is not None:  # a step of the program's budget per differentiated tensor (a pytree can be long)
            tick()
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        if connected and leaf.requires_grad:
            out.append(leaf.view_as(leaf))
        else:
            out.append(leaf.detach().requires_grad_(True))
            _OWN_LEAVES[id(out[-1])] = out[-1]
    return out, connected


def _reaches_outside(outputs):
    """Whether the outputs' graph reaches a tensor requiring grad that no transform made (a parameter the function
    closes over): then, as functorch's, the result stays differentiable with respect to it."""
    own = _OWN_LEAVES
    stack_ = []
    for o in outputs:
        if isinstance(o, Tensor) and o.requires_grad:
            if o.grad_fn is None:
                if id(o) not in own:
                    return True
            else:
                stack_.append(o.grad_fn)
    seen = set()
    while stack_:
        node = stack_.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own:
                return True
            continue
        stack_.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _grads(outputs, cotangents, leaves, create_graph):
    """d(outputs · cotangents)/d(leaves), zeros where an input does not reach the outputs (as functorch's)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if pairs:
        outs, cots = zip(*pairs)
        grads = autograd_grad(outs, leaves, cots, retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        grads = (None,) * len(leaves)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def _outer(value, connected):
    """What a transform hands back: detached unless something outside differentiates it."""
    if isinstance(value, Tensor) and not connected:
        return value.detach()
    return value


def _outer_tree(tree, connected):
    leaves, spec = _flatten(tree)
    return _unflatten([_outer(x, connected) for x in leaves], spec)


def _split_aux(output, has_aux, where):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in _flatten(output[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return output


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of func's scalar output with respect to args[argnums], that output)."""

    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        with _transform_level() as nested:
            tree = _diff_args(args, argnums)
            leaves, spec = _flatten(tree)
            fresh, connected = _fresh_leaves(leaves, nested)
            output = func(*_with_diff_args(args, argnums, _unflatten(fresh, spec)), **kwargs)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            connected = connected or _reaches_outside([output])
            grads = _grads([output], [None], fresh, create_graph=connected)
            result = _unflatten([_outer(g, connected) for g in grads], spec)
            value = _outer(output, connected)
            if has_aux:
                return result, (value, _outer_tree(aux, connected))
            return result, value
    return _named_like(wrapper, func)


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect to args[argnums] (and aux)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = both(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient
    return _named_like(wrapper, func)


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives one gradient per primal, as a tuple."""
    with _transform_level() as nested:
        leaves, spec = _flatten(primals)
        fresh, connected = _fresh_leaves(leaves, nested)
        output = func(*_unflatten(fresh, spec))
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        out_leaves, out_spec = _flatten(output)
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported "
                                   f"type {type(leaf)}")
        connected = connected or _reaches_outside(out_leaves)

    def vjp_fn(cotangents):
        cot_leaves, cot_spec = _flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {_spec_text(cot_spec)}, primal output: "
                               f"{_spec_text(out_spec)}")
        for i, (c, o) in enumerate(zip(cot_leaves, out_leaves)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] has "
                                   f"a shape of {o.shape}.")
        with _transform_level():
            grads = _grads(out_leaves, cot_leaves, fresh, create_graph=connected)
        return _unflatten([_outer(g, connected) for g in grads], spec)

    result = (_outer_tree(output, connected), vjp_fn)
    return (*result, _outer_tree(aux, connected)) if has_aux else result


# ---- Jacobians
def _jacobian_rows(output, leaves, connected):
    """[leaf]: the Jacobian of one output with respect to each leaf, output.shape + leaf.shape (a backward per row)."""
    limits = STATE.limits
    if limits is not None:  # checked before any row is computed
        for x in leaves:
            limits.before_alloc(tuple(output.shape) + tuple(x.shape))
    flat = output.reshape(-1)
    rows = [[] for _ in leaves]
    for j in range(output.numel()):
        if STATE.tick is not None:  # a step of the program's budget per backward pass
            STATE.tick()
        for k, g in enumerate(_grads([flat[j]], [None], leaves, create_graph=connected)):
            rows[k].append(g)
    return [(stack(r, 0) if r else zeros_like(x).reshape(-1)[:0]).reshape(tuple(output.shape) + tuple(x.shape))
            for r, x in zip(rows, leaves)]


def _op_table_graph(outputs):
    """Whether every node behind the outputs is an op-table node (each twice differentiable): a custom Function's
    backward may not be, and then the double-backward trick would give wrong columns, not an error."""
    stack_ = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    seen = set()
    while stack_:
        node = stack_.pop()
        if id(node) in seen or isinstance(node, AccumulateGrad):
            continue
        if not isinstance(node, Node):
            return False
        seen.add(id(node))
        stack_.extend(n for n, _ in node.next_functions if n is not None)
    return True


def _jacobian_columns(output, leaves, connected):
    """[leaf]: the Jacobian of one output with respect to each leaf, column by column: J·e_j = d(Jᵀu·e_j)/du for
    a dummy cotangent u (one backward with create_graph, then a backward per input element)."""
    limits = STATE.limits
    if limits is not None:
        for x in leaves:
            limits.before_alloc(tuple(output.shape) + tuple(x.shape))
    dummy = zeros_like(output).requires_grad_(True)
    transposed = _grads([output], [dummy], leaves, create_graph=True)
    out = []
    for x, vjp in zip(leaves, transposed):
        columns = []
        basis = np.zeros(x.numel(), dtype=x._data.dtype)
        for j in range(x.numel()):
            if STATE.tick is not None:  # a step of the program's budget per backward pass
                STATE.tick()
            basis[j] = 1
            tangent = Tensor._wrap(basis.reshape(tuple(x.shape)).copy())
            basis[j] = 0
            columns.append(_grads([vjp], [tangent], [dummy], create_graph=connected)[0].reshape(-1))
        jac = stack(columns, 1) if columns else zeros_like(output).reshape(-1, 1)[:, :0]
        out.append(jac.reshape(tuple(output.shape) + tuple(x.shape)))
    return out


def _zero_signs(rows, columns):
    """The row-by-row Jacobian with forward mode's signed zeros: where both ways give zero, the forward product's."""
    both_zero = (rows._data == 0) & (columns._data == 0)
    if both_zero.any():
        # a new array, same history: -0.0 == 0.0, so no gradient through rows changes (and its grad_fn stays)
        rows._data = np.where(both_zero, columns._data, rows._data)
    return rows


def _jacobian_transform(func, argnums, has_aux, name):
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        with _transform_level() as nested:
            tree = _diff_args(args, argnums)
            leaves, spec = _flatten(tree)
            fresh, connected = _fresh_leaves(leaves, nested)
            output = func(*_with_diff_args(args, argnums, _unflatten(fresh, spec)), **kwargs)
            output, aux = _split_aux(output, has_aux, f"{name}(f, ...)(*args)")
            out_leaves, out_spec = _flatten(output)
            for leaf in out_leaves:
                if not isinstance(leaf, Tensor):
                    raise RuntimeError(f"{name}(f, ...)(*args): expected f(*args) to return only tensors, got "
                                       f"unsupported type {type(leaf)}")
            connected = connected or _reaches_outside(out_leaves)
            per_output = []
            signed = name == "jacfwd" and _op_table_graph(out_leaves)
            for out in out_leaves:
                jac = _jacobian_rows(out, fresh, connected)
                if signed and out.requires_grad and any(bool((j._data == 0).any()) for j in jac):
                    jac = [_zero_signs(j, c) for j, c in zip(jac, _jacobian_columns(out, fresh, connected))]
                jac = [_outer(j, connected) for j in jac]
                per_output.append(_unflatten(jac, spec))
            result = _unflatten(per_output, out_spec)
            return (result, _outer_tree(aux, connected)) if has_aux else result
    return _named_like(wrapper, func)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func with respect to args[argnums] (reverse mode, row by row)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_transform(func, argnums, has_aux, "jacrev")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: jacrev's values with forward mode's signed zeros (see the module's docstring)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    return _jacobian_transform(func, argnums, has_aux, "jacfwd")


def hessian(func, argnums=0):
    """jacfwd(jacrev(func, argnums), argnums), as torch.func defines it."""
    return jacfwd(jacrev(func, argnums), argnums)
