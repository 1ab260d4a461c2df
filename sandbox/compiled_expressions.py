"""The expression closures of the compiled interpreter (`compiler.Compiler` mixes them in): names, operators,
comparisons, displays, comprehensions and calls, each doing what its `ev_<Expr>` method does (f-strings and
`print` are compiled_text.py's)."""

from __future__ import annotations

import ast
import operator

import numpy as np

from .checks import DUNDER_READS
from .errors import ProgramError
from .expressions import _BINOPS, _BIT_OPS, _CMP
from .instance_protocol import operand_error
from .numpy_module import gate_of
from .objects import SCALARS, SUPER, Builtin, UserFunction

# int operators whose result cannot be large unless its operands are (so only the result's bits are checked)
_INT_SAFE_OPS = frozenset({ast.Add, ast.Sub, ast.FloorDiv, ast.Mod, ast.Div, ast.BitAnd, ast.BitOr, ast.BitXor,
                           ast.RShift})
_NUMBER_OPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div})  # on two floats (or a float and an int): plain


def scalar_key_items(key):
    """What `check_data(key)` counts for an index of numbers (`t[i]`, `t[i, j]`, `t[1:, 0]`); past any limit (so
    the caller takes its general path) for any other key."""
    tk = type(key)
    if tk in SCALARS:
        return 0
    if tk is tuple:
        for x in key:
            if type(x) not in SCALARS:
                return _NOT_SCALAR_KEY
        return len(key)
    return _NOT_SCALAR_KEY


_NOT_SCALAR_KEY = float("inf")


class CompiledExpressions:
    """Mixed into the Compiler: one `_c_<Expr>` maker per expression node type it compiles."""


    # ================================================================= expressions
    @staticmethod
    def _read_name(node):
        """The variable a plain-name operand reads, else None: closures then read the scope's own variables
        inline (`d[name] if name in d`, no call) and call the operand's closure for everything else (`None` is
        never a variable, so `None in d` sends every other operand there)."""
        return node.id if type(node) is ast.Name and type(node.ctx) is ast.Load else None

    def _c_Constant(self, node):
        value = node.value

        def constant(scope):
            return value
        return constant

    def _c_Name(self, node):
        if type(node.ctx) is not ast.Load:
            return None
        name = node.id
        lookup = self.lookup
        builtins = self.builtins

        def load(scope):
            d = scope.vars
            if name in d:
                return d[name]
            if scope.parent is None and name in builtins:  # (`lookup`'s answer at the top level)
                return builtins[name]
            return lookup(name, scope, node)
        return load

    def _c_Attribute(self, node):
        if type(node.ctx) is not ast.Load:
            return None
        value = self.code_of(node.value)
        value_name = self._read_name(node.value)
        attr = node.attr
        get_attribute = self.get_attribute
        dunder_attribute = self.dunder_attribute
        dunder_read = attr in DUNDER_READS  # (no table has these names: a dunder read always lands there)
        at = self._at

        def attribute(scope):
            d = scope.vars
            obj = d[value_name] if value_name in d else value(scope)
            try:
                return get_attribute(obj, attr)
            except AttributeError as e:
                if dunder_read:
                    try:
                        return dunder_attribute(obj, attr)
                    except Exception as e2:
                        raise at(e2, node) from None
                raise at(e, node) from None
            except Exception as e:
                raise at(e, node) from None
        return attribute

    def _c_Subscript(self, node):
        value = self.code_of(node.value)
        value_name = self._read_name(node.value)
        key = self.code_of(node.slice)
        key_name = self._read_name(node.slice)
        get_item = self.get_item
        at = self._at
        T = self.tensor_type
        P = self.parameter_type
        interp = self

        def subscript(scope):
            d = scope.vars
            obj = d[value_name] if value_name in d else value(scope)
            k = d[key_name] if key_name in d else key(scope)
            try:
                t = type(obj)
                if t is dict or ((t is list or t is tuple) and type(k) is int):
                    return obj[k]  # (get_item's first branch: no copy to count)
                if (t is T or t is P) and scalar_key_items(k) <= interp.max_seq:
                    return obj[k]  # (get_item's tensor branch: a key of numbers passes its check_data)
                return get_item(obj, k)
            except Exception as e:
                raise at(e, node) from None
        return subscript

    def _c_BinOp(self, node):
        left = self.code_of(node.left)
        right = self.code_of(node.right)
        left_name = self._read_name(node.left)
        right_name = self._read_name(node.right)
        op = type(node.op)
        fn = _BINOPS[op]
        binop = self.binop
        max_bits = self.max_bits
        int_safe = op in _INT_SAFE_OPS
        is_mult = op is ast.Mult
        float_ok = op in _NUMBER_OPS
        T = self.tensor_type
        P = self.parameter_type
        tensor_ok = op not in _BIT_OPS  # (`&`, `|`, `^` on tensors: binop checks their broadcast first)
        binop_result = self._binop_result
        interp = self
        at = self._at

        def binary(scope):
            d = scope.vars
            a = d[left_name] if left_name in d else left(scope)
            b = d[right_name] if right_name in d else right(scope)
            ta = type(a)
            tb = type(b)
            # plain numbers: the result binop would give, when binop's checks could not fail (else binop decides)
            if ta is int and tb is int:
                if int_safe or (is_mult and a.bit_length() + b.bit_length() <= max_bits):
                    try:
                        r = fn(a, b)
                    except Exception:
                        return binop(op, a, b, node)
                    if type(r) is not int or r.bit_length() <= max_bits:
                        return r
            elif float_ok and (ta is float or tb is float) and (ta is int or ta is float) and (tb is int or tb is float):
                try:
                    return fn(a, b)
                except Exception:
                    pass
            elif tensor_ok and (((ta is T or ta is P) and (tb is T or tb is P or tb in SCALARS))
                                or ((tb is T or tb is P) and ta in SCALARS)):
                # tensors and numbers: binop's tensor branch, its `check_data` (their elements) inlined
                n = (a._data.size if ta is T or ta is P else 0) + (b._data.size if tb is T or tb is P else 0)  # (numel())
                if n <= interp.max_seq:
                    try:
                        r = fn(a, b)
                    except Exception as e:
                        raise at(e, node) from None
                    if type(r) is T:
                        return r
                    return binop_result(r, False, node)
            return binop(op, a, b, node)
        return binary

    def _c_UnaryOp(self, node):
        operand = self.code_of(node.operand)
        op = type(node.op)
        wrap = self._wrap
        interp = self
        if op is ast.Not:
            def negation(scope):
                return not operand(scope)
            return negation
        fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[op]

        def unary(scope):
            v = operand(scope)
            try:
                return fn(v)
            except Exception as e:
                raise wrap(operand_error(interp, e, v), node) from None
        return unary

    def _c_BoolOp(self, node):
        values = tuple(self.code_of(v) for v in node.values)
        if type(node.op) is ast.And:
            def conjunction(scope):
                v = True
                for c in values:
                    v = c(scope)
                    if not v:
                        return v
                return v
            return conjunction

        def disjunction(scope):
            v = False
            for c in values:
                v = c(scope)
                if v:
                    return v
            return v
        return disjunction

    def _c_Compare(self, node):
        if len(node.ops) != 1:
            return self._comparison_chain(node)
        if type(node.ops[0]) in (ast.In, ast.NotIn):
            return self._membership(node)
        left_code = self.code_of(node.left)
        right_code = self.code_of(node.comparators[0])
        fn = _CMP[type(node.ops[0])]
        interp = self
        T = self.tensor_type
        check_data = self.check_data
        at = self._at
        ndarray = np.ndarray

        def compare(scope):
            left = left_code(scope)
            try:
                right = right_code(scope)
                tl = type(left)
                tr = type(right)
                if (tl is int or tl is float) and (tr is int or tr is float):
                    return fn(left, right)
                if isinstance(left, T) or isinstance(right, T):
                    check_data(left, right)
                elif tl is ndarray or tr is ndarray:
                    check_data(left, right)
                    gate_of(interp).before_binop(left, right, False)
                try:
                    return fn(left, right)
                except TypeError as e:
                    raise operand_error(interp, e, left, right) from None
            except Exception as e:
                raise at(e, node) from None
        return compare

    def _comparison_chain(self, node):
        """`a < b < c`, as `ev_Compare`: each comparator evaluated once, in order, until one comparison is false."""
        left_code = self.code_of(node.left)
        steps = tuple((type(op), self.code_of(c)) for op, c in zip(node.ops, node.comparators))
        interp = self
        contains = self._contains
        T = self.tensor_type
        check_data = self.check_data
        at = self._at
        ndarray = np.ndarray

        def comparison_chain(scope):
            left = left_code(scope)
            try:
                r = True
                for t, right_code in steps:
                    right = right_code(scope)
                    if t is ast.In or t is ast.NotIn:
                        r = contains(right, left)
                        if t is ast.NotIn:
                            r = not r
                    else:
                        if isinstance(left, T) or isinstance(right, T):
                            check_data(left, right)
                        elif type(left) is ndarray or type(right) is ndarray:
                            check_data(left, right)
                            gate_of(interp).before_binop(left, right, False)
                        try:
                            r = _CMP[t](left, right)
                        except TypeError as e:
                            raise operand_error(interp, e, left, right) from None
                    if not r:
                        return r
                    left = right
                return r
            except Exception as e:
                raise at(e, node) from None
        return comparison_chain

    def _c_Slice(self, node):
        lower = None if node.lower is None else self.code_of(node.lower)
        upper = None if node.upper is None else self.code_of(node.upper)
        step = None if node.step is None else self.code_of(node.step)

        def slice_node(scope):
            return slice(None if lower is None else lower(scope), None if upper is None else upper(scope),
                         None if step is None else step(scope))
        return slice_node

    def _c_Dict(self, node):
        if any(k is None for k in node.keys):
            return None  # `**mapping`: ev_Dict's check
        pairs = tuple((self.code_of(k), self.code_of(v)) for k, v in zip(node.keys, node.values))
        alloc = self.alloc

        def dict_display(scope):
            d = {}
            for k, v in pairs:
                key = k(scope)  # (the key first, as Python 3.8+)
                d[key] = v(scope)
            alloc(len(d), "dict")
            return d
        return dict_display

    def _membership(self, node):
        left_code = self.code_of(node.left)
        right_code = self.code_of(node.comparators[0])
        negated = type(node.ops[0]) is ast.NotIn
        contains = self._contains
        at = self._at

        def membership(scope):
            left = left_code(scope)
            try:
                r = contains(right_code(scope), left)
                return not r if negated else r
            except Exception as e:
                raise at(e, node) from None
        return membership

    def _c_IfExp(self, node):
        test = self.code_of(node.test)
        body = self.code_of(node.body)
        orelse = self.code_of(node.orelse)

        def if_expression(scope):
            return body(scope) if test(scope) else orelse(scope)
        return if_expression

    def _c_List(self, node):
        if type(node.ctx) is not ast.Load or any(type(e) is ast.Starred for e in node.elts):
            return None
        items = tuple(self.code_of(e) for e in node.elts)
        if len(items) == 1:
            (only,) = items

            def list_of_one(scope):
                return [only(scope)]
            return list_of_one
        if len(items) == 2:
            first, second = items

            def list_of_two(scope):
                return [first(scope), second(scope)]
            return list_of_two

        def list_display(scope):
            return [c(scope) for c in items]
        return list_display

    def _c_Tuple(self, node):
        if type(node.ctx) is not ast.Load or any(type(e) is ast.Starred for e in node.elts):
            return None
        items = tuple(self.code_of(e) for e in node.elts)
        if len(items) == 2:  # (a pair, an index `P[i, j]`: no list comprehension, a call of its own in 3.11)
            first, second = items
            first_name, second_name = (self._read_name(e) for e in node.elts)

            def pair(scope):
                d = scope.vars
                return (d[first_name] if first_name in d else first(scope),
                        d[second_name] if second_name in d else second(scope))
            return pair
        if len(items) == 3:
            first, second, third = items

            def triple(scope):
                return first(scope), second(scope), third(scope)
            return triple

        def tuple_display(scope):
            return tuple([c(scope) for c in items])
        return tuple_display

    def _c_Set(self, node):
        if any(type(e) is ast.Starred for e in node.elts):
            return None  # `{*iterable}`: ev_Set's bounded spread
        items = tuple(self.code_of(e) for e in node.elts)

        def set_display(scope):
            return {c(scope) for c in items}
        return set_display

    def _c_Lambda(self, node):
        """`lambda`: a function made now (`_function`: its defaults evaluated in the defining scope)."""
        function = self._function

        def lambda_function(scope):
            return function("<lambda>", node, True, scope)
        return lambda_function

    def _c_Call(self, node):
        if any(kw.arg is not None and kw.arg[:1] == "_" for kw in node.keywords):
            return None  # `_x=`: ev_Call checks the callee is the program's own
        if any(type(a) is ast.Starred for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return self._spread_call(node)
        func = self.code_of(node.func)
        args = tuple(self.code_of(a) for a in node.args)
        keywords = tuple((kw.arg, self.code_of(kw.value)) for kw in node.keywords)
        call = self.call
        call_user = self.call_user
        at = self._at
        interp = self

        if not keywords and len(args) <= 2:
            return self._positional_call(node, func, args)

        def call_node(scope):
            f = func(scope)
            values = [c(scope) for c in args]
            kwargs = {}
            for name, c in keywords:
                kwargs[name] = c(scope)
            if f is SUPER:
                return interp._super(values, scope, node)
            try:
                t = type(f)
                if t is UserFunction:  # (what `call` does first for these two)
                    return call_user(f, values, kwargs)
                if t is Builtin:
                    return f.fn(*values, **kwargs)
                return call(f, values, kwargs)
            except Exception as e:
                raise at(e, node) from None
        return call_node

    def _spread_call(self, node):
        """A call with `*iterable` or `**mapping` arguments, as `ev_Call`: the spread items taken (bounded), the
        mapping's keys checked (strings, no `_` names, no repeats)."""
        func = self.code_of(node.func)
        args = tuple((type(a) is ast.Starred, self.code_of(a.value if type(a) is ast.Starred else a))
                     for a in node.args)
        keywords = tuple((kw.arg, kw, self.code_of(kw.value)) for kw in node.keywords)
        interp = self
        take = self.take
        iterate = self.iterate
        call = self.call
        at = self._at

        def spread_call(scope):
            f = func(scope)
            values = []
            for spread, c in args:  # (`_elements`)
                if spread:
                    values.extend(take(iterate(c(scope))))
                    if len(values) > interp.max_seq:
                        raise interp._seq_limit(len(values))
                else:
                    values.append(c(scope))
            kwargs = {}
            for name, kw, c in keywords:
                if name is not None:
                    kwargs[name] = c(scope)
                    continue
                m = c(scope)
                if type(m) is not dict:
                    raise ProgramError("TypeError", "argument after ** must be a mapping", kw.lineno, kw.col_offset)
                for k in m:
                    if type(k) is not str:
                        raise ProgramError("TypeError", "keywords must be strings", kw.lineno, kw.col_offset)
                    if k[:1] == "_" and (k[1:2] == "_" or not interp._takes_private_keywords(f)):
                        raise ProgramError("TypeError", f"keyword argument '{k}' is not allowed", kw.lineno,
                                           kw.col_offset)
                    if k in kwargs:
                        raise ProgramError("TypeError", f"got multiple values for keyword argument '{k}'",
                                           kw.lineno, kw.col_offset)
                kwargs.update(m)
            if f is SUPER:
                return interp._super(values, scope, node)
            try:
                return call(f, values, kwargs)
            except Exception as e:
                raise at(e, node) from None
        return spread_call

    def _positional_call(self, node, func, args):
        """`_c_Call`'s closure for a call with at most two positional arguments (no list comprehension, no
        keyword dict: each is a function call of its own in CPython 3.11)."""
        call = self.call
        call_user = self.call_user
        at = self._at
        interp = self
        first = args[0] if args else None
        second = args[1] if len(args) == 2 else None
        func_name = self._read_name(node.func)
        if len(args) == 1 and type(node.func) is ast.Name and node.func.id == "print":
            return self._print_call(node, func, first)
        method_call = self._method_call(node, args)
        if method_call is not None:
            return method_call

        def call_positional(scope):
            d = scope.vars
            f = d[func_name] if func_name in d else func(scope)
            if first is None:
                values = []
            elif second is None:
                values = [first(scope)]
            else:
                values = [first(scope), second(scope)]
            if f is SUPER:
                return interp._super(values, scope, node)
            try:
                t = type(f)
                if t is Builtin:
                    return f.fn(*values)
                if t is UserFunction:
                    return call_user(f, values, {})
                return call(f, values, {})
            except Exception as e:
                raise at(e, node) from None
        return call_positional
