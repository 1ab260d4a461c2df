"""The expression closures of the compiled interpreter (`compiler.Compiler` mixes them in): names, operators,
comparisons, displays, comprehensions, calls and f-strings, each doing what its `ev_<Expr>` method does."""

from __future__ import annotations

import ast
import operator

import numpy as np

from .budgets import ALLOC_FACTOR
from .checks import DUNDER_READS
from .errors import ProgramError
from .expressions import _BINOPS, _BIT_OPS, _CMP
from .instance_protocol import operand_error
from .numpy_module import gate_of
from .objects import PRIMITIVES, SCALARS, SUPER, Builtin, UserFunction

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

    def _print_call(self, node, func, first):
        """`print(x)`: while `print` is the run's builtin, its one-value case (`_print`'s first branch) without
        the call through `Builtin.fn` and `*args`; a program's own `print` is called as any function."""
        builtins = self.builtins
        print_builtin = builtins["print"]
        emit = self.emit
        to_str = self.to_str
        call = self.call
        call_user = self.call_user
        at = self._at
        interp = self

        def call_print(scope):
            d = scope.vars
            if "print" in d:
                f = d["print"]
            elif scope.parent is None and "print" in builtins:  # (the name's `load`, inlined)
                f = builtins["print"]
            else:
                f = func(scope)
            value = first(scope)
            if f is SUPER:
                return interp._super([value], scope, node)
            try:
                if f is print_builtin:
                    emit((value if type(value) is str else to_str(value)) + "\n")
                    return None
                t = type(f)
                if t is Builtin:
                    return f.fn(value)
                if t is UserFunction:
                    return call_user(f, [value], {})
                return call(f, [value], {})
            except Exception as e:
                raise at(e, node) from None
        return call_print

    def _c_JoinedStr(self, node):
        parts = tuple(v.value if type(v) is ast.Constant else self._formatted(v) for v in node.values)
        joined = self._joined
        alloc = self.alloc
        interp = self

        literal_chars = sum(len(p) for p in parts if type(p) is str)
        run_cap = ALLOC_FACTOR * self.max_seq
        # the literal parts stay in place; each value's text goes into its slot (in the order of the text)
        layout = [p if type(p) is str else None for p in parts]
        slots = tuple((i, p) for i, p in enumerate(parts) if type(p) is not str)

        if 1 <= len(slots) <= 2:
            return self._short_f_string(node, parts, slots, layout, literal_chars)

        def f_string(scope):
            pieces = layout.copy()
            total = literal_chars
            for i, p in slots:
                p = pieces[i] = p(scope)
                total += len(p)
            if total > interp.max_seq:
                return joined(pieces)  # (its error: where the text passed the limit)
            interp.allocated += total  # (`alloc`, inlined: the run's total of list/string items)
            if interp.allocated > run_cap:
                interp.allocated -= total
                alloc(total, "string")  # (its error)
            return "".join(pieces)
        return f_string

    @staticmethod
    def _simple_slot(value_node):
        """(name, spec) of an f-string value `{name}` or `{name:spec}` with a constant spec ('' for none), else
        None: while the name is a variable of the scope holding a plain value (and the spec was checked before),
        its text is `format(value, spec)`, made inline."""
        if type(value_node) is not ast.FormattedValue or value_node.conversion != -1:
            return None
        if type(value_node.value) is not ast.Name:
            return None
        spec = value_node.format_spec
        if spec is None:
            return value_node.value.id, ""
        if not all(type(v) is ast.Constant and type(v.value) is str for v in spec.values):
            return None
        return value_node.value.id, "".join(v.value for v in spec.values)

    def _short_f_string(self, node, parts, slots, layout, literal_chars):
        """`_c_JoinedStr`'s closure for one or two values (most f-strings): the text is the literal runs and the
        values added up, with no list of pieces (only its error path builds one)."""
        joined = self._joined
        alloc = self.alloc
        interp = self
        run_cap = ALLOC_FACTOR * self.max_seq
        # the literal text before the first value, between the two, and after the last
        runs = ["".join(p for p in parts[a + 1:b] if type(p) is str)
                for a, b in zip((-1, *(i for i, _ in slots)), (*(i for i, _ in slots), len(parts)))]

        def pieces_of(*texts):
            pieces = layout.copy()
            for (i, _), text in zip(slots, texts):
                pieces[i] = text
            return pieces

        if len(slots) == 1:
            ((_, first),) = slots
            before, after = runs

            def f_string_one(scope):
                a = first(scope)
                total = literal_chars + len(a)
                if total > interp.max_seq:
                    return joined(pieces_of(a))  # (its error: where the text passed the limit)
                interp.allocated += total  # (`alloc`, inlined: the run's total of list/string items)
                if interp.allocated > run_cap:
                    interp.allocated -= total
                    alloc(total, "string")  # (its error)
                return before + a + after
            return f_string_one

        (i1, first), (i2, second) = slots
        before, between, after = runs
        simple = (self._simple_slot(node.values[i1]), self._simple_slot(node.values[i2]))
        name1, spec1 = simple[0] or (None, None)
        name2, spec2 = simple[1] or (None, None)
        checked = self._checked_specs
        fused = simple[0] is not None and simple[1] is not None

        def f_string_two(scope):
            d = scope.vars
            if fused and name1 in d and name2 in d:
                # both values plain variables: `formatted`/`plain` inline when their checks are known to pass
                v1 = d[name1]
                v2 = d[name2]
                if type(v1) in PRIMITIVES and type(v2) in PRIMITIVES and (spec1 == "" or spec1 in checked) \
                        and (spec2 == "" or spec2 in checked):
                    try:
                        a = format(v1, spec1)
                        b = format(v2, spec2)
                    except Exception:  # (the closures below raise it, at the value)
                        a = first(scope)
                        b = second(scope)
                else:
                    a = first(scope)
                    b = second(scope)
            else:
                a = first(scope)
                b = second(scope)
            total = literal_chars + len(a) + len(b)
            if total > interp.max_seq:
                return joined(pieces_of(a, b))  # (its error: where the text passed the limit)
            interp.allocated += total  # (`alloc`, inlined)
            if interp.allocated > run_cap:
                interp.allocated -= total
                alloc(total, "string")  # (its error)
            return before + a + between + b + after
        return f_string_two

    def _formatted(self, node):
        """One `{value!conv:spec}` of an f-string, as `ev_FormattedValue`."""
        if type(node) is not ast.FormattedValue:
            return self.code_of(node)
        value_code = self.code_of(node.value)
        value_name = self._read_name(node.value)
        conv = None if node.conversion == -1 else chr(node.conversion)
        convert = self._convert
        spec_node = node.format_spec
        constant_specs = self._constant_specs
        checked_specs = self._checked_specs
        format_value = self.format_value
        ev = self.ev
        at = self._at
        constant_spec = spec_node is not None and all(type(v) is ast.Constant for v in spec_node.values)

        if spec_node is None and conv is None:
            def plain(scope):
                d = scope.vars
                value = d[value_name] if value_name in d else value_code(scope)
                try:
                    if type(value) in PRIMITIVES:  # (format_value's text of them with no spec: str)
                        return str(value)
                    return format_value(value, "")
                except Exception as e:
                    raise at(e, node) from None
            return plain

        known_spec = None  # a constant spec's text, once made (`constant_specs` has it too)

        def formatted(scope):
            nonlocal known_spec
            d = scope.vars
            value = d[value_name] if value_name in d else value_code(scope)
            if conv is not None:
                value = convert(value, conv)
            if spec_node is None:
                spec = ""
            elif known_spec is not None:
                spec = known_spec
            else:
                spec = constant_specs.get(spec_node)
                if spec is None:
                    spec = ev(spec_node, scope)
                    if constant_spec:  # `{x:5d}`: the same text every time
                        constant_specs[spec_node] = spec
                if constant_spec:
                    known_spec = spec
            try:
                if type(value) in PRIMITIVES and spec in checked_specs:  # a spec checked before
                    return format(value, spec)
                return format_value(value, spec)
            except Exception as e:
                raise at(e, node) from None
        return formatted
