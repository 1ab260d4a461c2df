"""torch.autograd.Function: a program's own differentiable op, with its forward and backward.

`Fn.apply(*args)` runs `Fn.forward(ctx, *args)` without recording a graph, then gives every tensor output one
node, `FnBackward` (a class made per Function, so `type(y.grad_fn).__name__` is torch's name). During backward that
node calls `Fn.backward(ctx, *grads)` and checks what it returns as torch's engine does. `apply_function` is the
core, taking the two callables: the sandbox calls it with a program's functions (its classes are not Python classes).
"""
from __future__ import annotations

import weakref

import numpy as np

from . import registry
from .grad_mode import FREED_MESSAGE, STATE, _seq, no_grad
from .graphed import Graphed
from .nodes import _retain, edge_of, source_lines, user_code
from .op_table import ARGS, Op, unbroadcast


class FunctionCtx:
    """`ctx`: what forward leaves for backward. Arbitrary attributes are the program's own."""

    def __init__(self, fn_name="Function"):
        self._fn_name = fn_name  # torch's ctx is the node itself: it prints as `FnBackward`
        self._saved = ()
        self._saved_freed = False
        self._non_differentiable = ()
        self._dirty = ()
        self._materialize = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        Tensor = registry.Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self):
        if self._saved_freed:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(self._saved)

    def mark_dirty(self, *tensors):
        """forward changed these inputs in place and returns them: they become its outputs (no alias is made)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def __repr__(self):
        return f"<torch.autograd.function.{self._fn_name}Backward object at {id(self):#x}>"


class BackwardCFunction:
    """The node of one `Fn.apply`: subclassed per Function as `FnBackward`. Its gradients travel as one list with
    an entry per output (`_multi`), so each output's gradient reaches backward in its place."""

    __slots__ = ("op", "ctx", "_backward", "_edges", "_out_meta", "_outputs", "_seq", "_freed", "_retain", "_rid",
                 "_hooks", "_retains", "_fn_name", "_post_hooks", "__weakref__")
    _multi = True

    def __init__(self, op, ctx, backward, edges, out_meta, outputs, fn_name):
        self.op = op
        self.ctx = ctx
        self._backward = backward
        self._edges = edges
        self._out_meta = out_meta  # (shape, dtype) per output, to make a missing gradient zeros
        self._outputs = outputs  # weakrefs to the output tensors (None for a non-tensor output)
        self._seq = next(_seq)
        self._freed = False
        self._retain = None  # (the loop's single-output retain_grad; outputs here are retained by `_retains`)
        self._retains = None  # {output number: weakref to the tensor} that called retain_grad()
        self._rid = None
        self._hooks = None
        self._post_hooks = None
        self._fn_name = fn_name

    @property
    def n_outputs(self):
        return len(self._out_meta)

    def output_nr(self, t):
        for i, ref in enumerate(self._outputs):
            if ref is not None and ref() is t:
                return i
        return 0

    def output_dtype(self, i):
        return self._out_meta[i][1]

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        """As torch lists them: one entry per tensor argument (numbers and other arguments are left out)."""
        return tuple(e for e, meta in zip(self._edges, self.op.params_meta) if meta is not None)

    @property
    def saved_tensors(self):
        return self.ctx.saved_tensors

    @property
    def needs_input_grad(self):
        return self.ctx.needs_input_grad

    def __repr__(self):
        return f"<torch.autograd.function.{type(self).__name__} object at {id(self):#x}>"

    def source_lines(self):
        return source_lines(self._backward)

    def apply(self, grads):
        Tensor = registry.Tensor
        ctx = self.ctx
        if self._retains:  # after the outputs' hooks (run_backward ran them), as torch retains
            rec = STATE.recorder
            for i, ref in self._retains.items():
                t = ref()
                if t is not None and grads[i] is not None:
                    _retain(t, grads[i], rec)
        args = []
        limits = STATE.limits
        for g, (shape, dtype) in zip(grads, self._out_meta):
            if g is None:
                args.append(Tensor._wrap(np.zeros(shape, dtype=dtype)) if ctx._materialize else None)
            else:
                args.append(Tensor._wrap(np.array(g, copy=True)))
            if limits is not None and args[-1] is not None:  # the program's backward may keep its arguments
                limits.track(args[-1])
        with user_code():
            result = self._backward(ctx, *args)
        return self._check_gradients(result, Tensor)

    def apply_graphed(self, grads):
        """Under create_graph: the program's backward runs on the gradient tensors themselves with grad mode on, so
        the ops it makes are recorded and its gradients can be differentiated again (as PyTorch's engine does)."""
        Tensor = registry.Tensor
        ctx = self.ctx
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._retains:
            for i, ref in self._retains.items():
                t = ref()
                if t is not None and grads[i] is not None:
                    t._grad = grads[i]
        args = []
        for g, (shape, dtype) in zip(grads, self._out_meta):
            if g is None:
                g = Tensor._wrap(np.zeros(shape, dtype=dtype)) if ctx._materialize else None
            args.append(g)
        with user_code():
            result = self._backward(ctx, *args)
        return self._check_gradients(result, Tensor, graphed=True)

    def _check_gradients(self, result, Tensor, graphed=False):
        """The gradients backward returned, as torch's engine checks them: one per forward input (extra ones
        only None), tensors or None, None for non-tensor inputs, each summable to its input's shape."""
        name = type(self).__name__
        got = list(result) if isinstance(result, tuple) else [result]
        n = len(self._edges)
        if len(got) > n and all(g is None for g in got[n:]):
            got = got[:n]
        if len(got) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, got "
                               f"{len(got)})")
        out = []
        for i, (g, (fn, _), meta) in enumerate(zip(got, self._edges, self._in_meta)):
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if meta is None:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
            if fn is None:
                out.append(None)  # that input needs no gradient: torch drops it unchecked
                continue
            shape, dtype = meta
            arr = g._data
            if not _expandable(shape, arr.shape):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                                   f"{list(arr.shape)} but expected shape compatible with {list(shape)}")
            if graphed:  # a recorded sum back to the input's shape and a recorded cast: the gradient stays a graph
                gg = Graphed(g)
                gg = unbroadcast(gg, tuple(shape)) if gg.shape != tuple(shape) else gg
                out.append((gg.astype(dtype) if gg.dtype != dtype else gg).t)
                continue
            arr = _sum_to(np.asarray(arr), shape)
            out.append(arr.astype(dtype, copy=False) if arr.dtype != dtype else arr)
        return out

    @property
    def _in_meta(self):
        return self.op.params_meta

    def release(self):
        self._freed = True
        self.ctx._saved_freed = True
        self.ctx._saved = ()


class _FunctionOp:
    """What the recorder and the page read of an op, for one Function (it is not in the op table)."""

    __slots__ = ("name", "grad_fn", "label", "latex", "saves", "variadic", "needs", "view", "broadcasts", "params",
                 "vjps", "params_meta", "sizes", "flops")

    def __init__(self, fn_name, n_inputs, in_meta):
        self.name = "autograd_function"
        self.grad_fn = fn_name + "Backward"
        self.label = fn_name
        self.latex = (rf"\text{{{fn_name}.backward}}",) * n_inputs
        self.saves = True
        self.variadic = False
        self.needs = ()
        self.view = False
        self.broadcasts = False
        self.params = ARGS
        self.vjps = (None,) * n_inputs
        self.params_meta = in_meta
        self.sizes = self.flops = None  # its forward is the program's code, run on tensors (each op checks itself)


assert set(_FunctionOp.__slots__) >= set(Op.__slots__) - {"forward"}  # the recorder reads an Op's fields

_NODE_CLASSES: dict = {}


def node_class(fn_name: str, node_name=None) -> type:
    name = node_name or fn_name + "Backward"
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (BackwardCFunction,), {"__slots__": ()})
    return cls


def _expandable(shape, grad_shape):
    """torch's is_expandable_to(shape, grad): the input's shape broadcasts to the gradient's."""
    if len(shape) > len(grad_shape):
        return False
    for a, b in zip(reversed(shape), reversed(grad_shape)):
        if a != b and a != 1:
            return False
    return True


def _sum_to(g, shape):
    if g.shape == tuple(shape):
        return g
    return unbroadcast(g, tuple(shape))


def apply_function(fn_name, forward, backward, args, kwargs=None, setup_context=None, node_name=None):
    """`Fn.apply(*args, **kwargs)` for a Function named `fn_name` with these forward/backward callables. With
    `setup_context` (torch 2's style) forward takes no ctx and `setup_context(ctx, inputs, output)` fills it."""
    Tensor = registry.Tensor
    kwargs = kwargs or {}
    ctx = FunctionCtx(fn_name)
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    rec = STATE.recorder
    with user_code():
        with no_grad():
            if setup_context is None:
                result = forward(ctx, *args, **kwargs)
            else:
                result = forward(*args, **kwargs)
                setup_context(ctx, args, result)
    single = not isinstance(result, tuple)
    outputs = [result] if single else list(result)
    tracked = STATE.grad_enabled and any(ctx.needs_input_grad)
    inputs_seen = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx._dirty}
    for i, o in enumerate(outputs):
        if isinstance(o, Tensor) and id(o) in inputs_seen:
            if id(o) in dirty:  # changed in place: the input itself becomes the output, its history rebased on the node
                if tracked and o._grad_fn is None and o._requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                continue
            outputs[i] = o = _alias(o, Tensor)  # forward returned an input: the output is a new tensor on its data
    tensor_outs = [o for o in outputs if isinstance(o, Tensor)]
    op = None
    if tracked and tensor_outs:
        in_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor) else None for a in args)
        op = _FunctionOp(fn_name, len(args), in_meta)
        edges = tuple(edge_of(a) if isinstance(a, Tensor) and a._requires_grad else (None, 0) for a in args)
        out_meta = tuple((np.shape(o._data), o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
                         for o in outputs)
        refs = tuple(weakref.ref(o) if isinstance(o, Tensor) else None for o in outputs)
        node = node_class(fn_name, node_name)(op, ctx, backward, edges, out_meta, refs, fn_name)
        non_diff = {id(t) for t in ctx._non_differentiable}
        limits = STATE.limits
        for o in tensor_outs:
            if id(o) in non_diff:
                o._grad_fn, o._requires_grad = None, False
            elif o._data.dtype.kind == "f":
                o._grad_fn, o._requires_grad = node, True
        if limits is not None:
            limits.count_node()
    if rec is not None and tensor_outs:
        rec.on_function(op, fn_name, args, tensor_outs, forward)
    return outputs[0] if single else tuple(outputs)


def _alias(t, Tensor):
    out = Tensor._wrap(t._data)
    return out


ONCE_DIFFERENTIABLE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


def _delayed_error_backward(ctx, *grads):
    raise RuntimeError(ONCE_DIFFERENTIABLE_MESSAGE)


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: backward runs without recording; under create_graph its
    gradients hang from an `Error` node, so differentiating them again raises torch's error (not a silent zero)."""

    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        Tensor = registry.Tensor
        if not STATE.grad_enabled or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        items = (outputs,) if single else outputs
        fakes = tuple(None if o is None else Tensor._wrap(o._data, requires_grad=True) if isinstance(o, Tensor)
                      else o for o in items)  # torch's fake_requires_grad: detached aliases that require grad
        wrapped = apply_function("Error", lambda ctx, *xs: xs if len(xs) != 1 else xs[0], _delayed_error_backward,
                                 fakes, node_name="Error")
        return wrapped if single else tuple(wrapped) if isinstance(wrapped, tuple) else (wrapped,)

    wrapper.__name__ = getattr(fn, "__name__", "backward")
    wrapper.__wrapped__ = fn
    return wrapper


class Function:
    """torch.autograd.Function: subclass it with `@staticmethod forward(ctx, ...)` and `backward(ctx, *grads)`,
    call `Fn.apply(...)`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):  # torch's other name for backward: a Function may define either
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        setup = cls.setup_context if cls.setup_context is not Function.setup_context else None
        backward = cls.vjp if cls.backward is Function.backward and cls.vjp is not Function.vjp else cls.backward
        return apply_function(cls.__name__, cls.forward, backward, args, kwargs, setup)


__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "apply_function", "once_differentiable"]
