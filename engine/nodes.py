"""Graph nodes (`grad_fn`), AccumulateGrad, and the hooks a backward pass runs on them.

Nodes hold their inputs' nodes and the arrays backward needs, never their output tensor, so a graph
is a tree of plain references that reference counting frees the moment the last tensor goes: no
cycles for the garbage collector to chase (micrograd spends ~94% of a step there).
"""
from __future__ import annotations

import itertools
import re
import weakref

import numpy as np

from . import registry
from .dtypes import legacy_tensor_type
from .grad_mode import FREED_MESSAGE, STATE, _seq, _versions, replaced_by
from .op_table import Op, unbroadcast
from .ops import OPS


class Node:
    """A `grad_fn`: one op application. Subclassed once per PyTorch name so type names match torch."""

    __slots__ = ("op", "_edges", "_saved", "_params", "_shapes", "_seq", "_freed", "_retain", "_rid", "_hooks",
                 "_post_hooks", "__weakref__")
    _multi = False  # one output: its gradient travels as one array (a custom Function's node may have several)

    def __init__(self, op: Op, edges, saved, params, shapes):
        self.op = op
        self._edges = edges  # (node, 0) per input, (None, 0) where the input needs no gradient
        self._saved = saved  # (ans, *input arrays) or None once freed
        self._params = params
        self._shapes = shapes
        self._seq = next(_seq)
        self._freed = False
        self._retain = None  # weakref to the output tensor when it called retain_grad()
        self._rid = None
        self._hooks = None  # {handle id: (output number, hook, weakref to the tensor)}: its register_hook hooks
        self._post_hooks = None  # fn(grad_inputs, grad_outputs) after it ran (Module.register_backward_hook)

    def name(self) -> str:
        n = type(self).__name__
        # PyTorch's hand-written C++ nodes (CopySlices, CopyBackwards) carry their namespace
        return n if "Backward" in n and not n.endswith("Backwards") else "torch::autograd::" + n

    @property
    def next_functions(self):
        """As PyTorch lists them: inputs that can never get a gradient (a where condition, nll targets) are left out."""
        if self.op.variadic:
            return tuple(self._edges)
        return tuple(e for e, vjp in zip(self._edges, self.op.vjps) if vjp is not None)

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def apply(self, g):
        """Gradients for each input (None where that input needs none)."""
        op = self.op
        if self._freed and op.saves:
            raise RuntimeError(FREED_MESSAGE)
        if STATE.last_write > self._seq and op.needs:
            self._check_versions()
        saved = self._saved
        ans, arrays, params = saved[0], saved[1:], self._params
        out = []
        if op.variadic:
            vjp = op.vjps[0]
            arrays = list(arrays)
            for i, (fn, _) in enumerate(self._edges):
                out.append(None if fn is None else unbroadcast(vjp(g, ans, i, arrays, *params), self._shapes[i]))
            return out
        append = out.append
        for (fn, _), vjp, shape in zip(self._edges, op.vjps, self._shapes):
            if fn is None or vjp is None:
                append(None)
            else:
                gi = vjp(g, ans, *arrays, *params)
                append(gi if gi.shape == shape else unbroadcast(gi, shape))
        return out

    def _check_versions(self):
        """PyTorch's error when a tensor this backward needs was changed in place after it was saved."""
        op, (ans, *arrays) = self.op, self._saved
        wanted = "".join(n for (fn, _), n in zip(self._edges, op.needs) if fn is not None)
        for letter in "abcr":
            if letter not in wanted:
                continue
            if letter == "r":
                arr, producer = ans, type(self).__name__
            else:
                i = "abc".index(letter)
                arr, fn = arrays[i], self._edges[i][0]
                if type(arr) is not np.ndarray:
                    continue
                owner = replaced_by(arr)  # PyTorch names the tensor's grad_fn now, after its in-place op
                if owner is not None:
                    fn = owner._grad_fn
                # NOTE: PyTorch regenerates a modified view's grad_fn as AsStrided and names that in its error.
                producer = None if fn is None or type(fn) is AccumulateGrad else (
                    "AsStridedBackward0" if getattr(getattr(fn, "op", None), "view", False) and owner is None else fn.name())
            owner = replaced_by(arr)  # the tensor's later arrays continue its one version counter
            now, then = _versions(arr if owner is None else owner._data, self._seq)
            if now != then:  # (the tensor's dtype: the node may have saved it cast to the op's promoted dtype)
                dtype = arr.dtype if owner is None else owner._data.dtype
                raise RuntimeError(_modified_message(now, then, arr.shape, dtype, producer))

    def release(self):
        # Nodes whose backward needs only shapes (add, view, sum) stay runnable, as in PyTorch.
        self._freed = True
        if self.op.saves:
            self._saved = None


def _modified_message(now, expected, shape, dtype, producer):
    what = f"[torch.{legacy_tensor_type(dtype)} [{', '.join(map(str, shape))}]]"
    if producer:
        what += f", which is output 0 of {re.sub(r'Backward[0-9]+$', '', producer)},"
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {now}; expected version {expected} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


class AccumulateGrad:
    """The sink node of a leaf that requires grad: adds incoming gradients into `.grad`."""

    __slots__ = ("variable", "_seq", "__weakref__")
    _post_hooks = None
    next_functions = _edges = ()
    _multi = False
    _hooks = None  # a leaf's hooks live in LEAF_HOOKS (the tensor holds its AccumulateGrad only weakly)

    def __init__(self, variable):
        self.variable = variable
        self._seq = float("inf")  # runs as soon as it is ready, as in PyTorch

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


NODE_CLASSES: dict[str, type] = {}
# PyTorch's names for the in-place forms of an op whose node is otherwise the op's own (x.t_() is TBackward1)
INPLACE_NODE_NAMES = {"t": "TBackward1", "transpose": "TransposeBackward1"}
for _op in OPS.values():
    if _op.grad_fn and _op.grad_fn not in NODE_CLASSES:
        NODE_CLASSES[_op.grad_fn] = type(_op.grad_fn, (Node,), {"__slots__": ()})
for _base, _name in INPLACE_NODE_NAMES.items():
    NODE_CLASSES[_name] = type(_name, (NODE_CLASSES[OPS[_base].grad_fn],), {"__slots__": ()})


def accumulator(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad, shared while alive (held weakly by the tensor, as in torch)."""
    ref = tensor._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(acc)
    return acc


def edge_of(t):
    """The graph edge to a tensor that requires grad: its node and which of the node's outputs it is."""
    fn = t._grad_fn
    if fn is None:
        return (accumulator(t), 0)
    return (fn, fn.output_nr(t) if fn._multi else 0)


# ----- hooks (Tensor.register_hook, register_post_accumulate_grad_hook) -----
_hook_ids = itertools.count()
# A leaf's hooks, kept beside it as _WRITES is (a tensor has no slot for them, and its AccumulateGrad is held
# weakly): id(tensor) -> (weakref to it, {handle id: hook} run before accumulation, {handle id: hook} after).
LEAF_HOOKS: dict = {}


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: `remove()` takes its hook out (twice is harmless, as in torch)."""

    __slots__ = ("_table", "id", "__weakref__")

    def __init__(self, table):
        self._table = table
        self.id = next(_hook_ids)

    def remove(self):
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __repr__(self):
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


def leaf_hook_tables(t):
    """(pre, post) hook tables of a leaf, made on first use."""
    key = id(t)
    entry = LEAF_HOOKS.get(key)
    if entry is None or entry[0]() is not t:
        entry = LEAF_HOOKS[key] = (weakref.ref(t, _forget_hooks(key)), {}, {})
    return entry[1], entry[2]


def _forget_hooks(key):
    return lambda _: LEAF_HOOKS.pop(key, None)


def _leaf_entry(t):
    entry = LEAF_HOOKS.get(id(t))
    return entry if entry is not None and entry[0]() is t else None


def leaf_pre_hooks(t, g):
    entry = _leaf_entry(t)
    if entry is None or not entry[1]:
        return g
    for hook in list(entry[1].values()):
        g = call_tensor_hook(hook, g, t._data.dtype, t)
    return g


def run_tensor_hooks(node, g):
    """An output's hooks in registration order, each seeing the gradient the previous one left; with
    several outputs (a custom Function), each hook sees its own output's gradient."""
    for out_nr, hook, owner_ref in list(node._hooks.values()):
        owner = owner_ref()
        if node._multi:
            if g[out_nr] is not None:
                g[out_nr] = call_tensor_hook(hook, g[out_nr], node.output_dtype(out_nr), owner)
        else:
            g = call_tensor_hook(hook, g, g.dtype, owner)
    return g


def call_tensor_hook(hook, g, dtype, owner=None):
    """Call one tensor hook on gradient `g`: its own copy (a hook may change it in place, and that change
    counts as in torch), the result checked as torch checks it, the call shown on the trace."""
    Tensor = registry.Tensor
    if isinstance(g, Tensor):  # create_graph: the hook sees (and may replace) the gradient tensor of the graph
        with user_code():
            r = hook(g)
        if r is not None and not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
        return g if r is None else r
    arg = Tensor._wrap(np.array(g, copy=True))
    if STATE.limits is not None:  # a hook may keep what it is given: it counts against the run's live elements
        STATE.limits.track(arg)
    rec = STATE.recorder
    with user_code():
        r = hook(arg)
    if r is None:
        new = arg._data
    else:
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
        name = callable_name(hook)
        if r._data.shape != np.shape(g):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        if r._data.dtype != dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was torch.{legacy_tensor_type(dtype)} "
                               f"got torch.{legacy_tensor_type(r._data.dtype)})")
        new = r._data
    if rec is not None:
        rec.on_hook("tensor", hook, owner, g, None if r is None and np.array_equal(new, g) else new)
    return new


def callable_name(fn) -> str:
    """The name torch quotes for a hook: a function's __name__ (a sandbox function's `name`)."""
    for _ in range(3):  # through the sandbox's wrappers (a Builtin around a partial around the user's function)
        name = getattr(fn, "__name__", None)
        if isinstance(name, str):
            return name
        name = getattr(fn, "name", None)
        if isinstance(name, str):
            return name
        fn = getattr(fn, "fn", None) or getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            break
    return "hook"


def source_lines(fn):
    """[first, last] source line of a program's function (the sandbox's functions say), else None."""
    for _ in range(3):
        lines = getattr(fn, "source_lines", None)
        if lines is not None:
            return list(lines)
        fn = getattr(fn, "fn", None) or getattr(fn, "func", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            break
    return None


class user_code:  # noqa: N801
    """Program code the engine calls (a hook, a custom Function's forward/backward): its own ops are not
    recorded, so the page draws the hook as one event and a custom Function as one node."""

    __slots__ = ("_rec",)

    def __enter__(self):
        self._rec = STATE.recorder
        STATE.recorder = None
        return self

    def __exit__(self, *exc):
        STATE.recorder = self._rec
        return False


def _accumulate(t, g, rec, pre_hooks=True):
    entry = None
    if LEAF_HOOKS:
        entry = _leaf_entry(t)
        if entry is not None and entry[1] and pre_hooks:
            g = leaf_pre_hooks(t, g)
    grad = t._grad
    before = grad._data if grad is not None else None
    if before is None:
        # NOTE: copy arrays, since one upstream array may feed several leaves (add passes g through).
        if type(g) is np.ndarray:
            t._grad = registry.Tensor._wrap(g.astype(t._data.dtype))  # a copy, layout kept
        elif g.dtype == t._data.dtype:
            t._grad = registry.Tensor._wrap(g)  # numpy scalars are immutable: nothing to copy
        else:
            t._grad = registry.Tensor._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    else:
        # In place on the same grad tensor, so `g = x.grad` sees the sum as in torch.
        t._grad._data = np.asarray(before + g, dtype=t._data.dtype)
    if rec is not None:
        rec.on_accumulate(t, g, before)
    if entry is not None and entry[2]:
        for hook in list(entry[2].values()):
            with user_code():
                hook(t)
            if rec is not None:
                rec.on_hook("post_accumulate", hook, t, None, None)


def _retain(t, g, rec):
    t._grad = registry.Tensor._wrap(np.array(g, dtype=t._data.dtype, copy=True))
    if rec is not None:
        rec.on_retain_grad(t)


def add_post_hook(node, fn):
    """fn(grad_inputs, grad_outputs) runs after `node` computes its inputs' gradients; a tuple it returns replaces
    them (PyTorch's Node.register_hook, which the deprecated Module.register_backward_hook uses)."""
    if node._post_hooks is None:
        node._post_hooks = []
    node._post_hooks.append(fn)


def run_node_post_hooks(node, grads, grad_output):
    """The node's post hooks on (grad_inputs, grad_outputs) as Tensors, one grad_input per next_function."""
    Tensor = registry.Tensor
    op = node.op
    kept = list(range(len(node._edges)))
    if not node._multi and not op.variadic:  # PyTorch lists no slot for an input that never gets a gradient
        kept = [i for i in kept if op.vjps[i] is not None]
    arrays = not any(isinstance(grads[i], Tensor) for i in kept if grads[i] is not None)

    def as_tensor(a):
        return None if a is None or isinstance(a, Tensor) else Tensor._wrap(np.asarray(a))
    outs = grad_output if isinstance(grad_output, list) else [grad_output]
    grad_outputs = tuple(as_tensor(g) if g is not None else None for g in outs)
    grads = list(grads)
    for fn in node._post_hooks:
        grad_inputs = tuple(as_tensor(grads[i]) if not isinstance(grads[i], Tensor) else grads[i] for i in kept)
        r = fn(grad_inputs, grad_outputs)
        if r is None:
            continue
        r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        if len(r) != len(kept):
            raise RuntimeError(f"hook '{callable_name(fn)}' has returned an incorrect number of values (got {len(r)}, "
                               f"but expected {len(kept)})")
        for i, v in zip(kept, r):
            if v is not None and not isinstance(v, Tensor):
                raise TypeError(f"hook '{callable_name(fn)}' returned a {type(v).__name__} where a Tensor or None "
                                "was expected")
            if v is not None and grads[i] is not None and tuple(v.shape) != tuple(np.shape(grads[i])):
                raise RuntimeError(f"hook '{callable_name(fn)}' has changed the size of value")
            grads[i] = v._data if arrays and isinstance(v, Tensor) else v
    return grads
