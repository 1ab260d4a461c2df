"""Functions and classes: `def`/`class`/`return` statements, calls (argument binding, user function frames,
instances, `super()`), and the checks on everything handed to engine code (data sizes, names, module
links, callbacks that count steps).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
from types import BuiltinMethodType, FunctionType, MethodType

from .attributes import PLAIN_TYPES
from .budgets import MAX_CALL_DEPTH, MAX_ENGINE_STRING, elements
from .dataclasses_module import DataclassMethod
from .errors import ProgramError, limit_error
from .flow import UserGenerator
from .instance_protocol import ABSENT, DATASET_DUNDERS, EXCEPTION_DUNDERS, MODULE_DUNDERS
from .numpy_module import NUMPY_CLASSES, gate_of
from .objects import (
    CLASS,
    CONTAINERS,
    FUNC,
    INTERP_TYPES,
    MISSING,
    OBJECT_BASE,
    PRIMITIVES,
    SCALARS,
    SIZED,
    SUPER,
    WRAPPERS,
    BoundMethod,
    Builtin,
    BuiltinClass,
    BuiltinType,
    CachedFunction,
    ClassMethod,
    DeclaredVars,
    GradModeFunction,
    ModuleProxy,
    NumpyRandomState,
    Partial,
    Property,
    RandomObject,
    Return,
    Scope,
    StaticMethod,
    SuperProxy,
    UserClass,
    UserFunction,
    UserInstance,
    docstring,
)
from .plots import HANDLE_TYPES as PLOT_HANDLE_TYPES

# classes a program reaches through type(x) or np.*: numpy scalars are made by the numpy gate, the rest refused
_CHECKED_CLASSES = NUMPY_CLASSES | frozenset(PLOT_HANDLE_TYPES)
_NOT_CALLABLE = PRIMITIVES | CONTAINERS | {UserInstance, ModuleProxy, SuperProxy, ClassMethod, Property, RandomObject,
                                           NumpyRandomState}


TORCH_GENERATOR_ITEMS = 5056  # bytes of a torch.Generator's state, charged per generator a program makes


class Calls:
    """Mixed into the Interpreter."""

    def ev_Call(self, node, scope):
        f = self.ev(node.func, scope)
        args = self._elements(node.args, scope)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                m = self.ev(kw.value, scope)
                if type(m) is not dict:
                    raise ProgramError("TypeError", "argument after ** must be a mapping", kw.lineno, kw.col_offset)
                for k in m:
                    if type(k) is not str:
                        raise ProgramError("TypeError", "keywords must be strings", kw.lineno, kw.col_offset)
                    if k[:1] == "_" and (k[1:2] == "_" or not self._takes_private_keywords(f)):
                        raise ProgramError("TypeError", f"keyword argument '{k}' is not allowed", kw.lineno,
                                           kw.col_offset)
                    if k in kwargs:
                        raise ProgramError("TypeError", f"got multiple values for keyword argument '{k}'",
                                           kw.lineno, kw.col_offset)
                kwargs.update(m)
            else:
                if kw.arg[:1] == "_" and not self._takes_private_keywords(f):
                    raise ProgramError("TypeError", f"keyword argument '{kw.arg}' is not allowed (only the "
                                       "program's own functions and classes take names starting with '_')",
                                       kw.lineno, kw.col_offset)
                kwargs[kw.arg] = self.ev(kw.value, scope)
        if f is SUPER:
            return self._super(args, scope, node)
        try:
            return self.call(f, args, kwargs)
        except Exception as e:
            raise self._at(e, node) from None

    def _takes_private_keywords(self, f):
        """`Value(x, _op='+')`: a keyword starting with '_' goes to a function the program defined, never to
        engine or host code (a class's own `__init__`, an instance's own `__call__`, their bound methods)."""
        t = type(f)
        if t is BoundMethod:
            f, t = f.func, type(f.func)
        if t is UserClass:  # (instantiate and new_user_exception pass keywords to the class's __init__ alone)
            f, t = f.lookup("__init__")[1], type(f.lookup("__init__")[1])
        elif t is UserInstance:
            f, t = f.cls.lookup("__call__")[1], type(f.cls.lookup("__call__")[1])
        return t is UserFunction

    def call(self, f, args, kwargs):
        t = type(f)
        if t is UserFunction:
            return self.call_user(f, args, kwargs)
        if t is MethodType and not kwargs:
            owner_type = type(f.__self__)
            if owner_type is self.tensor_type or owner_type is self.parameter_type:
                # a tensor's method given numbers and tensors alone (`x.pow(2)`, `loss.item()`): every check
                # of the general path below passes for them untouched, except what a result that is a copy costs
                T = self.tensor_type
                for a in args:
                    if type(a) not in SCALARS and not isinstance(a, T):
                        break
                else:
                    r = f(*args)
                    if isinstance(r, SIZED):
                        self.alloc(len(r))
                    return r
        elif kwargs and ((t is MethodType and type(f.__self__) in (self.tensor_type, self.parameter_type))
                         or (t is FunctionType and f in self.engine_functions)) and self._plain_keywords_fit(args, kwargs):
            # `p.sum(1, keepdim=True)`, `torch.multinomial(p, num_samples=1, generator=g)`: a tensor's method or
            # an engine function checked before, given numbers, tensors and generators by name: the general
            # path's checks pass for them untouched (`_plain_keywords_fit` counts what its check_data counts)
            r = f(*args, **kwargs)
            if isinstance(r, SIZED):
                self.alloc(len(r))
            return r
        if t is BuiltinMethodType and not kwargs and type(f.__self__) in PLAIN_TYPES:
            # a method of a plain value (`xs.append(i)`, `d.get(k)`, `s.split()`) given no iterator to bound: the
            # general path below only counts the copy it returns
            T = self.tensor_type
            for a in args:
                ta = type(a)
                if ta not in PRIMITIVES and ta not in CONTAINERS and ta is not T:
                    break
            else:
                r = f(*args)
                if isinstance(r, SIZED):
                    self.alloc(len(r))
                return r
        if not kwargs and (t in self.engine_module_types or (t is FunctionType and f in self.engine_functions)):
            # an engine layer or function given tensors and numbers alone (`model(x)`, `F.mse_loss(p, y)`): every
            # check of the general path below passes for them untouched (it saw this type or function before),
            # except what a result that is a copy costs
            T = self.tensor_type
            for a in args:
                if type(a) not in SCALARS and not isinstance(a, T):
                    break
            else:
                r = f(*args)
                if isinstance(r, SIZED):
                    self.alloc(len(r))
                return r
        if t is BoundMethod:
            if type(f.func) is UserFunction:
                return self.call_user(f.func, [f.obj, *args], kwargs)
            return self.call(f.func, [f.obj, *args], kwargs)
        if t is Builtin or t is BuiltinType or t is DataclassMethod or t is BuiltinClass:
            return f.fn(*args, **kwargs)
        if t is UserClass:
            return self.instantiate(f, args, kwargs)
        if t is UserInstance:  # a class with __call__ (a hand-written layer: `layer(x)`)
            _, method = f.cls.lookup("__call__")
            if method is None:
                raise TypeError(f"'{f.cls.name}' object is not callable")
            if type(method) is UserFunction:
                return self.call_user(method, [f, *args], kwargs)
            return self.call(self.class_attribute(method, f, f.cls, "__call__"), args, kwargs)
        if t in WRAPPERS:
            return self._call_wrapped(f, args, kwargs)
        if isinstance(f, type) and f in _CHECKED_CLASSES:  # np.float32(1.5): a checked scalar; np.ndarray(...),
            return gate_of(self).construct(f, args, kwargs)     # type(fig)(...) refused
        if t in _NOT_CALLABLE or not callable(f):
            raise TypeError(f"'{self.type_name(f)}' object is not callable")
        gm = self.B.grad_mode_types  # (f itself is hashed only when it is a class: `@torch.no_grad`)
        if (t in gm or (t is type and f in gm)) and len(args) == 1 and not kwargs \
                and callable(args[0]) and type(args[0]) not in _NOT_CALLABLE:
            # `@torch.no_grad()` / `@torch.no_grad`: the program's function, run in that grad mode
            if isinstance(f, self.B.set_grad_enabled):
                self.B.state.grad_enabled = f._prev  # its constructor switched the mode: as a decorator, torch undoes it
            return GradModeFunction(args[0], f, self)
        # an engine function, class, module or allowlisted method: bound lazy iterables first
        for i, a in enumerate(args):
            ta = type(a)
            if ta not in PRIMITIVES and ta not in CONTAINERS and ta is not UserInstance and (
                    ta is range or hasattr(ta, "__next__")):
                if ta is range and len(a) > self.max_seq:
                    raise self._seq_limit(len(a))
                if ta is not range:
                    args[i] = self.take(a)
        if type(getattr(f, "__self__", None)) not in PLAIN_TYPES:  # not a str/list/... method
            self._engine_call_args(f, args, kwargs)
            if t is FunctionType and f is not self.B.Generator:  # (a Generator's state is charged every time)
                self.engine_functions.add(f)  # (the fast path above: the checks on `f` alone have passed)
            elif isinstance(f, self.B.Module) and t is not self.B.UserModule and t not in gm:
                self.engine_module_types.add(t)  # (the fast path above: its checks depend on the type alone)
        r = f(*args, **kwargs)
        if isinstance(r, SIZED):  # copies made by allowlisted methods (str.split, dict.copy, ...) count
            self.alloc(len(r))
        return r

    def dunder(self, obj, name, args):
        """`obj`'s class's method `name` called with `args` (a user call: counted, depth-limited); ABSENT
        when the class does not define it (`instance_protocol` then does what Python does)."""
        cls = obj.cls if type(obj) is UserInstance else obj.__dict__["_fg_cls"]
        c, f = cls.lookup(name)
        if c is None:
            return ABSENT
        if type(f) is UserFunction:
            return self.call_user(f, (obj, *args), {})
        return self.call(self.class_attribute(f, obj, cls, name), list(args), {})

    def _plain_keywords_fit(self, args, kwargs):
        """Whether `_engine_call_args(f, args, kwargs)` would leave the arguments as they are and pass: numbers,
        tensors and torch generators alone, keywords that are names, and no more items than `check_data(args,
        kwargs, names=True)` allows (it counts the list and the dict, each key's characters, each tensor's
        elements)."""
        T = self.tensor_type
        G = self.B.Generator
        n = len(args) + 2 * len(kwargs)
        for a in (*args, *kwargs.values()):
            ta = type(a)
            if ta in SCALARS or (ta is G and G is not None):
                continue
            if not isinstance(a, T):
                return False
            n += elements(a)
        for k in kwargs:
            if type(k) is not str or k[:1] == "_" or len(k) > MAX_ENGINE_STRING:
                return False
            n += len(k)
        return n <= self.max_seq

    def _engine_call_args(self, f, args, kwargs):
        """Check (and where needed replace, in place) the arguments of a call into engine code."""
        B = self.B
        owner = getattr(f, "__self__", None)
        if isinstance(owner, B.Optimizer):
            # param_groups are plain lists the program can grow: step() loops over groups x params
            self.check_param_groups(owner.param_groups)
        if f in B.not_constructible:
            raise TypeError(f"cannot create '{B.class_names.get(f, f.__name__)}' instances")
        if f is B.Generator:  # its MT19937 state: 624 words kept for the run, charged as items
            self.alloc(TORCH_GENERATOR_ITEMS, "generator state")
        T = self.tensor_type
        if kwargs or any(type(a) not in SCALARS and not isinstance(a, T) for a in args):
            # a scheduler's own state_dict() has '_last_lr' & co.; its load_state_dict sets only those keys
            names = not (B.Scheduler is not None and isinstance(owner, B.Scheduler)
                         and getattr(f, "__name__", None) == "load_state_dict")
            self.check_data(args, kwargs, names=names)  # (tensors and numbers alone are within the limits)
        # modules handed to the engine, directly or in a list, may become submodules
        links = 0
        for a in (*args, *kwargs.values()):
            if isinstance(a, B.Module):
                links += 1
            elif type(a) in (list, tuple):
                links += sum(1 for x in a if isinstance(x, B.Module))
            elif isinstance(a, dict):  # ModuleDict({...}), Sequential(OrderedDict(...)), md.update({...})
                links += sum(1 for x in a.values() if isinstance(x, B.Module))
        if links:
            self.module_links(links)
        for i, a in enumerate(args):
            args[i] = self._engine_arg(a)
        for k, a in kwargs.items():
            kwargs[k] = self._engine_arg(a)
        if isinstance(owner, B.Optimizer) and getattr(f, "__name__", None) == "step":
            # LBFGS calls step's closure up to max_iter times (10**9 if asked): each call a step, even of a
            # closure that runs no program line (a partial or cache of an engine function, a builtin)
            for i, a in enumerate(args):
                if callable(a):
                    args[i] = Builtin("closure", functools.partial(a), self)
            for k, a in kwargs.items():
                if callable(a):
                    kwargs[k] = Builtin("closure", functools.partial(a), self)

    def _engine_arg(self, a):
        ta = type(a)
        if ta is set:  # the engine's copy: named_modules(memo=s) fills s with object addresses
            return set(a)
        if ta not in INTERP_TYPES and ta not in PRIMITIVES and callable(a) and not isinstance(a, (type, self.B.Module)):
            # a callback the engine may call many times (Module.apply): count steps
            name = getattr(a, "__name__", None) or getattr(a, "name", None) or "function"  # a hook's name in errors
            return Builtin(name if type(name) is str else "function", functools.partial(a), self)
        return a

    def _call_wrapped(self, f, args, kwargs):
        """A staticmethod, grad-mode-decorated function, partial or cached function called. The first two
        are a call level (a program can wrap a function 10^5 times in a loop), as a Python wrapper
        would be; partial and lru_cache are C in Python and take no level (a chain of 10^5 of them ends
        in the host's RecursionError, which no program can catch)."""
        t = type(f)
        if t is Partial:
            return self.call_partial(f, args, kwargs)
        if t is CachedFunction:
            return self.call_cached(f, args, kwargs)
        self.depth += 1
        try:
            if self.depth > MAX_CALL_DEPTH:
                raise limit_error("maximum recursion depth exceeded", None, f"{MAX_CALL_DEPTH} nested calls",
                                  type_name="RecursionError")
            if t is StaticMethod:
                return self.call(f.func, args, kwargs)
            return self._call_in_grad_mode(f, args, kwargs)
        finally:
            self.depth -= 1

    def _call_in_grad_mode(self, f, args, kwargs):
        """A call of a `@torch.no_grad()`-decorated function: inside a fresh grad-mode object, as torch's;
        a generator function's generator runs each step in that mode (torch wraps generators so too)."""
        with self.grad_mode(f.mode):
            r = self.call(f.func, args, kwargs)
        if type(r) is UserGenerator:
            r.grad_mode = f.mode
        return r

    @contextlib.contextmanager
    def grad_mode(self, mode):
        """A fresh copy of the grad-mode object (or class) `mode`, entered; exited after (engine code only)."""
        if isinstance(mode, type):  # the bare class: `@torch.no_grad`
            cm = mode()
        elif isinstance(mode, self.B.set_grad_enabled):
            cm = type(mode)(mode._target)  # (its constructor sets the mode; __enter__ does not)
        else:
            cm = copy.copy(mode)
        t = type(cm)
        t.__enter__(cm)
        try:
            yield
        finally:
            t.__exit__(cm, None, None, None)

    def _super(self, args, scope, node):
        if args:
            if len(args) != 2 or type(args[0]) is not UserClass:
                raise ProgramError("TypeError", "super() arguments must be (class, instance)", node.lineno,
                                   node.col_offset)
            return SuperProxy(args[0], args[1])
        s = scope
        while s is not None and s.func is None:
            s = s.parent
        if s is None or s.func.owner is None or not s.func.posnames:
            raise ProgramError("RuntimeError", "super(): no arguments (use it inside a method)", node.lineno,
                               node.col_offset)
        obj = s.vars.get(s.func.posnames[0], MISSING)
        if obj is MISSING:
            raise ProgramError("RuntimeError", "super(): the first argument is gone", node.lineno, node.col_offset)
        return SuperProxy(s.func.owner, obj)

    def _bind(self, f, args, kwargs):
        names = f.posnames
        n = len(args)
        if f.simple:
            if n == f.nparams and not kwargs:
                return dict(zip(names, args))
        nparams = f.nparams
        d = {}
        if n > nparams:
            if f.vararg is None:
                given = n - (1 if f.owner is not None else 0)
                takes = nparams - (1 if f.owner is not None else 0)
                raise TypeError(f"{f.name}() takes {takes} positional argument{'s' if takes != 1 else ''} but "
                                f"{given} {'were' if given != 1 else 'was'} given")
            d[f.vararg] = tuple(args[nparams:])
            args = args[:nparams]
        elif f.vararg is not None:
            d[f.vararg] = ()
        for name, v in zip(names, args):
            d[name] = v
        extra = {}
        for k, v in kwargs.items():
            if k in d or (k in names and names.index(k) < len(args)):
                raise TypeError(f"{f.name}() got multiple values for argument '{k}'")
            if k in names or k in f.kwonly:
                d[k] = v
            elif f.kwarg is not None:
                extra[k] = v
            else:
                raise TypeError(f"{f.name}() got an unexpected keyword argument '{k}'")
        if f.kwarg is not None:
            d[f.kwarg] = extra
        missing = []
        ndef = len(f.defaults)
        first_default = nparams - ndef
        for i, name in enumerate(names):
            if name not in d:
                if i >= first_default:
                    d[name] = f.defaults[i - first_default]
                else:
                    missing.append(name)
        if missing:
            q = [f"'{m}'" for m in missing]
            listed = q[0] if len(q) == 1 else ", ".join(q[:-1]) + " and " + q[-1]
            raise TypeError(f"{f.name}() missing {len(q)} required positional argument"
                            f"{'s' if len(q) != 1 else ''}: {listed}")
        for name in f.kwonly:
            if name not in d:
                if name in f.kw_defaults:
                    d[name] = f.kw_defaults[name]
                else:
                    raise TypeError(f"{f.name}() missing 1 required keyword-only argument: '{name}'")
        return d

    def call_user(self, f, args, kwargs):
        self.depth += 1
        try:
            if self.depth > MAX_CALL_DEPTH:
                raise limit_error("maximum recursion depth exceeded", None, f"{MAX_CALL_DEPTH} nested calls",
                                  type_name="RecursionError")
            self.steps += 1
            if self.steps >= self.next_check:
                self._check(f.node)
            local = self._bind(f, args, kwargs)
            if f.decls is not None:
                local = self._declared_vars(f, local)
            scope = Scope(local, f.closure, FUNC, f)
            if f.yields is not None:  # a generator function: its body runs as the generator is consumed
                return self.new_generator(f, scope, f.yields)
            rec = self.rec
            line = rec.line if rec is not None else None
            if f.is_lambda:
                try:
                    return self.ev(f.body, scope)
                except Exception as e:
                    raise self._wrap(e, f.body) from None
            r = self.block_of(f.body)(scope)
            if rec is not None:
                rec.line = line  # the rest of the calling statement is on the caller's line
            if type(r) is Return:
                return r.value
            return None
        finally:
            self.depth -= 1

    def declarations(self, node):
        """The `global` and `nonlocal` names of a function body (not of functions or classes in it):
        {name: True for global, False for nonlocal}; None when there are none. Cached per node."""
        cache = self._decl_cache
        if node in cache:
            return cache[node]
        decls = {}
        stack = list(node.body)
        while stack:
            n = stack.pop()
            t = type(n)
            if t is ast.Global or t is ast.Nonlocal:
                for name in n.names:
                    if name in decls and decls[name] != (t is ast.Global):
                        raise ProgramError("SyntaxError", f"name '{name}' is nonlocal and global", n.lineno,
                                           n.col_offset)
                    decls[name] = t is ast.Global
            elif t is not ast.FunctionDef and t is not ast.ClassDef and t is not ast.Lambda:
                stack.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, (ast.stmt, ast.excepthandler)))
        params = {p.arg for p in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        params |= {p.arg for p in (node.args.vararg, node.args.kwarg) if p is not None}
        for name, is_global in decls.items():
            if name in params:
                raise ProgramError("SyntaxError", f"name '{name}' is parameter and {'global' if is_global else 'nonlocal'}",
                                   node.lineno, node.col_offset)
        cache[node] = decls = decls or None
        return decls

    def _declared_vars(self, f, local):
        """A call's local variables with its `global`/`nonlocal` names redirected to where they live."""
        redirect = {}
        for name, is_global in f.decls.items():
            if is_global:
                redirect[name] = self.globals
                continue
            s = f.closure
            while s is not None:
                if s.kind == FUNC and s.func is not None and name in s.vars:
                    redirect[name] = s.vars
                    break
                s = s.parent
            else:
                raise ProgramError("SyntaxError", f"no binding for nonlocal '{name}' found", f.node.lineno,
                                   f.node.col_offset)
        d = DeclaredVars(local)
        d.redirect = redirect
        return d

    def ex_Global(self, node, scope):
        if scope.kind == CLASS:
            raise ProgramError("NotImplementedError", "'global' in a class body is not supported in flowgrad programs",
                               node.lineno, node.col_offset)

    ex_Nonlocal = ex_Global

    def instantiate(self, cls, args, kwargs):
        B = self.B
        if cls.exc_base is not None:
            return self.new_user_exception(cls, args, kwargs)
        if cls.is_module:
            obj = B.UserModule.__new__(B.UserModule)
            object.__setattr__(obj, "_fg_cls", cls)
        elif cls.is_dataset:
            obj = B.UserDataset.__new__(B.UserDataset)
            obj.__dict__["_fg_cls"] = cls
        else:
            obj = UserInstance(cls)
        _, init = cls.lookup("__init__")
        if init is not None:
            r = self.call(init, [obj, *args], kwargs) if type(init) is UserFunction else init(obj, *args, **kwargs)
            if r is not None:
                raise TypeError(f"__init__() should return None, not '{self.type_name(r)}'")
        elif cls.is_module:
            B.Module.__init__(obj, *args, **kwargs)
        elif args or kwargs:
            raise TypeError(f"{cls.name}() takes no arguments")
        return obj

    def ex_ClassDef(self, node, scope):
        module_base = self.B.Module
        dataset_base = self.B.Dataset
        decorators = [self.ev(d, scope) for d in node.decorator_list]  # before the bases, as in Python
        bases = []
        for b in node.bases:
            try:
                v = self.ev(b, scope)
            except NameError:
                if type(b) is ast.Name and b.id == "object":
                    bases.append(OBJECT_BASE)  # `class Memory(object):`, Python 3's default base: it only orders the MRO
                    continue
                raise
            if not (isinstance(v, UserClass) or v is module_base or (v is dataset_base and v is not None)
                    or v is self.B.Function or self.is_exception_class(v)):
                raise ProgramError("TypeError", f"class {node.name} can only inherit from nn.Module, "
                                   "torch.utils.data.Dataset, torch.autograd.Function, Exception (and the other "
                                   "builtin exceptions) or from classes defined in the program", b.lineno, b.col_offset)
            bases.append(v)
        try:
            cls = UserClass(node.name, bases, self, module_base, dataset_base)
        except TypeError as e:  # a repeated base, or bases no method resolution order can keep (CPython's words)
            raise ProgramError("TypeError", str(e), node.lineno, node.col_offset) from None
        if cls.exc_base is not None and (cls.is_module or cls.is_dataset):
            raise ProgramError("TypeError", f"class {node.name} cannot be both an exception and a module or dataset "
                               "in flowgrad programs", node.lineno, node.col_offset)
        if cls.is_module and cls.is_dataset:
            raise ProgramError("TypeError", f"class {node.name} cannot inherit from both nn.Module and Dataset in "
                               "flowgrad programs", node.lineno, node.col_offset)
        prefix = self.qualname_prefix(scope)
        if prefix is not None:
            cls.qualname = f"{prefix}.{node.name}"
        cls.doc = docstring(node.body)
        body_scope = Scope(cls.ns, scope, CLASS)
        body_scope.defs = []
        body_scope.annotations = []
        body_scope.qualname = cls.qualname
        self.exec_block(node.body, body_scope)
        cls.annotations = tuple(body_scope.annotations)
        for f in body_scope.defs:  # also the ones a decorator wrapped: super() works in them
            f.owner = cls
        self._check_class_dunders(cls, node)
        value = cls
        for dec, dnode in zip(reversed(decorators), reversed(node.decorator_list)):
            try:
                value = self.call(dec, [value], {})
            except Exception as e:
                raise self._at(e, dnode) from None
        scope.vars[node.name] = value

    def _check_class_dunders(self, cls, node):
        """Modules, datasets and exceptions are instances of the engine's or Python's classes, whose own
        protocols stay theirs: a dunder those take from the program is refused where it is defined."""
        if cls.is_module:
            allowed, kind = MODULE_DUNDERS, "an nn.Module subclass"
        elif cls.is_dataset:
            allowed, kind = DATASET_DUNDERS, "a Dataset subclass"
        elif cls.exc_base is not None:
            allowed, kind = EXCEPTION_DUNDERS, "an exception class"
        else:
            return
        for c in cls.mro:
            for name in c.ns:
                if name[:2] == "__" and name not in allowed:
                    raise ProgramError("NotImplementedError", f"{kind} cannot define '{name}' in flowgrad programs "
                                       f"(it may define {', '.join(sorted(allowed))}; a plain class may define the "
                                       "other protocols)", node.lineno, node.col_offset)

    def ex_FunctionDef(self, node, scope):
        if not node.decorator_list:
            f = self._function(node.name, node, False, scope)
            value = f
        else:  # decorator expressions are evaluated before the function is made, as in Python
            decorators = []
            for d in node.decorator_list:
                try:
                    decorators.append(self.ev(d, scope))
                except Exception as e:
                    raise self._at(e, d) from None
            f = value = self._function(node.name, node, False, scope)
            for dec, dnode in zip(reversed(decorators), reversed(node.decorator_list)):
                try:
                    value = self.call(dec, [value], {})
                except Exception as e:
                    raise self._at(e, dnode) from None
        if scope.kind == CLASS:
            scope.defs.append(f)
        scope.vars[node.name] = value
