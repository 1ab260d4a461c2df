"""`import inspect` as programs use it: `inspect.signature(f).parameters` (nanoGPT asks whether torch.optim.AdamW
takes `fused`), and isclass / isfunction / ismethod / isbuiltin.

A signature is rebuilt from names, kinds and defaults: of a program's function from its own parameters, of the
engine's functions and classes from Python's signature of them, where only plain defaults (numbers, strings, None,
tuples of them) are kept and any other default shows as `...` and reads as `inspect.Parameter.empty`. No host object
(a function, a class, an annotation) reaches the program through it.
"""
from __future__ import annotations

import inspect as _inspect

from .objects import BoundMethod, Builtin, BuiltinClass, ModuleProxy, UserClass, UserFunction

_PLAIN = (int, float, str, bool, type(None))


class _Empty:
    """inspect.Parameter.empty / inspect.Signature.empty: no default."""

    def __repr__(self):
        return "<class 'inspect._empty'>"


EMPTY = _Empty()


class Parameter:
    """One parameter of a signature: name, kind (its name, as `str(p.kind)`), default."""

    __slots__ = ("name", "kind", "default")

    def __init__(self, name, kind, default=EMPTY):
        self.name, self.kind, self.default = name, kind, default

    def __str__(self):
        prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(self.kind, "")
        # (a default that is not a plain value, a program's object, is shown as `...`: its text is the interpreter's)
        return prefix + self.name + ("" if self.default is EMPTY else f"={_plain(self.default)!r}")

    def __repr__(self):
        return f'<Parameter "{self}">'


class Signature:
    """What inspect.signature gives: `parameters` (name -> Parameter, in order), printed as Python prints one."""

    __slots__ = ("parameters",)

    def __init__(self, parameters):
        self.parameters = dict((p.name, p) for p in parameters)

    def __str__(self):
        parts, starred = [], False
        for p in self.parameters.values():
            if p.kind == "KEYWORD_ONLY" and not starred:
                parts.append("*")
            starred = starred or p.kind in ("KEYWORD_ONLY", "VAR_POSITIONAL")
            parts.append(str(p))
        return "(" + ", ".join(parts) + ")"

    def __repr__(self):
        return f"<Signature {self}>"


def _plain(value):
    if isinstance(value, _PLAIN) or (isinstance(value, tuple) and len(value) <= 16 and all(isinstance(v, _PLAIN)
                                                                                          for v in value)):
        return value
    return Ellipsis  # a default that is a host object: shown as `...`, never handed out


def _of_program_function(f: UserFunction, drop_first: bool) -> Signature:
    params, first_default = [], f.nparams - len(f.defaults)
    for i, name in enumerate(f.posnames):
        params.append(Parameter(name, "POSITIONAL_OR_KEYWORD", f.defaults[i - first_default] if i >= first_default
                                else EMPTY))
    if f.vararg:
        params.append(Parameter(f.vararg, "VAR_POSITIONAL"))
    params += [Parameter(n, "KEYWORD_ONLY", f.kw_defaults.get(n, EMPTY)) for n in f.kwonly]
    if f.kwarg:
        params.append(Parameter(f.kwarg, "VAR_KEYWORD"))
    return Signature(params[1:] if drop_first else params)


def _of_host(obj) -> Signature:
    try:
        sig = _inspect.signature(obj)
    except (TypeError, ValueError):
        raise ValueError(f"no signature found for {type(obj).__name__}") from None
    return Signature(Parameter(p.name, p.kind.name, EMPTY if p.default is _inspect.Parameter.empty else _plain(p.default))
                     for p in sig.parameters.values())


def _made_by_signature(name):
    def refuse(*args, **kwargs):
        raise TypeError(f"inspect.{name} objects come from inspect.signature() in flowgrad programs")
    return refuse


def inspect_module(interp) -> ModuleProxy:
    def signature(obj):
        t = type(obj)
        if t is UserFunction:
            return _of_program_function(obj, False)
        if t is BoundMethod and type(obj.func) is UserFunction:
            return _of_program_function(obj.func, True)
        if t is UserClass:
            init = obj.lookup("__init__")[1]
            if type(init) is UserFunction:
                return _of_program_function(init, True)
            return Signature([])
        if t is Builtin:
            return _of_host(obj.fn)
        if t is ModuleProxy or t is BuiltinClass:
            raise TypeError(f"{interp.type_name(obj)!r} is not a callable object")
        if isinstance(obj, type) or callable(obj):  # the engine's functions and classes (torch.optim.AdamW)
            return _of_host(obj)
        raise TypeError(f"{interp.type_name(obj)!r} is not a callable object")

    def isclass(obj):
        return type(obj) is UserClass or isinstance(obj, type)

    def isfunction(obj):
        return type(obj) is UserFunction or _inspect.isfunction(obj)

    attrs = {"signature": Builtin("signature", signature, interp), "isclass": Builtin("isclass", isclass, interp),
             "isfunction": Builtin("isfunction", isfunction, interp),
             "ismethod": Builtin("ismethod", lambda obj: type(obj) is BoundMethod or _inspect.ismethod(obj), interp),
             "isbuiltin": Builtin("isbuiltin", lambda obj: type(obj) is Builtin or _inspect.isbuiltin(obj), interp),
             **{name: BuiltinClass(f"inspect.{name}", cls, _made_by_signature(name), interp, {"empty": EMPTY})
                for name, cls in (("Parameter", Parameter), ("Signature", Signature))}}
    return ModuleProxy("inspect", attrs)


ATTRIBUTE_RULES = {Signature: (("parameters",), {}), Parameter: (("name", "kind", "default"), {})}
REPR_TYPES = (Signature, Parameter, _Empty)  # printed with their own repr (sandbox/formatting.py)
