"""Attributes starting with one '_' (micrograd's `self._prev`, `self._backward`): a program reads and sets them
on the objects it defined itself only, and never the names its engine or Python base class uses itself.

Instances and classes of the program's classes qualify; for a subclass of nn.Module, Dataset,
torch.autograd.Function or an exception, the base class's own '_' names (`_parameters`, `_modules`, hooks,
...) stay refused, so a program cannot read the engine's internals or overwrite them under its feet. Every
other value (tensors, engine modules, numpy, functions, modules such as math) refuses any '_' attribute, in the
words the syntax check used before. Names starting with '__' are the syntax check's (checks.py).
"""

from __future__ import annotations

import types

from .objects import USER_EXCEPTION_TYPES, SuperProxy, UserClass, UserInstance

PRIVATE_REFUSAL = "attributes starting with '_' such as '{}' are not allowed in flowgrad programs"
# the sandbox's own markers on program objects (`_fg_cls`, an exception's `_fg_where`)
SANDBOX_PREFIX = "_fg_"
_RESERVED: dict = {}  # engine or Python base class -> the '_' names it uses itself (computed once)
# PyTorch 2.13's own '_' names on these classes (a fresh instance's and the class's): a program that sets one
# breaks torch's bookkeeping there, so it is refused here too, also where the engine has no such name
TORCH_PRIVATE_NAMES = {
    "torch.nn.Module": frozenset("""
        _backward_hooks _backward_pre_hooks _buffers _forward_hooks _forward_hooks_always_called
        _forward_hooks_with_kwargs _forward_pre_hooks _forward_pre_hooks_with_kwargs _is_full_backward_hook
        _load_state_dict_post_hooks _load_state_dict_pre_hooks _modules _non_persistent_buffers_set _parameters
        _state_dict_hooks _state_dict_pre_hooks _apply _call_impl _compiled_call_impl _get_backward_hooks
        _get_backward_pre_hooks _get_name _load_from_state_dict _maybe_warn_non_full_backward_hook _named_members
        _register_load_state_dict_pre_hook _register_state_dict_hook _replicate_for_data_parallel
        _save_to_state_dict _slow_forward _version _wrapped_call_impl""".split()),
    "torch.utils.data.Dataset": frozenset({"_is_protocol"}),
    "torch.autograd.Function": frozenset("""
        _backward_cls _compiled_autograd_backward_state _compiled_autograd_key _get_compiled_autograd_symints
        _input_metadata _is_pure_view _materialize_non_diff_grads _raw_saved_tensors _register_hook
        _register_hook_dict _sequence_nr _set_sequence_nr""".split()),
}


def single_underscore(name) -> bool:
    return type(name) is str and name[:1] == "_" and name[1:2] != "_"


def engine_private_names(cls, instance=None) -> frozenset:
    """The single-'_' names `cls` (with its bases) defines, sets or reads, and a fresh `instance` holds: its
    methods' code is read too, so an attribute set lazily (a hook dict made on first use) is counted."""
    names = set()
    codes = []
    for klass in cls.__mro__:
        if klass is object:
            continue
        for attr, v in vars(klass).items():
            names.add(attr)
            for f in (v, getattr(v, "__func__", None), getattr(v, "fget", None), getattr(v, "fset", None),
                      getattr(v, "fdel", None)):
                code = getattr(f, "__code__", None)
                if isinstance(code, types.CodeType):
                    codes.append(code)
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        for k in code.co_consts:
            if isinstance(k, types.CodeType):
                codes.append(k)
            elif type(k) is str and k.isidentifier():  # getattr(self, "_x") in the engine's code
                names.add(k)
    if instance is not None:
        names.update(vars(instance))
    return frozenset(n for n in names if single_underscore(n))


def reserved_private_names(cls, make_instance=None, torch_name=None) -> frozenset:
    reserved = _RESERVED.get(cls)
    if reserved is None:
        engine_names = engine_private_names(cls, make_instance() if make_instance is not None else None)
        reserved = _RESERVED[cls] = engine_names | TORCH_PRIVATE_NAMES.get(torch_name, frozenset())
    return reserved


MODULE, DATASET, FUNCTION = TORCH_PRIVATE_NAMES


def _is_function_class(cls, function_base) -> bool:
    return any(b is function_base for c in cls.mro for b in c.bases)


def private_names_of(interp, obj):
    """(the '_' names reserved on `obj`, whose they are), or (None, None) when `obj` is not the program's own."""
    t = type(obj)
    B = interp.B
    if t is SuperProxy:  # super()._helper(): the instance's
        obj = obj.obj
        t = type(obj)
    if t is UserInstance:
        return frozenset(), "object"
    if t is UserClass:
        if obj.is_module:
            return reserved_private_names(B.UserModule, B.Module, MODULE), MODULE
        if obj.is_dataset:
            return reserved_private_names(B.UserDataset, B.Dataset, DATASET), DATASET
        if _is_function_class(obj, B.Function):
            return reserved_private_names(B.Function, None, FUNCTION), FUNCTION
        if obj.exc_base is not None:
            return reserved_private_names(obj.exc_base), obj.exc_base.__name__
        return frozenset(), "object"
    if isinstance(obj, B.UserModule):
        return reserved_private_names(B.UserModule, B.Module, MODULE), MODULE
    if B.UserDataset is not None and t is B.UserDataset:
        return reserved_private_names(B.UserDataset, B.Dataset, DATASET), DATASET
    if t in USER_EXCEPTION_TYPES:
        return reserved_private_names(t), obj.__dict__["_fg_cls"].exc_base.__name__
    return None, None


def check_private_attribute(interp, obj, name):
    """Raise AttributeError unless the program may read or set `obj.<name>` (`name` starting with '_')."""
    reserved, owner = private_names_of(interp, obj)
    if reserved is None or not single_underscore(name):
        raise AttributeError(PRIVATE_REFUSAL.format(name[:50]))
    if name in reserved or name.startswith(SANDBOX_PREFIX):
        raise AttributeError(PRIVATE_REFUSAL.format(name[:50]) + f" ('{name}' is {owner}'s own; the program's "
                             "classes may use other names starting with '_')")
