"""nn.ModuleDict, nn.ParameterList and nn.ParameterDict as PyTorch 2.13 builds them: registration, order,
named_parameters paths and printouts.

NOTE: entries that are neither tensors nor modules live in `_objects`, never as instance attributes (PyTorch
sets them with setattr, where a key such as "keys" or "forward" would shadow the container's own methods).
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..tensor_core import Tensor
from .modules import Module, Parameter, _check_name


def _check_free(owner, name, table):
    """PyTorch's add_module/register_parameter refusal of a name the container already has as an attribute."""
    if name not in table and name not in owner.__dict__.get("_objects", ()) and hasattr(owner, name):
        raise KeyError(f"attribute '{name}' already exists")


def _typename(obj):
    """torch.typename: a tensor's type() ("torch.FloatTensor"), else the class's name."""
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__name__


class ModuleDict(Module):
    """Submodules by string key, in insertion order (a plain dict keeps its order, as in PyTorch)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        # PyTorch's add_module checks, in its order (then flowgrad's: no leading underscore)
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(key, str):
            raise TypeError(f"module name should be a string. Got {_typename(key)}")
        _check_free(self, key, self._modules)
        if "." in key:
            raise KeyError(f'module name can\'t contain ".", got: {key}')
        _check_name(key, "module", self)
        self._modules[key] = module

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
                                + type(m).__name__)
            if not len(m) == 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) + " has length " + str(len(m))
                                 + "; 2 is required")
            self[m[0]] = m[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [ModuleDict] is missing the required "forward" function')


def _entry_line(key, p, type_text):
    """One line of a ParameterList/ParameterDict printout, PyTorch's text."""
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.size())
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{type_text(p)} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class _ParameterStore(Module):
    """Entries by string name: tensors become Parameters (registered), other values are kept as they are."""

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_objects", OrderedDict())

    def _put(self, name, value):
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        table = (self._parameters if isinstance(value, Parameter) or value is None
                 else self._modules if isinstance(value, Module) else self._objects)
        for other in (self._parameters, self._modules, self._objects):
            if other is not table:
                other.pop(name, None)
        table[name] = value  # (a replaced entry keeps its place, as in PyTorch)

    def _get(self, name):
        for table in (self._parameters, self._modules, self._objects):
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _drop(self, name):
        for table in (self._parameters, self._modules, self._objects):
            if name in table:
                del table[name]
                return
        raise AttributeError(name)

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects")
        if objects is not None and name in objects:
            return objects[name]
        return super().__getattr__(name)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} should not be called.")


class ParameterList(_ParameterStore):
    def __init__(self, values=None):
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def _get_abs_string_index(self, idx):
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return self._get(self._get_abs_string_index(idx))

    def __setitem__(self, idx, param):
        self._put(self._get_abs_string_index(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        new_idx = len(self)
        object.__setattr__(self, "_size", self._size + 1)
        self[new_idx] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_entry_line(k, p, lambda t: t.dtype) for k, p in enumerate(self))


class ParameterDict(_ParameterStore):
    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return self._get(self._key_to_attr(key))

    def __setitem__(self, key, value):
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) or value is None:  # what PyTorch's register_parameter checks
            _check_name(attr, "parameter", self)
            _check_free(self, attr, self._parameters)
        elif attr.startswith("_"):
            _check_name(attr, "parameter", self)  # (flowgrad's rule for every name)
        self._keys[key] = None
        self._put(attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        self._drop(self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):  # (PyTorch sorts a plain dict's keys)
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j) + " should be Iterable; is"
                                    + type(p).__name__)
                if not len(p) == 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j) + " has length "
                                     + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self):
        return "\n".join(_entry_line(k, p, _typename) for k, p in self.items())  # (its type(), not dtype)
