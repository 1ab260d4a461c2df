"""Method calls compiled as one closure: `obj.name(a, b)` with at most two positional arguments (`x.pow(2)`,
`loss.item()`, `xs.append(i)`, `torch.log(p)`), the attribute read and the call that `_c_Attribute` and
`_positional_call` would make, in the same order, with the same checks and error locations."""

from __future__ import annotations

import ast
from types import BuiltinMethodType, FunctionType, MethodType

from .attributes import _COLLECTIONS_POLICY, _TENSOR, ATTRIBUTE_POLICY, PLAIN_TYPES
from .checks import DUNDER_READS
from .objects import CONTAINERS, PRIMITIVES, SCALARS, SIZED, SUPER, Builtin, UserFunction


class CompiledCalls:
    """Mixed into the Compiler: `_method_call(node, args)` for `_positional_call`."""

    def _method_call(self, node, args):
        """The closure of `obj.name(...)` (node.func a loaded Attribute whose name is no dunder), else None.

        A tensor's method that the table lets through unwrapped is read with `getattr` (what `get_attribute`
        answers for it once the tensor rule is known) and, given numbers and tensors alone, called directly (what
        `call` does first for a tensor's bound method); every other object goes through `get_attribute` and the
        call dispatch of `_positional_call`."""
        func_node = node.func
        if type(func_node) is not ast.Attribute or type(func_node.ctx) is not ast.Load \
                or func_node.attr in DUNDER_READS:
            return None
        obj_code = self.code_of(func_node.value)
        obj_name = self._read_name(func_node.value)
        attr = func_node.attr
        T = self.tensor_type
        P = self.parameter_type
        # (the tensor rule is what `_rule_for` gives a tensor or parameter: the table has no entry for their types)
        tensor_plain = (attr in _TENSOR.names and attr not in _TENSOR.wrapped
                        and ATTRIBUTE_POLICY.get(T) is None and ATTRIBUTE_POLICY.get(P) is None)
        # the plain types (list, dict, str, ...) whose rule lets `attr` through unwrapped: `get_attribute` answers
        # `getattr(obj, attr)` for them (their rule is the table's entry for their type)
        # (not the collections types: whose deque it is decides their rule)
        plain_direct = frozenset(pt for pt in PLAIN_TYPES if pt not in _COLLECTIONS_POLICY
                                 and attr in ATTRIBUTE_POLICY[pt].names and attr not in ATTRIBUTE_POLICY[pt].wrapped)
        get_attribute = self.get_attribute
        call = self.call
        call_user = self.call_user
        alloc = self.alloc
        at = self._at
        interp = self
        first = args[0] if args else None
        second = args[1] if len(args) == 2 else None
        first_name = self._read_name(node.args[0]) if args else None
        engine_functions = self.engine_functions

        def method_call(scope):
            d = scope.vars
            obj = d[obj_name] if obj_name in d else obj_code(scope)
            t = type(obj)
            on_tensor = tensor_plain and (t is T or t is P)
            try:
                f = getattr(obj, attr) if on_tensor or t in plain_direct else get_attribute(obj, attr)
            except Exception as e:
                raise at(e, func_node) from None
            if first is None:
                values = []
            else:
                d = scope.vars
                values = [d[first_name] if first_name in d else first(scope)]
                if second is not None:
                    values.append(second(scope))
            if f is SUPER:
                return interp._super(values, scope, node)
            try:
                tf = type(f)
                if on_tensor and tf is MethodType:
                    for a in values:
                        if type(a) not in SCALARS and not isinstance(a, T):
                            break
                    else:
                        r = f(*values)
                        if isinstance(r, SIZED):  # (a copy, as `call` counts it)
                            alloc(len(r))
                        return r
                if tf is Builtin:
                    return f.fn(*values)
                if tf is UserFunction:
                    return call_user(f, values, {})
                if tf is FunctionType and f in engine_functions:
                    # `torch.log(p)`: `call`'s fast path for an engine function it checked before, given numbers
                    # and tensors alone
                    for a in values:
                        if type(a) not in SCALARS and not isinstance(a, T):
                            break
                    else:
                        r = f(*values)
                        if isinstance(r, SIZED):
                            alloc(len(r))
                        return r
                elif tf is BuiltinMethodType and type(f.__self__) in PLAIN_TYPES:
                    # `xs.append(i)`: `call`'s fast path for a plain value's method given no iterator to bound
                    for a in values:
                        ta = type(a)
                        if ta not in PRIMITIVES and ta not in CONTAINERS and ta is not T:
                            break
                    else:
                        r = f(*values)
                        if isinstance(r, SIZED):
                            alloc(len(r))
                        return r
                return call(f, values, {})
            except Exception as e:
                raise at(e, node) from None
        return method_call
