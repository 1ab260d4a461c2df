"""Expressions: names, attributes, subscripts, operators, comparisons, displays, lambdas, comprehensions.

Each `ev_<Node>` method evaluates one kind of `ast` expression node (the Interpreter dispatches on the
node's type). Operators check their budgets first (integer bits, sequence sizes, data handed to the
engine); errors get the location of the innermost expression (`_at`).
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from .budgets import SEQUENCE_TYPES
from .checks import DUNDER_READS
from .errors import ProgramError
from .instance_protocol import operand_error
from .numpy_module import gate_of
from .objects import (
    CLASS,
    COMP,
    CONTAINERS,
    INTS,
    SCALARS,
    SEQUENCES,
    BoundMethod,
    ModuleProxy,
    Scope,
    UserClass,
    UserFunction,
    UserInstance,
)

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_INPLACE = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul, ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod, ast.Pow: operator.ipow, ast.MatMult: operator.imatmul,
    ast.LShift: operator.ilshift, ast.RShift: operator.irshift, ast.BitAnd: operator.iand, ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
_CMP = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_COPIES = frozenset({set, frozenset, dict})  # set and dict operators make new objects
_BIT_OPS = frozenset({ast.BitAnd, ast.BitOr, ast.BitXor})


class Expressions:
    """Mixed into the Interpreter."""

    def ev(self, node, scope):
        c = self._code.get(node)
        if c is None:
            c = self.code_of(node)  # compiled once (compiler.py)
        return c(scope)

    def ev_Constant(self, node, scope):
        return node.value

    def ev_Name(self, node, scope):
        d = scope.vars
        name = node.id
        if name in d:
            return d[name]
        return self.lookup(name, scope, node)

    def ev_Attribute(self, node, scope):
        obj = self.ev(node.value, scope)
        try:
            return self.get_attribute(obj, node.attr)
        except AttributeError as e:
            if node.attr in DUNDER_READS:  # (no table has these names: a dunder read always lands here)
                try:
                    return self.dunder_attribute(obj, node.attr)
                except Exception as e2:
                    raise self._at(e2, node) from None
            raise self._at(e, node) from None
        except Exception as e:
            raise self._at(e, node) from None

    def ev_Subscript(self, node, scope):
        obj = self.ev(node.value, scope)
        key = self.ev(node.slice, scope)
        try:
            return self.get_item(obj, key)
        except Exception as e:
            raise self._at(e, node) from None

    def ev_Slice(self, node, scope):
        return slice(None if node.lower is None else self.ev(node.lower, scope),
                     None if node.upper is None else self.ev(node.upper, scope),
                     None if node.step is None else self.ev(node.step, scope))

    # ---------------------------------------------------------------- operators
    def ev_BinOp(self, node, scope):
        a = self.ev(node.left, scope)
        b = self.ev(node.right, scope)
        return self.binop(type(node.op), a, b, node)

    def binop(self, op, a, b, node, inplace=False):
        ta = type(a)
        tb = type(b)
        T = self.tensor_type
        P = self.parameter_type
        if ((ta is T or ta is P) and (tb is T or tb is P or tb in SCALARS)) or ((tb is T or tb is P) and ta in SCALARS):
            # tensors and numbers (most operators of a training loop): the tensor branch below, taken directly
            try:
                self.check_data(a, b)
                if op in _BIT_OPS:
                    self._check_broadcast(a, b)
                r = (_INPLACE if inplace else _BINOPS)[op](a, b)
            except Exception as e:
                raise self._at(e, node) from None
            if type(r) in _COPIES or type(r) is np.ndarray:
                return self._binop_result(r, inplace, node)
            return r
        try:
            if ta is float or tb is float:
                if op is ast.Mod and ta is str:
                    return self._percent(a, b)
            elif ta in INTS and tb in INTS:
                if op is ast.Pow or op is ast.Mult or op is ast.LShift:  # (the others cannot grow past the check below)
                    self._check_int_op(op, a, b)
                r = _BINOPS[op](a, b)
                if type(r) is int and r.bit_length() > self.max_bits:
                    raise self.int_limit(r.bit_length())
                return r
            elif ta in SEQUENCES or tb in SEQUENCES or isinstance(a, SEQUENCE_TYPES) or isinstance(b, SEQUENCE_TYPES):
                a, b = self._check_seq_op(op, a, b, inplace)
                if op is ast.Mod and (ta is str or ta is bytes):
                    return self._percent(a, b)
            T = self.tensor_type
            if isinstance(a, T) or isinstance(b, T):  # the engine converts the other operand
                self.check_data(a, b)
                if op in _BIT_OPS:
                    self._check_broadcast(a, b)
            elif ta is np.ndarray or tb is np.ndarray:  # numpy broadcasts: its result's size first
                self.check_data(a, b)
                gate_of(self).before_binop(a, b, op is ast.MatMult)
            r = (_INPLACE if inplace else _BINOPS)[op](a, b)
            if type(r) in _COPIES:
                self.alloc(len(r))
            elif type(r) is np.ndarray and not inplace:
                gate_of(self).result(r)
            return r
        except Exception as e:
            raise self._at(operand_error(self, e, a, b), node) from None

    def _binop_result(self, r, inplace, node):
        """The size checks on an operator's result that is a new set/dict or numpy array."""
        try:
            if type(r) in _COPIES:
                self.alloc(len(r))
            elif type(r) is np.ndarray and not inplace:
                gate_of(self).result(r)
            return r
        except Exception as e:
            raise self._at(e, node) from None

    def ev_UnaryOp(self, node, scope):
        v = self.ev(node.operand, scope)
        op = type(node.op)
        if op is ast.Not:
            return not v
        try:
            return _UNARY[op](v)
        except Exception as e:
            raise self._wrap(operand_error(self, e, v), node) from None

    def ev_BoolOp(self, node, scope):
        stop_on = type(node.op) is ast.Or  # `and` stops at the first false value, `or` at the first true one
        v = not stop_on
        for e in node.values:
            v = self.ev(e, scope)
            if bool(v) is stop_on:
                return v
        return v

    def ev_Compare(self, node, scope):
        left = self.ev(node.left, scope)
        try:
            for op, comp in zip(node.ops, node.comparators):
                right = self.ev(comp, scope)
                t = type(op)
                if t is ast.In or t is ast.NotIn:
                    r = self._contains(right, left)
                    if t is ast.NotIn:
                        r = not r
                else:
                    T = self.tensor_type
                    if isinstance(left, T) or isinstance(right, T):
                        self.check_data(left, right)
                    elif type(left) is np.ndarray or type(right) is np.ndarray:
                        self.check_data(left, right)
                        gate_of(self).before_binop(left, right, False)
                    try:
                        r = _CMP[t](left, right)
                    except TypeError as e:
                        raise operand_error(self, e, left, right) from None
                if len(node.ops) == 1:
                    return r
                if not r:
                    return r
                left = right
            return r
        except Exception as e:
            raise self._at(e, node) from None

    def _contains(self, container, item):
        t = type(container)
        if t in CONTAINERS or t is str or t is bytes:
            return item in container
        if t is range and type(item) in INTS:
            return item in container
        if t is UserInstance:  # its class's __contains__, __iter__ or __getitem__ (instance_protocol)
            return item in container
        if isinstance(container, (UserClass, ModuleProxy, UserFunction, BoundMethod)):
            raise TypeError(f"argument of type '{self.type_name(container)}' is not iterable")
        T = self.tensor_type
        if isinstance(container, (T, dict, list, tuple)):
            if isinstance(container, T):
                self.check_data(item)
            return item in container
        return item in self.take(container)

    def ev_IfExp(self, node, scope):
        return self.ev(node.body, scope) if self.ev(node.test, scope) else self.ev(node.orelse, scope)

    def ev_NamedExpr(self, node, scope):
        value = self.ev(node.value, scope)
        s = scope
        while s.kind == COMP and s.parent is not None:
            s = s.parent
        self.assign(node.target, value, s)
        return value

    # ---------------------------------------------------------------- displays
    def _elements(self, elts, scope):
        """The items of a list/tuple/set display or of call arguments, `*iterable` spread (bounded)."""
        out = []
        for e in elts:
            if type(e) is ast.Starred:
                out.extend(self.take(self.iterate(self.ev(e.value, scope))))
                if len(out) > self.max_seq:
                    raise self._seq_limit(len(out))
            else:
                out.append(self.ev(e, scope))
        return out

    def ev_List(self, node, scope):
        return self._elements(node.elts, scope)

    def ev_Tuple(self, node, scope):
        return tuple(self._elements(node.elts, scope))

    def ev_Set(self, node, scope):
        return set(self._elements(node.elts, scope))

    def ev_Dict(self, node, scope):
        d = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                m = self.ev(v, scope)
                if type(m) is not dict:
                    raise ProgramError("TypeError", f"'{self.type_name(m)}' object is not a mapping", v.lineno,
                                       v.col_offset)
                d.update(m)
            else:
                key = self.ev(k, scope)  # (the key first, as Python 3.8+)
                d[key] = self.ev(v, scope)
        self.alloc(len(d), "dict")
        return d

    def ev_Starred(self, node, scope):
        raise ProgramError("SyntaxError", "can't use starred expression here", node.lineno, node.col_offset)

    def ev_Lambda(self, node, scope):
        return self._function("<lambda>", node, True, scope)

    def _function(self, name, node, is_lambda, scope):
        """A `def` or `lambda`: its defaults are evaluated now, in the defining scope."""
        a = node.args
        defaults = [self.ev(d, scope) for d in a.defaults]
        kw_defaults = {p.arg: self.ev(d, scope) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        f = UserFunction(name, node, node.body, is_lambda, scope, self, defaults, kw_defaults)
        if not is_lambda:
            f.yields = self.yield_statements(node) or None
            f.decls = self.declarations(node)
        prefix = self.qualname_prefix(scope)
        if prefix is not None:
            f.qualname = f"{prefix}.{name}"
        return f

    @staticmethod
    def qualname_prefix(scope):
        """What a function's or class's `__qualname__` starts with: its class's, or `f.<locals>`."""
        while scope.kind == COMP:
            scope = scope.parent
        if scope.kind == CLASS:
            return scope.qualname
        if scope.func is not None:
            return f"{scope.func.qualname}.<locals>"
        return None

    # ---------------------------------------------------------------- comprehensions
    def _comprehension(self, node, scope, emit):
        inner = Scope({}, scope, COMP)
        self._comp_loop(node.generators, 0, inner, scope, emit)

    def _comp_loop(self, gens, i, inner, outer, emit):
        gen = gens[i]
        # the first iterable is evaluated in the enclosing scope, as in Python
        iterable = self.ev(gen.iter, outer if i == 0 else inner)
        n = 0
        limit = self.max_loop
        last = i == len(gens) - 1
        target = gen.target
        name = target.id if type(target) is ast.Name else None
        ifs = gen.ifs
        for item in self.iterate(iterable):
            n += 1
            if n > limit:
                raise self._loop_limit(gen.iter)
            self.steps += 1
            if self.steps >= self.next_check:
                self._check(gen.iter)
            if name is not None:
                inner.vars[name] = item
            else:
                self.assign(target, item, inner, name_tensors=False)
            if ifs and not all(self.ev(c, inner) for c in ifs):
                continue
            if last:
                emit(inner)
            else:
                self._comp_loop(gens, i + 1, inner, outer, emit)

    def ev_ListComp(self, node, scope):
        out = []
        elt = node.elt
        ev = self.code_of(elt)
        self._comprehension(node, scope, lambda s: out.append(ev(s)))
        return out

    def ev_GeneratorExp(self, node, scope):
        """Lazy, as Python's: the first iterable now, the rest as items are taken (every consumer is
        bounded), so `next(i for i in itertools.count() if ...)` works."""
        gens = node.generators
        items = self.iterate(self.ev(gens[0].iter, scope))
        g = self._genexp_items(node, gens, 0, items, Scope({}, scope, COMP))
        g.__name__ = g.__qualname__ = "<genexpr>"  # its repr: `<generator object <genexpr> at 0x7f…>`
        return g

    def _genexp_items(self, node, gens, i, items, inner):
        gen = gens[i]
        n = 0
        limit = self.max_loop
        last = i == len(gens) - 1
        target = gen.target
        name = target.id if type(target) is ast.Name else None
        ifs = gen.ifs
        elt = node.elt
        try:
            for item in items:
                n += 1
                if n > limit:
                    raise self._loop_limit(gen.iter)
                self.steps += 1
                if self.steps >= self.next_check:
                    self._check(gen.iter)
                if name is not None:
                    inner.vars[name] = item
                else:
                    self.assign(target, item, inner, name_tensors=False)
                if ifs and not all(self.ev(c, inner) for c in ifs):
                    continue
                if last:
                    yield self.ev(elt, inner)
                else:
                    nxt = gens[i + 1]
                    yield from self._genexp_items(node, gens, i + 1, self.iterate(self.ev(nxt.iter, inner)), inner)
        except Exception as e:  # an error while the consumer takes items: at the expression, as in Python
            raise self._at(e, node) from None

    def ev_SetComp(self, node, scope):
        out = set()
        elt = node.elt
        ev = self.code_of(elt)
        self._comprehension(node, scope, lambda s: out.add(ev(s)))
        return out

    def ev_DictComp(self, node, scope):
        out = {}

        def emit(s):
            key = self.ev(node.key, s)  # (the key first, as Python 3.8+)
            out[key] = self.ev(node.value, s)
        self._comprehension(node, scope, emit)
        return out
