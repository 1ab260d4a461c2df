"""torch.nn modules: Module with parameter registration, and the layers and losses a classroom uses."""
from __future__ import annotations

import math
import warnings
from collections import OrderedDict, namedtuple

from .. import creation, dtypes, registry
from ..autograd import STATE, RemovableHandle
from ..boundary import plain_text
from ..devices import CUDA_MISSING, parse_to, resolve
from ..function import apply_function
from ..nodes import add_post_hook, callable_name
from ..tensor_core import Tensor, counted
from . import functional as F
from . import init


class Parameter(Tensor):
    """A leaf tensor that a Module registers; requires grad by default."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        t = cls._wrap((data if data is not None else creation.tensor([]))._data)
        t._requires_grad = False
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo):  # Parameter.__deepcopy__: its data and requires_grad, never its .grad
        out = memo[id(self)] = counted(type(self)(Tensor._wrap(self._copied_data()), self._requires_grad))
        return out

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


class _BackwardHookState:
    """register_full_backward_hook as torch builds it: the module's tensor inputs and outputs pass through an
    identity Function (`BackwardHookFunctionBackward`); the outputs' one keeps grad_output, the inputs' one calls
    the hooks with grad_input (when no input needs a gradient, the outputs' one calls them with Nones)."""

    def __init__(self, module, hooks, args):
        self.module = module
        self.hooks = hooks
        self.grad_output = None
        self.n_inputs = sum(1 for a in args if isinstance(a, Tensor))
        self.inputs_tracked = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        self.rec = STATE.recorder

    def _identity(self, tensors, backward):
        def forward(ctx, *xs):
            return xs if len(xs) > 1 else xs[0]

        out = apply_function("BackwardHookFunction", forward, backward, tensors)
        return out if isinstance(out, tuple) else (out,)

    def wrap_inputs(self, args):
        if not self.inputs_tracked:
            return args
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        wrapped = self._identity([args[i] for i in positions], self._input_backward)
        args = list(args)
        for i, w in zip(positions, wrapped):
            args[i] = w
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, tuple) else None
        if outs is None or not any(isinstance(o, Tensor) and o.requires_grad for o in outs):
            return out
        positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        wrapped = self._identity([outs[i] for i in positions], self._output_backward)
        for i, w in zip(positions, wrapped):
            outs[i] = w
        return outs[0] if single else tuple(outs)

    def _input_backward(self, ctx, *grads):
        return self._call_hooks(grads)

    def _output_backward(self, ctx, *grads):
        self.grad_output = grads
        if not self.inputs_tracked:
            self._call_hooks((None,) * max(self.n_inputs, 1))
        return grads if len(grads) > 1 else grads[0]

    def _call_hooks(self, grad_input):
        grad_input = tuple(grad_input)
        rec = self.rec  # the recorder is muted while a Function's backward runs: the hook event goes to the run's
        for hook in self.hooks:
            r = hook(self.module, grad_input, self.grad_output)
            if rec is not None:
                rec.on_hook("module_backward", hook, None, None, None)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, "
                                       f"but expected {len(grad_input)}")
                grad_input = r
        return grad_input if len(grad_input) > 1 else grad_input[0]


def _hook_last_node(module, hooks, args, out):
    """Module.register_backward_hook as PyTorch 2.13 runs it: each hook on the grad_fn of the output's first tensor,
    with PyTorch's FutureWarnings where that node's gradients are not the module's."""
    var = out
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        elif isinstance(var, (tuple, list)) and var:
            var = var[0]
        else:
            return
    node = var.grad_fn
    if node is None:
        return
    rec = STATE.recorder
    for hook in hooks:
        def call(grad_input, grad_output, hook=hook):
            r = hook(module, grad_input, grad_output)
            if rec is not None:
                rec.on_hook("module_backward", hook, None, None, None)
            return r
        call.__name__ = callable_name(hook)  # (PyTorch's messages name the program's hook)
        add_post_hook(node, call)
    _warn_non_full_backward_hook(args, out, node)


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
                          "of Tensors is deprecated and will be removed in future versions. This hook will be missing "
                          "some of the grad_output. Please use register_full_backward_hook to get the documented "
                          "behavior.", FutureWarning, stacklevel=4)
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                          "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                          "missing some of the grad_input. Please use register_full_backward_hook to get the "
                          "documented behavior.", FutureWarning, stacklevel=4)
            return
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                      "and will be removed in future versions. This hook will be missing some grad_output.",
                      FutureWarning, stacklevel=4)
    elif len(out_grad_fn) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                      "Please use register_full_backward_hook to get the documented behavior.", FutureWarning,
                      stacklevel=4)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=4)


class Module:
    """Base class: attributes that are Parameters or Modules are registered, in assignment order."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is None and isinstance(value, (Parameter, Module)):
            raise AttributeError("cannot assign parameters or modules before Module.__init__() call")
        if isinstance(value, Parameter):
            self.__dict__.pop(name, None)  # a plain attribute of that name goes, as in PyTorch (`remove_from`)
            self._modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            params.pop(name, None)
            self._modules[name] = value
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)  # never serve protocol names (numpy's __array_interface__...) from registries
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        elif name in self._buffers:
            del self._buffers[name]
        else:
            object.__delattr__(self, name)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if "_hook_tables" in self.__dict__:
            return self._call_with_hooks(args, kwargs)
        rec = STATE.recorder
        if rec is None:
            return self.forward(*args, **kwargs)
        rec.enter_module(self)
        try:
            return self.forward(*args, **kwargs)
        finally:
            rec.exit_module(self)

    # ----- hooks -----
    def _hooks(self, kind):
        tables = self.__dict__.get("_hook_tables")
        if tables is None:
            tables = {"forward_pre": {}, "forward": {}, "backward": {}, "backward_legacy": {}}
            object.__setattr__(self, "_hook_tables", tables)
        return tables[kind]

    def _register(self, kind, hook):
        if not callable(hook):
            raise TypeError(f"'{type(hook).__name__}' object is not callable")
        table = self._hooks(kind)
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook):
        """`hook(module, args)` before forward; a value it returns replaces the arguments (a non-tuple is wrapped)."""
        return self._register("forward_pre", hook)

    def register_forward_hook(self, hook):
        """`hook(module, args, output)` after forward; a value it returns replaces the output."""
        return self._register("forward", hook)

    def register_backward_hook(self, hook):
        """Deprecated in PyTorch, still run as it runs it: `hook(module, grad_input, grad_output)` on the grad_fn of
        the module's output (its last op): grad_input are that op's inputs' gradients, not the module's."""
        if self._hooks("backward"):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        return self._register("backward_legacy", hook)

    def register_full_backward_hook(self, hook):
        """`hook(module, grad_input, grad_output)` when the gradients of the module's inputs are computed; a tuple
        it returns replaces grad_input."""
        if self._hooks("backward_legacy"):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        return self._register("backward", hook)

    def _call_with_hooks(self, args, kwargs):
        tables = self.__dict__["_hook_tables"]
        rec = STATE.recorder
        for hook in list(tables["forward_pre"].values()):
            r = hook(self, args)
            if rec is not None:
                rec.on_hook("module_forward_pre", hook, None, None, None)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        backward_hooks = list(tables["backward"].values())
        state = None
        if backward_hooks and STATE.grad_enabled:
            state = _BackwardHookState(self, backward_hooks, args)
            args = state.wrap_inputs(args)
        if rec is not None:
            rec.enter_module(self)
        try:
            out = self.forward(*args, **kwargs)
        finally:
            if rec is not None:
                rec.exit_module(self)
        for hook in list(tables["forward"].values()):
            r = hook(self, args, out)
            if rec is not None:
                rec.on_hook("module_forward", hook, None, None, None)
            if r is not None:
                out = r
        if state is not None:
            out = state.wrap_outputs(out)
        legacy = list(tables["backward_legacy"].values())
        if legacy and STATE.grad_enabled:
            _hook_last_node(self, legacy, args, out)
        return out

    def register_parameter(self, name, param):
        _check_name(name, "parameter", self)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name, module):
        _check_name(name, "module", self)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor the module owns but does not train (BatchNorm's running statistics): in state_dict
        unless persistent=False."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer", self)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def get_parameter(self, target):
        mod, _, name = target.rpartition(".")
        return getattr(self.get_submodule(mod), name)

    def get_submodule(self, target):
        m = self
        for part in target.split(".") if target else []:
            if part not in m._modules:
                raise AttributeError(f"{m._get_name()} has no attribute `{part}`")
            m = m._modules[part]
        return m

    # ----- traversal -----
    def named_modules(self, memo=None, prefix=""):
        # a copy, as a real set of the modules already seen (as in torch, modules, not their ids): a
        # program's `memo` is never called (memo.add(...) on a module would run program code with an address)
        memo = set() if memo is None else set(memo)
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if m is None or m in memo:
                continue
            memo.add(m)
            yield name, m
            children = [(name + ("." if name else "") + n, c) for n, c in m._modules.items()]
            stack.extend(reversed(children))

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, members, prefix, recurse):
        """(qualified name, value) of each distinct non-None entry of the `members` dict (`_parameters` or
        `_buffers`) of this module, and of its submodules when recurse."""
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mname, m in modules:
            for name, v in getattr(m, members).items():
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield (mname + "." if mname else "") + name, v

    def named_parameters(self, prefix="", recurse=True):
        yield from self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        # named_parameters' order and distinct values, without building names no one reads (a training loop's
        # `model.parameters()` and zero_grad() walk it every step)
        seen = set()
        stack = [self]
        memo = set()
        while stack:
            m = stack.pop()
            if m is None or m in memo:
                continue
            memo.add(m)
            for v in m._parameters.values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    yield v
            if recurse:
                stack.extend(reversed(m._modules.values()))

    def named_buffers(self, prefix="", recurse=True):
        yield from self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """PyTorch's order: each module's parameters, then its persistent buffers, then its children."""
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:  # (a lazy module's uninitialized parameter goes as it is, as in PyTorch)
                out[prefix + name] = p if keep_vars or p._uninitialized else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                out[prefix + name] = b if keep_vars or b._uninitialized else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values in place (shapes must match); PyTorch's error text for missing/unexpected keys and
        size mismatches; returns PyTorch's `<All keys matched successfully>` named tuple."""
        for path, m in self.named_modules():  # lazy modules take the loaded shapes first (their load hook)
            materialize = getattr(m, "_materialize_from", None)
            if materialize is not None:
                materialize(state_dict, path + "." if path else "")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for k, t in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            if not isinstance(v, Tensor):
                errors.append(f'While copying the parameter named "{k}", expected torch.Tensor or Tensor-like object '
                              f"from checkpoint but received {type(v)}")
                continue
            if tuple(v.shape) != tuple(t.shape):
                errors.append(f"size mismatch for {k}: copying a param with shape {v.shape} from checkpoint, the "
                              f"shape in current model is {t.shape}.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors))
        with init.no_grad():
            for k, t in own.items():
                if k in state_dict:
                    t.copy_(state_dict[k])
        return _IncompatibleKeys(missing, unexpected)

    def zero_grad(self, set_to_none=True):
        params = [p for p in self.parameters() if p.grad is not None]
        _zero_grads(params, set_to_none)

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def to(self, *args, **kwargs):
        """Moves to the CPU (the only device) and casts floating parameters, buffers and grads in place."""
        dtype, _ = parse_to(args, kwargs, dtypes.dtype, Tensor)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")
        return self if dtype is None else self._cast_floating(dtype)

    def _cast_floating(self, dtype):
        # torch swaps `.data` (and the grad's), so the Parameter objects optimizers hold stay the same
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None and p.is_floating_point() and p.dtype != dtype:
                    p.data = p.data.to(dtype)
                    if p.grad is not None:
                        p.grad.data = p.grad.data.to(dtype)
            for name, b in m._buffers.items():
                if b is not None and b.is_floating_point() and b.dtype != dtype:
                    m._buffers[name] = b.to(dtype)
        return self

    def float(self):
        return self._cast_floating(dtypes.float32)

    def double(self):
        return self._cast_floating(dtypes.float64)

    def half(self):
        return self._cast_floating(dtypes.float16)

    def cpu(self):
        return self

    def cuda(self, device=None):
        resolve("cuda" if device is None else device)
        raise AssertionError(CUDA_MISSING)

    def apply(self, fn):
        for m in list(self.children()):
            m.apply(fn)
        fn(self)
        return self

    # ----- printing, as PyTorch prints modules -----
    def extra_repr(self) -> str:
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            text = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _optional_parameters(module, present, names, *shape, dtype=None):
    """Registers each of `names` on `module`: an uninitialised Parameter of `shape` when `present`, else None
    (how a layer without affine weights or without bias still lists them)."""
    for name in names:
        module.register_parameter(name, Parameter(creation.empty(*shape, dtype=dtype)) if present else None)


def _check_name(name, what, owner):
    """PyTorch's rules for registered names, plus: no leading underscore (never a protocol name)."""
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if not name:
        raise KeyError(f'{what} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name.startswith("_"):
        raise KeyError(f'{what} name can\'t start with "_" in flowgrad: "{name}"')


def _zero_grads(params, set_to_none):
    for p in params:
        if set_to_none:
            p._grad = None
        else:
            p._grad._data = p._grad._data * 0
    rec = STATE.recorder
    if rec is not None and params:
        rec.on_zero_grad(params, set_to_none)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, dtype=None, device=None):
        super().__init__()
        resolve(device)  # CPU, or the error a CPU-only torch raises
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform(a=√5) on the weight, i.e. U(±1/√fan_in), and the same bound for bias.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        params = self._parameters  # what self.weight / self.bias find, without __getattr__'s registry walk
        if "weight" in params and "bias" in params:
            return F.linear(x, params["weight"], params["bias"])
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={plain_text(self.in_features)}, out_features={plain_text(self.out_features)}, "
                f"bias={self.bias is not None}")


class _Activation(Module):
    fn = None

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        return type(self).fn(x)


class ReLU(Module):
    """nn.ReLU(inplace): in place, the layer's input is overwritten and returned (DCGAN's generators use it)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.relu(x, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(_Activation):
    fn = staticmethod(F.tanh)


class Sigmoid(_Activation):
    fn = staticmethod(F.sigmoid)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)

    def extra_repr(self):
        return f"dim={plain_text(self.dim)}"


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self.dim)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={plain_text(self.start_dim)}, end_dim={plain_text(self.end_dim)}"


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        return mods[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self


registry.Module = Module  # the recorder names a program's modules (it is loaded without nn)


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self):
        """PyTorch's: consecutive children that print alike as one entry, `(0-5): 6 x TransformerEncoderLayer(...)`."""
        blocks = []  # [first index, last index, text]
        for i, m in enumerate(self._modules.values()):
            text = repr(m)
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        if not blocks:
            return self._get_name() + "()"
        lines = [(f"({a}): {t}" if a == b else f"({a}-{b}): {b - a + 1} x {t}").replace("\n", "\n  ")
                 for a, b, t in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"
