"""The attribute policy: which attributes of which values a program may read or set, in ONE table.

`ATTRIBUTE_POLICY` is built once at import and is read-only (a mapping proxy of immutable `Rule`s): no run can
change what another run may reach. Plain values are keyed by their exact type, engine values by kind ("tensor",
"optimizer", ...). A rule lists the readable names, the methods handed out wrapped (bounded versions of methods
that would otherwise build unbounded data in C), and the settable names. Names starting with `__` never get here
(the syntax check refuses them but for `DUNDER_READS`); a single `_x` reaches the program's own objects only
(private_attributes.py). Module and user-object attributes follow their own rules below.
"""

from __future__ import annotations

import collections
import types
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import files, plots, stdlib_datetime, stdlib_inspect, stdlib_logging, stdlib_re, stdlib_tools
from .bounded_methods import (
    bounded_extend,
    copy_method,
    data_ptr_method,
    dict_update,
    list_extend,
    list_index,
    owned_state_dict,
    set_method,
    str_format,
    str_join,
    str_pad,
    str_replace,
    tensor_tolist,
)
from .dataclasses_module import DataclassMethod
from .errors import ProgramError
from .flow import UserGenerator
from .names import (
    CUDNN_SWITCHES,
    CUDNN_SWITCHES_SETTERS,
    DETERMINISM_FUNCTIONS,
    ENGINE_CLASS_ATTRIBUTES,
    PACKED_SEQUENCE_METHODS,
    STORAGE_NAMES,
    TENSOR_FUNCS,
)
from .numpy_module import (
    ALLOWED_DTYPES,
    ARRAY_ATTRIBUTES,
    ARRAY_METHODS,
    DTYPE_ATTRIBUTES,
    SCALAR_ATTRIBUTES,
    SCALAR_METHODS,
    SCALAR_TYPES,
    gate_of,
)
from .objects import (
    DESCRIPTORS,
    INTERP_TYPES,
    MISSING,
    NAMEDTUPLE_PUBLIC,
    USER_EXCEPTION_TYPES,
    BoundMethod,
    Builtin,
    BuiltinClass,
    BuiltinType,
    CachedFunction,
    ClassMethod,
    GradModeFunction,
    ModuleProxy,
    NamedTupleClass,
    NamedTupleValue,
    NumpyRandomState,
    Partial,
    Property,
    RandomObject,
    StaticMethod,
    SuperProxy,
    TypeView,
    UserClass,
    UserFunction,
    UserInstance,
)
from .private_attributes import PRIVATE_REFUSAL, check_private_attribute
from .suggest import missing_from_module, missing_from_tensor


class Rule(NamedTuple):
    names: frozenset  # readable attributes
    wrapped: MappingProxyType  # name -> factory(interp, obj) -> the bounded method handed out instead
    settable: frozenset  # attributes a program may assign (tensors only; user objects and modules: see below)


def _rule(names, wrapped=None, settable=()):
    names = frozenset(names.split() if isinstance(names, str) else names)
    wrapped = dict(wrapped or {})
    assert set(wrapped) <= names, set(wrapped) - names
    return Rule(names, MappingProxyType(wrapped), frozenset(settable))


# ---------------------------------------------------------------- the table
_LIST = "append extend pop insert remove index count sort reverse copy clear".split()
_DICT = "keys values items get pop update setdefault copy clear popitem".split()
_SET = "add remove discard pop clear copy union intersection difference symmetric_difference issubset issuperset isdisjoint update"
_SET_METHODS = {n: set_method(n) for n in _SET.split()[6:]}  # union ... update: the ones that take iterables
_INT = _rule("bit_length real imag conjugate numerator denominator is_integer")

ATTRIBUTE_POLICY = MappingProxyType({
    # ---- plain values, by exact type
    str: _rule("""
upper lower strip lstrip rstrip split rsplit splitlines join replace startswith endswith find rfind
index rindex count isdigit isalpha isalnum isspace islower isupper isnumeric isdecimal title
capitalize casefold swapcase center ljust rjust zfill partition rpartition removeprefix
removesuffix format""", {"format": str_format, "join": str_join, "replace": str_replace,
                         **{n: str_pad(n) for n in ("center", "ljust", "rjust", "zfill")}}),
    list: _rule(_LIST, {"copy": copy_method, "extend": list_extend, "index": list_index}),
    tuple: _rule("index count"),
    dict: _rule(_DICT, {"copy": copy_method, "update": dict_update}),
    set: _rule(_SET, {"copy": copy_method, **_SET_METHODS}),
    frozenset: _rule(_SET, _SET_METHODS),
    int: _INT,
    bool: _INT,
    float: _rule("is_integer real imag conjugate"),
    range: _rule("start stop step index count"),
    slice: _rule("start stop step"),
    # ---- engine values, by kind (`Attributes._rule_for` classifies)
    "tensor": _rule("""
is_cpu cuda get_device materialize
data grad requires_grad is_leaf grad_fn shape dtype ndim T mT H size dim item tolist detach detach_
numpy
requires_grad_ retain_grad retains_grad view view_as reshape reshape_as transpose t t_ permute
squeeze unsqueeze flatten unflatten expand expand_as repeat repeat_interleave sum mean max min amax
amin argmax argmin std var prod norm cumsum cumprod exp exp_ log log_ log2 log10 log1p expm1 softmax
log_softmax sin cos tan tanh tanh_ sigmoid sigmoid_ relu relu_ abs abs_ sqrt sqrt_ rsqrt square
clamp clamp_ clamp_min clamp_max clip clip_ pow pow_ matmul mm bmm mv dot outer mul mul_ add add_
sub sub_ div div_ neg neg_ reciprocal backward zero_ fill_ copy_ clone numel nelement float double
half int long bool contiguous is_contiguous element_size eq ne lt le gt ge equal allclose isclose
all any where masked_fill masked_fill_ gather scatter index_select topk sort argsort chunk split
unbind floor ceil round trunc frac sign sign_ maximum minimum register_hook is_floating_point
new_zeros new_ones new_full new_tensor new_empty tril triu diag diagonal trace logsumexp normal_
uniform_ random_ bernoulli_ exponential_ fill_diagonal_ flip roll type_as to cpu device is_cuda
lerp erf isnan isinf isfinite isposinf isneginf isreal nan_to_num histc histogram count_nonzero nonzero unique
cross det inverse logical_and logical_or logical_not squeeze_ unsqueeze_ transpose_ swapaxes swapdims resize_ narrow
select
index_add index_add_ index_fill masked_select tile addmm baddbmm sum_to_size
float_power requires_grad_ name is_inference output_nr register_post_accumulate_grad_hook
mH nbytes itemsize addmm_ logical_xor lerp_ diff hypot xlogy heaviside kron cummax cummin short char""" + TENSOR_FUNCS,
                    {"tolist": tensor_tolist, "data_ptr": data_ptr_method}, settable=("data", "grad", "requires_grad")),
    # engine methods of modules (besides registered parameters/submodules and instance attributes)
    "module": _rule("""
parameters named_parameters buffers named_buffers children named_children modules named_modules
zero_grad train eval forward training requires_grad_ apply state_dict load_state_dict to cpu float
double half add_module register_buffer register_parameter register_module extra_repr get_submodule
get_parameter append extend insert keys values items pop update clear get setdefault popitem copy
register_forward_hook register_forward_pre_hook register_full_backward_hook register_backward_hook cuda
has_uninitialized_params initialize_parameters cls_to_become""", {"state_dict": owned_state_dict}),
    "device": _rule("type index"),  # torch.device; and torch.amp.GradScaler (engine/amp.py):
    "grad_scaler": _rule("scale unscale_ step update get_scale get_growth_factor get_backoff_factor get_growth_interval "
                         "is_enabled state_dict load_state_dict"),
    type: _rule("generate_square_subsequent_mask"),  # engine classes: nn.Transformer's static causal mask
    "optimizer": _rule("step zero_grad param_groups add_param_group defaults state state_dict load_state_dict"),
    "distribution": _rule("sample rsample log_prob entropy cdf mean mode stddev variance probs logits loc scale low high "
                          "batch_shape event_shape has_rsample param_shape"),  # torch.distributions (engine/distributions.py)
    "scheduler": _rule("""
step get_last_lr last_epoch optimizer base_lrs state_dict load_state_dict step_size gamma milestones T_max
eta_min mode factor patience cooldown min_lrs eps threshold threshold_mode best num_bad_epochs cooldown_counter
in_cooldown start_factor end_factor total_iters power T_0 T_i T_mult T_cur total_steps cycle_momentum use_beta1"""),
    # torch.utils.data (user Dataset subclasses are handled like user modules: their own attributes)
    "dataloader": _rule("dataset batch_size drop_last"), "dataset": _rule("tensors dataset indices"),
    # t.storage(): the memory a tensor shares with its views (engine/storage.py)
    "storage": _rule(STORAGE_NAMES, {"tolist": tensor_tolist, "data_ptr": data_ptr_method}),
    "grad_fn": _rule("name next_functions metadata variable saved_tensors needs_input_grad"),  # (a Function's: ctx's)
    # torch.Generator (issue 10): seeding and its 5056-byte state tensor
    "torch_generator": _rule("manual_seed seed initial_seed get_state set_state device"),
    # torch.autograd: a hook's handle, a custom Function's ctx (and its program-set attributes: _ctx_attr)
    "hook_handle": _rule("remove id"),
    "function_ctx": _rule("save_for_backward saved_tensors needs_input_grad mark_non_differentiable "
                          "set_materialize_grads"
                          " mark_dirty"),  # in-place custom Functions: forward's changed inputs become its outputs
    "dtype": _rule("is_floating_point itemsize is_complex is_signed"),
    "size": _rule("index count numel"),
    "named_tuple": _rule("index count"),  # and the tuple's public field names (values, indices)
    # exceptions (a program's own exception classes: their instance attributes and methods too)
    "exception": _rule("args"),
    "generator": _rule("send close"),
    "partial": _rule("func args keywords"),
    "lru_cache": _rule("cache_clear"),
    # subclasses of plain containers (OrderedDict from state_dict(), ...): the plain methods that cannot
    # loop in C over an unbounded iterable
    "dict_subclass": _rule(set(_DICT) - {"update"}),
    "list_subclass": _rule(set(_LIST) - {"extend"}),
})
# ---- collections (a block of its own: exact types, like the plain values)
_COLLECTIONS_POLICY = MappingProxyType({
    collections.OrderedDict: _rule(_DICT + ["move_to_end"], {"copy": copy_method, "update": dict_update}),
    # (not default_factory: an optimizer's `state` is the engine's defaultdict, its factory the engine's)
    collections.defaultdict: _rule(_DICT, {"copy": copy_method, "update": dict_update}),
    collections.Counter: _rule(_DICT + ["most_common", "elements", "total"], {"copy": copy_method, "update": dict_update}),
    collections.deque: _rule("""append appendleft pop popleft extend extendleft rotate clear count index insert
remove reverse maxlen copy""", {"copy": copy_method, "extend": bounded_extend("extend"),
                                "extendleft": bounded_extend("extendleft")}),
})
ATTRIBUTE_POLICY = MappingProxyType({**ATTRIBUTE_POLICY, **_COLLECTIONS_POLICY})

# ---- numpy values (sandbox/numpy_module.py): arrays, numpy scalars and dtypes; every method handed out is the
# gate's checked version (sizes before numpy allocates, numeric dtypes only)
def _numpy_method(name):
    return lambda interp, obj: gate_of(interp).method(obj, name)


_NUMPY_ARRAY = _rule(ARRAY_ATTRIBUTES + ARRAY_METHODS, {n: _numpy_method(n) for n in ARRAY_METHODS})
_NUMPY_SCALAR = _rule(SCALAR_ATTRIBUTES + SCALAR_METHODS, {n: _numpy_method(n) for n in SCALAR_METHODS})
_NUMPY_DTYPE = _rule(DTYPE_ATTRIBUTES)
MAX_ATTRIBUTE_NAME = 200
# `getattr(x, "__len__")` & co.: the interpreter's own operation on x, handed out as a builtin
PROTOCOL_PROBES = MappingProxyType({
    "__len__": lambda interp, obj: lambda: interp.builtins["len"].fn(obj),
    "__iter__": lambda interp, obj: lambda: interp.iterate(obj),
    "__next__": lambda interp, obj: lambda: interp.builtins["next"].fn(obj),
    "__getitem__": lambda interp, obj: lambda key: interp.get_item(obj, key),
    "__setitem__": lambda interp, obj: lambda key, value: interp.set_item(obj, key, value),
    "__contains__": lambda interp, obj: lambda item: interp._contains(obj, item),
    "__call__": lambda interp, obj: lambda *args, **kwargs: interp.call(obj, list(args), kwargs),
})

NUMPY_RULES = {np.ndarray: _NUMPY_ARRAY, **{cls: _NUMPY_SCALAR for cls in set(SCALAR_TYPES.values())},
               **{type(d): _NUMPY_DTYPE for d in ALLOWED_DTYPES}}

# ---- plot handles (sandbox/plots.py lists them): every method is the plot gate's checked call
PLOT_RULES = {cls: _rule(names, wrapped) for cls, (names, wrapped) in plots.ATTRIBUTE_RULES.items()}
# ---- the run's files (sandbox/files.py): every method is the file object's own, bounded by the run's file budget
FILE_RULES = {cls: _rule(*rule) for module in (files, stdlib_tools, stdlib_re, stdlib_logging, stdlib_datetime, stdlib_inspect)
              for cls, rule in module.ATTRIBUTE_RULES.items()}
ATTRIBUTE_POLICY = MappingProxyType({**ATTRIBUTE_POLICY, **NUMPY_RULES, **PLOT_RULES, **FILE_RULES})

PLAIN_TYPES = frozenset(k for k in ATTRIBUTE_POLICY if isinstance(k, type) and k not in NUMPY_RULES
                        and k not in PLOT_RULES and k not in FILE_RULES)
_MODULE_NAMES, _TENSOR, _CTX = ATTRIBUTE_POLICY["module"].names, ATTRIBUTE_POLICY["tensor"], ATTRIBUTE_POLICY["function_ctx"]
_MODULE_WRAPPED = ATTRIBUTE_POLICY["module"].wrapped
FUNCTION_CLASS_NAMES = frozenset({"apply"})


class Attributes:
    """Mixed into the Interpreter: attribute reads and writes under ATTRIBUTE_POLICY. `self._attr_rules`
    remembers the table's answer per type for this run (the table itself never changes)."""

    def get_attribute(self, obj, name):
        t = type(obj)
        rule = self._attr_rules.get(t)
        if rule is not None:
            if name in rule.names:
                if name in rule.wrapped:
                    return Builtin(name, rule.wrapped[name](self, obj), self)
                return getattr(obj, name)
            raise self._no_attr(obj, name)
        if t is UserInstance:  # (a plain class of the program: every '_x' is the program's own)
            attrs = obj.attrs
            if name in attrs:
                return attrs[name]
            _, v = obj.cls.lookup(name)
            if v is not None or name in obj.cls.ns:
                if type(v) is UserFunction:
                    return BoundMethod(v, obj)
                return self._descriptor(v, obj, obj.cls, name) if type(v) in DESCRIPTORS else v
            raise AttributeError(f"'{obj.cls.name}' object has no attribute '{name}'")
        if name[:1] == "_" and name[1:2] != "_":
            if name in NAMEDTUPLE_PUBLIC and (t is NamedTupleValue or t is NamedTupleClass):
                return self.namedtuple_public(obj, name) if t is NamedTupleClass else self.namedtuple_attr(obj, name)
            if name == "_orig_mod" and t is self.B.OptimizedModule:  # torch.compile's wrapped module, read as torch's
                return obj._modules["_orig_mod"]
            check_private_attribute(self, obj, name)
        if t is BuiltinClass and name in obj.attrs:  # `datetime.now`
            return obj.attrs[name]
        if t is ModuleProxy:
            v = obj.attrs.get(name, MISSING)
            if v is MISSING:
                v = self._run_switch(obj, name)
                if v is MISSING:
                    raise AttributeError(missing_from_module(obj.name, name, obj.attrs))
            return v
        if t is UserClass:
            c, v = obj.lookup(name)
            if c is None and name in FUNCTION_CLASS_NAMES and self.is_function_class(obj):
                return self._function_class_attr(obj, name)
            if c is None:
                raise AttributeError(f"type object '{obj.name}' has no attribute '{name}'")
            return self._descriptor(v, None, obj, name) if type(v) in DESCRIPTORS else v
        if t is Property:
            return self._property_attr(obj, name)
        if t is SuperProxy:
            return self._super_attr(obj, name)
        if t is self.B.FunctionCtx:
            return self._ctx_attr(obj, name)
        if isinstance(obj, self.B.Module):
            return self._module_attr(obj, name)
        if t is self.B.UserDataset:
            return self._dataset_attr(obj, name)
        if t in USER_EXCEPTION_TYPES:
            return self._user_exception_attr(obj, name)
        if t is UserGenerator or t is CachedFunction:
            if name in ATTRIBUTE_POLICY["generator" if t is UserGenerator else "lru_cache"].names:
                return Builtin(name, getattr(obj, name), self)
            raise self._no_attr(obj, name)
        if t is RandomObject or t is NumpyRandomState:
            v = obj.attrs.get(name, MISSING)
            if v is MISSING:
                raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")
            return v
        if t is Partial:
            if name in ATTRIBUTE_POLICY["partial"].names:
                return getattr(obj, name)
            raise self._no_attr(obj, name)
        if t is NamedTupleValue:
            return self.namedtuple_attr(obj, name)
        if t in _COLLECTIONS_POLICY:  # (never cached by type: the program's own and the engine's differ)
            rule = _COLLECTIONS_POLICY[t] if self.owns(obj) else self._rule_for_engine_collection(obj)
            if rule is not None and name in rule.names:
                if name in rule.wrapped:
                    return Builtin(name, rule.wrapped[name](self, obj), self)
                return getattr(obj, name)
            raise self._no_attr(obj, name)
        if isinstance(obj, type) and name in ENGINE_CLASS_ATTRIBUTES.get(self.B.class_names.get(obj), ()):
            return getattr(obj, name)  # (`nn.Embedding.from_pretrained`)
        rule = self._rule_for(obj)
        if rule is not None:
            self._attr_rules[t] = rule
            return self.get_attribute(obj, name)
        raise self._no_attr(obj, name)

    def read_attribute(self, obj, name):
        """`getattr(obj, name)` with a name computed at run time: the policy of `obj.name`; of the names starting with
        '_', the protocol probes (`PROTOCOL_PROBES`) only (`x.__class__` is written out: a name computed at run time
        reaches no dunder attribute, `getattr(t, '__cla' + 'ss__')`)."""
        if type(name) is not str:
            raise TypeError(f"attribute name must be string, not '{self.type_name(name)}'")
        if len(name) > MAX_ATTRIBUTE_NAME:  # (no attribute is this long; a suggestion would compare every name)
            raise AttributeError(f"'{self.type_name(obj)}' object has no attribute '{name[:50]}…'")
        if name[:1] != "_" or name[1:2] != "_":  # (a single '_x': get_attribute's check on whose object it is)
            return self.get_attribute(obj, name)
        if name in PROTOCOL_PROBES and self.supports(obj, name):
            return Builtin(name, PROTOCOL_PROBES[name](self, obj), self)
        if name in PROTOCOL_PROBES:
            raise AttributeError(f"'{self.type_name(obj)}' object has no attribute '{name}'")
        raise AttributeError(PRIVATE_REFUSAL.format(name[:50]))

    def has_attribute(self, obj, name):
        """`hasattr`: whether `read_attribute` gives a value (an AttributeError in a property getter too)."""
        try:
            self.read_attribute(obj, name)
        except AttributeError:
            return False
        except ProgramError as pe:
            if self.catchable(pe) and isinstance(self.exception_value(pe), AttributeError):
                return False
            raise
        return True

    def supports(self, obj, name):
        """Whether `obj` has the protocol method `name` as Python sees it (`hasattr(x, "__len__")`)."""
        t = type(obj)
        if t is UserInstance:
            return obj.cls.lookup(name)[0] is not None
        B = self.B
        if t is B.UserDataset or isinstance(obj, B.UserModule):
            if obj.__dict__["_fg_cls"].lookup(name)[0] is not None:
                return True
            base = B.Dataset if t is B.UserDataset else B.Module
            return hasattr(base, name)
        if t in INTERP_TYPES or t is UserGenerator:
            if name == "__call__":
                return t not in (UserInstance, ModuleProxy, SuperProxy, ClassMethod, Property, RandomObject,
                                 NumpyRandomState, TypeView)
            return t is UserGenerator and name in ("__iter__", "__next__")
        return hasattr(t, name)

    # ----- torch's global switches, as a run sets them at its top: the run's own, no effect on the CPU engine
    def _run_switches(self):
        d = self.__dict__
        sw = d.get("run_switches")
        if sw is None:
            sw = d["run_switches"] = dict(CUDNN_SWITCHES, deterministic_algorithms=False, warn_only=False)
        return sw

    def _run_switch(self, proxy, name):
        """`torch.backends.cudnn.deterministic` & co. (read) and `torch.use_deterministic_algorithms` &co."""
        if proxy.name == "torch.backends.cudnn" and name in CUDNN_SWITCHES:
            return self._run_switches()[name]
        if proxy.name != "torch" or name not in DETERMINISM_FUNCTIONS:
            return MISSING
        sw = self._run_switches()

        def use_deterministic_algorithms(mode, *, warn_only=False):
            for arg, v in (("mode", mode), ("warn_only", warn_only)):
                if type(v) is not bool:
                    raise TypeError(f"_set_deterministic_algorithms(): argument '{arg}' "
                                    f"{'(position 1) ' if arg == 'mode' else ''}must be bool, not {self.type_name(v)}")
            sw["deterministic_algorithms"], sw["warn_only"] = mode, warn_only and mode

        fns = {"use_deterministic_algorithms": use_deterministic_algorithms,
               "are_deterministic_algorithms_enabled": lambda: sw["deterministic_algorithms"],
               "is_deterministic_algorithms_warn_only_enabled": lambda: sw["warn_only"]}
        return Builtin(name, fns[name], self)

    def _set_run_switch(self, proxy, name, value):
        """`torch.backends.cudnn.benchmark = True`: True when it was one of the switches."""
        if proxy.name != "torch.backends.cudnn" or name not in CUDNN_SWITCHES:
            return False
        if type(value) is not bool:
            raise RuntimeError(f"{CUDNN_SWITCHES_SETTERS[name]} expects a bool, but got {self.type_name(value)}")
        self._run_switches()[name] = value
        return True

    def _rule_for(self, obj):
        """The table's rule for a value that is not a user object, module proxy or module."""
        t = type(obj)
        rule = ATTRIBUTE_POLICY.get(t)
        if rule is not None:
            return rule
        B = self.B
        for kind, cls in (("tensor", B.Tensor), ("optimizer", B.Optimizer), ("scheduler", B.Scheduler),
                          ("distribution", B.Distribution), ("grad_scaler", B.GradScaler),
                          ("dataloader", B.DataLoader), ("dataset", B.Dataset),
                          ("grad_fn", B.node_types), ("dtype", B.dtype), ("size", B.Size),
                          ("torch_generator", B.Generator), ("hook_handle", B.RemovableHandle), ("storage", B.TypedStorage)):
            if cls is not None and isinstance(obj, cls):
                return ATTRIBUTE_POLICY[kind]
        if isinstance(obj, BaseException):
            return ATTRIBUTE_POLICY["exception"]
        if B.device is not None and t is B.device:
            return ATTRIBUTE_POLICY["device"]
        if isinstance(obj, tuple) and hasattr(t, "_fields"):  # named tuples such as (values, indices)
            rule = ATTRIBUTE_POLICY["named_tuple"]
            extra = PACKED_SEQUENCE_METHODS if t is self.B.PackedSequence else frozenset()  # (packed.to(device))
            return rule._replace(names=rule.names | frozenset(f for f in t._fields if not f.startswith("_")) | extra)
        if isinstance(obj, dict):
            return ATTRIBUTE_POLICY["dict_subclass"]
        if isinstance(obj, list):
            return ATTRIBUTE_POLICY["list_subclass"]
        if isinstance(obj, tuple):
            return ATTRIBUTE_POLICY[tuple]
        return None

    @staticmethod
    def _rule_for_engine_collection(obj):
        if isinstance(obj, dict):
            return ATTRIBUTE_POLICY["dict_subclass"]
        return None

    def _no_attr(self, obj, name):
        if name[:1] == "_" and name[1:2] != "_":  # (no table lists a '_' name: an engine object's, refused)
            return AttributeError(PRIVATE_REFUSAL.format(name[:50]))
        tn = self.type_name(obj)
        if type(obj) not in INTERP_TYPES and hasattr(type(obj), name) and not name.startswith("_"):
            return AttributeError(f"'{tn}' object attribute '{name}' is not available in flowgrad programs")
        rule = self._attr_rules.get(type(obj)) or self._rule_for(obj)
        return AttributeError(missing_from_tensor(tn, name, rule.names if rule is not None else ()))

    def _module_attr(self, obj, name):
        d = obj.__dict__
        ucls = d.get("_fg_cls")
        if name in d:
            return d[name]
        params = d.get("_parameters")
        if params is not None and name in params:
            return params[name]
        bufs = d.get("_buffers")  # registered buffers read like PyTorch's (bn.running_mean)
        if bufs is not None and name in bufs:
            return bufs[name]
        mods = d.get("_modules")
        if mods is not None and name in mods:
            return mods[name]
        if ucls is not None:
            c, v = ucls.lookup(name)
            if c is not None:
                if type(v) is UserFunction:
                    return BoundMethod(v, obj)
                return self._descriptor(v, obj, ucls, name) if type(v) in DESCRIPTORS else v
        if name in _MODULE_NAMES and hasattr(type(obj), name):
            wrap = _MODULE_WRAPPED.get(name)
            return getattr(obj, name) if wrap is None else wrap(self, obj)
        if ucls is None and mods is not None and type(obj) is self.B.OptimizedModule:  # torch.compile's: reads through
            return self._module_attr(mods["_orig_mod"], name)
        if ucls is not None:
            raise AttributeError(f"'{ucls.name}' object has no attribute '{name}'")
        raise self._no_attr(obj, name)

    def _dataset_attr(self, obj, name):
        """An instance of a user Dataset subclass: its own attributes, then its class's."""
        d = obj.__dict__
        if name in d:  # (`_fg_cls` and Dataset's own '_' names: check_private_attribute refused them)
            return d[name]
        ucls = d["_fg_cls"]
        c, v = ucls.lookup(name)
        if c is not None:
            if type(v) is UserFunction:
                return BoundMethod(v, obj)
            return self._descriptor(v, obj, ucls, name) if type(v) in DESCRIPTORS else v
        raise AttributeError(f"'{ucls.name}' object has no attribute '{name}'")

    def dunder_attribute(self, obj, name):
        """`__class__`, `__name__`, `__qualname__`, `__doc__`: what Python gives, for the program's own
        objects and the values it can reach, in the names a program sees (torch's for engine classes);
        never a real class, module or function object of the host."""
        if name == "__class__":
            return self.type_of(obj)
        t = type(obj)
        if t is UserFunction or t is UserClass:
            return obj.doc if name == "__doc__" else obj.qualname if name == "__qualname__" else obj.name
        if t is BoundMethod:
            return self.dunder_attribute(obj.func, name)
        if t is GradModeFunction or t is StaticMethod or t is ClassMethod or t is CachedFunction:
            return self.dunder_attribute(obj.func, name)
        if t is NamedTupleClass:
            return None if name == "__doc__" else obj.name
        if t is UserGenerator:
            return None if name == "__doc__" else obj.func.qualname if name == "__qualname__" else obj.func.name
        if t is types.GeneratorType and name != "__doc__":  # a generator expression, `m.parameters()`
            return getattr(obj, name)
        if t is Property:
            if name == "__doc__":
                return obj.doc if obj.doc is not None or obj.fget is None else self.dunder_attribute(obj.fget, name)
        elif t is BuiltinType or t is Builtin or t is BuiltinClass:
            if name == "__doc__":
                return None
            return obj.name.rsplit(".", 1)[-1]  # torch._C._LinAlgError: printed whole, named by its last part
        elif t is TypeView:
            if name == "__doc__":
                return None
            return obj.name.rsplit(".", 1)[-1]
        elif t is ModuleProxy:
            if name == "__name__":
                return obj.name
            if name == "__doc__":
                return None
        elif isinstance(obj, type) and obj in self.B.class_names:  # an engine class: torch's name
            if name == "__doc__":
                return None
            shown = self.B.class_names[obj]
            return shown.rsplit(".", 1)[-1] if name == "__name__" else shown.rsplit(".", 1)[-1]
        elif t not in PLAIN_TYPES and t is not UserInstance and callable(obj) and not isinstance(
                obj, (self.B.Module, self.B.Tensor)):
            # an engine function or allowlisted method: its own name, never its module or docstring
            if name == "__doc__":
                return None
            fname = getattr(obj, "__name__", None)
            if type(fname) is str:
                return fname
        elif name == "__doc__":  # an instance: its class's docstring (the engine's are not torch's: None)
            cls = self.type_of(obj)
            return cls.doc if type(cls) is UserClass else None
        raise AttributeError(f"'{self.type_name(obj)}' object has no attribute '{name}'")

    def class_attribute(self, v, obj, cls, name):
        """Class attribute `v` read through instance `obj` of class `cls`: functions bind."""
        if type(v) is UserFunction or type(v) is DataclassMethod:
            return BoundMethod(v, obj)
        return self._descriptor(v, obj, cls, name) if type(v) in DESCRIPTORS else v

    def _descriptor(self, v, obj, cls, name):
        """A decorated class attribute read through instance `obj` (None: read from the class `cls`)."""
        t = type(v)
        if t is StaticMethod:
            return v.func
        if t is ClassMethod:
            return BoundMethod(v.func, cls)
        if obj is None:
            return v
        if t is GradModeFunction or t is CachedFunction:
            return BoundMethod(v, obj)
        if v.fget is None:  # a Property
            raise AttributeError(f"property '{name}' of '{self.type_name(obj)}' object has no getter")
        return self.call(v.fget, [obj], {})

    def _property_attr(self, prop, name):
        """`@x.setter` and friends: a new property with that part replaced, as Python's."""
        if name == "fget" or name == "fset":
            return getattr(prop, name)
        if name == "getter":
            return Builtin("getter", lambda f: Property(f, prop.fset, prop.doc), self)
        if name == "setter":
            return Builtin("setter", lambda f: Property(prop.fget, f, prop.doc), self)
        raise AttributeError(f"'property' object has no attribute '{name}'")

    def _property_set(self, obj, ucls, name, value):
        """Assignment to an attribute the class defines as a property: its setter, or Python's error (True: it was)."""
        _, v = ucls.lookup(name)
        if type(v) is not Property:
            return False
        if v.fset is None:
            raise AttributeError(f"property '{name}' of '{ucls.name}' object has no setter")
        self.call(v.fset, [obj, value], {})
        return True

    def _super_attr(self, sp, name):
        obj = sp.obj
        if type(obj) is UserInstance:
            mro = obj.cls.mro
        elif isinstance(obj, self.B.UserModule) or type(obj) is self.B.UserDataset or type(obj) in USER_EXCEPTION_TYPES:
            mro = obj.__dict__["_fg_cls"].mro
        else:
            raise TypeError("super(type, obj): obj must be an instance of a class defined in the program")
        try:
            start = mro.index(sp.cls) + 1
        except ValueError:
            raise TypeError("super(type, obj): obj must be an instance or subtype of type") from None
        for c in mro[start:]:
            if name in c.ns:
                v = c.ns[name]
                if type(v) is UserFunction:
                    return BoundMethod(v, obj)
                return self._descriptor(v, obj, c, name) if type(v) in DESCRIPTORS else v
        if sp.cls.is_module:
            base = self.B.Module
            if name == "__init__":
                return Builtin("__init__", lambda *a, **k: base.__init__(obj, *a, **k))
            if name in _MODULE_NAMES and hasattr(base, name):
                return getattr(base, name).__get__(obj)
        elif name == "__init__" and sp.cls.exc_base is not None:
            def exc_init(*args, **kwargs):  # BaseException.__init__: sets args
                if kwargs:
                    raise TypeError(f"{sp.cls.exc_base.__name__}() takes no keyword arguments")
                BaseException.__init__(obj, *args)
            return Builtin("__init__", exc_init)
        elif name == "__init__":
            def init(*args, **kwargs):
                if args or kwargs:
                    raise TypeError("object.__init__() takes exactly one argument (the instance to initialize)")
            return Builtin("__init__", init)
        raise AttributeError(f"'super' object has no attribute '{name}'")

    # ----- torch.autograd.Function: a program's subclass, its `ctx`
    def is_function_class(self, cls):
        F = self.B.Function
        return any(b is F for c in cls.mro for b in c.bases)

    def _function_class_attr(self, cls, name):
        """`Fn.apply`: the engine's apply_function with the class's forward and backward (its static methods)."""
        B = self.B

        def method(which):
            _, v = cls.lookup(which)
            if v is None:
                return None if which == "setup_context" else getattr(B.Function, which)
            return v.func if type(v) is StaticMethod else v

        forward, backward, setup = method("forward"), method("backward"), method("setup_context")
        if backward is B.Function.backward and cls.lookup("vjp")[1] is not None:  # torch's other name for backward
            backward = method("vjp")
        return Builtin("apply", lambda *args, **kwargs: B.apply_function(cls.name, forward, backward, args, kwargs,
                                                                         setup), self)

    def _ctx_attr(self, ctx, name):
        """ctx: torch's methods, then what the program stored on it."""
        if name in _CTX.names:
            return getattr(ctx, name)
        d = ctx.__dict__
        if name in d and name[:1] != "_":
            return d[name]
        raise AttributeError(f"'FunctionCtx' object has no attribute '{name}'")

    def set_attribute(self, obj, name, value):
        t = type(obj)
        if t is UserInstance:  # (a plain class of the program: every '_x' is the program's own)
            if not (self.has_properties and self._property_set(obj, obj.cls, name, value)):
                obj.attrs[name] = value
            return
        if name[:1] == "_":
            check_private_attribute(self, obj, name)
        if t is self.B.FunctionCtx:  # a program's own attributes; torch's names stay torch's
            if name in _CTX.names:
                raise AttributeError(f"cannot set attribute '{name}' of FunctionCtx in flowgrad programs")
            obj.__dict__[name] = value
            return
        B = self.B
        if t in USER_EXCEPTION_TYPES:
            if not (self.has_properties and self._property_set(obj, obj.__dict__["_fg_cls"], name, value)):
                obj.__dict__[name] = value
            return
        if self.has_properties and (t is B.UserDataset or isinstance(obj, B.UserModule)):
            if self._property_set(obj, obj.__dict__["_fg_cls"], name, value):
                return
        if t is B.UserDataset:  # (`_fg_cls` and Dataset's own '_' names: refused above)
            obj.__dict__[name] = value
            return
        if isinstance(obj, B.Tensor):
            if name in _TENSOR.settable:
                if name == "data" and not isinstance(value, B.Tensor):  # numpy would take anything
                    raise TypeError(f"Variable data has to be a tensor, but got {self.type_name(value)}")
                setattr(obj, name, value)
                return
            raise AttributeError(f"cannot set attribute '{name}' of a Tensor in flowgrad programs "
                                 "(settable: data, grad, requires_grad)")
        if isinstance(obj, B.Module):
            # never shadow the engine's methods: engine code and the server call them (named_parameters,
            # named_modules, extra_repr, ...), also after the run, when a program function must not run
            if name in obj.__dict__ or not hasattr(t, name):
                if isinstance(value, B.Module):
                    self.module_links(1)
                setattr(obj, name, value)
                return
            raise AttributeError(f"cannot set attribute '{name}' of {obj._get_name()} in flowgrad programs")
        if t is UserClass:
            obj.ns[name] = value
            return
        if name in getattr(FILE_RULES.get(t), "settable", ()):  # `logger.propagate = False`
            return setattr(obj, name, value)
        if isinstance(obj, type) or t in (BuiltinType, Builtin, BuiltinClass):
            cname = obj.__name__ if isinstance(obj, type) else obj.name
            raise TypeError(f"cannot set attribute '{name}' on class '{cname}' in flowgrad programs")
        if t is ModuleProxy and self._set_run_switch(obj, name, value):
            return
        if t is ModuleProxy:
            raise TypeError(f"cannot set attribute '{name}' on module '{obj.name}' in flowgrad programs")
        raise AttributeError(f"cannot set attribute '{name}' on a '{self.type_name(obj)}' object in flowgrad "
                             "programs")

