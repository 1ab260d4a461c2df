"""The checked tree compiled once into Python closures: the per-node dispatch happens once per node, not per run of it.

Nothing here calls `eval`, `exec` or `compile`: each node becomes a nested Python function (a closure over
its children's functions and over the interpreter's bound methods) that does exactly what the node's
`ev_<Expr>`/`ex_<Stmt>` method does, with the same budgets, checks, evaluation order and error locations.
Node types without a closure of their own here run through their `ev_`/`ex_` method (whose children
again run compiled, through `Expressions.ev`), so every node keeps one meaning. Closures are made per
run (they hold the run's interpreter) and cached per node; a block (a list of statements) is cached
per list object.
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from .budgets import ALLOC_FACTOR
from .checks import DUNDER_READS
from .expressions import _BINOPS, _CMP
from .instance_protocol import operand_error
from .numpy_module import gate_of
from .objects import BREAK, COMP, CONTINUE, PRIMITIVES, SUPER, Builtin, Return, Scope, UserFunction

SIZED_LOOPS = (range, list, tuple, dict, str)  # a `for` over these knows how many iterations it has
# int operators whose result cannot be large unless its operands are (so only the result's bits are checked)
_INT_SAFE_OPS = frozenset({ast.Add, ast.Sub, ast.FloorDiv, ast.Mod, ast.Div, ast.BitAnd, ast.BitOr, ast.BitXor,
                           ast.RShift})
_NUMBER_OPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div})  # on two floats (or a float and an int): plain


class Compiler:
    """Mixed into the Interpreter: `code_of(node)` is the node's closure, `block_of(body)` a block's."""

    def code_of(self, node):
        """The closure `f(scope)` of expression or statement `node` (made once per run)."""
        c = self._code.get(node)
        if c is None:
            c = self._code[node] = self._compile(node)
        return c

    def block_of(self, body):
        """The closure `f(scope)` of a block (a list of statements), made once per run: it returns None, or
        what ended the block (BREAK, CONTINUE, a Return)."""
        if type(body) is not list:  # a one-statement tuple from `g_block` (made per call): cached by its statement
            stmt = body[0] if len(body) == 1 else None
            run = self._blocks.get(stmt)
            if run is None:
                run = self._make_block(body)
                if stmt is not None:
                    self._blocks[stmt] = run
            return run
        entry = self._blocks.get(id(body))
        if entry is None:  # the entry keeps the list alive, so its id is never another object's
            entry = self._blocks[id(body)] = (body, self._make_block(body))
        return entry[1]

    def exec_block(self, body, scope):
        return self.block_of(body)(scope)

    # ================================================================= blocks
    def _make_block(self, body):
        interp = self
        rec = self.rec
        stmts = tuple((stmt, self.code_of(stmt)) for stmt in body)
        at = self._at
        check = self._check

        if len(stmts) == 1:
            ((stmt, code),) = stmts
            lineno = stmt.lineno

            def run_one(scope):
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(stmt)
                if rec is not None:
                    rec.line = lineno
                try:
                    return code(scope)
                except Exception as e:
                    raise at(e, stmt) from None
            return run_one

        lines = tuple((stmt, code, stmt.lineno) for stmt, code in stmts)

        def run_block(scope):
            for stmt, code, lineno in lines:
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(stmt)
                if rec is not None:
                    rec.line = lineno
                try:
                    r = code(scope)
                except Exception as e:
                    raise at(e, stmt) from None
                if r is not None:
                    return r
            return None
        return run_block

    # ================================================================= dispatch
    def _compile(self, node):
        make = _MAKERS.get(type(node))
        if make is not None:
            c = make(self, node)
            if c is not None:
                return c
        return self._fallback(node)

    def _fallback(self, node):
        """The node's `ev_`/`ex_` method, as the interpreter has always run it."""
        table = self._ex if isinstance(node, ast.stmt) else self._ev
        method = table.get(type(node))
        if method is None:

            def missing(scope):
                return table[type(node)](node, scope)  # the KeyError the dispatch raised before
            return missing

        def run(scope):
            return method(node, scope)
        return run

    # ================================================================= expressions
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
        attr = node.attr
        get_attribute = self.get_attribute
        dunder_attribute = self.dunder_attribute
        dunder_read = attr in DUNDER_READS  # (no table has these names: a dunder read always lands there)
        at = self._at

        def attribute(scope):
            obj = value(scope)
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
        key = self.code_of(node.slice)
        get_item = self.get_item
        at = self._at

        def subscript(scope):
            obj = value(scope)
            k = key(scope)
            try:
                return get_item(obj, k)
            except Exception as e:
                raise at(e, node) from None
        return subscript

    def _c_BinOp(self, node):
        left = self.code_of(node.left)
        right = self.code_of(node.right)
        op = type(node.op)
        fn = _BINOPS[op]
        binop = self.binop
        max_bits = self.max_bits
        int_safe = op in _INT_SAFE_OPS
        is_mult = op is ast.Mult
        float_ok = op in _NUMBER_OPS

        def binary(scope):
            a = left(scope)
            b = right(scope)
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
            return None  # a chain: ev_Compare
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
                d[k(scope)] = v(scope)  # (as ev_Dict: the value first, as in an assignment)
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

    def _c_ListComp(self, node):
        if len(node.generators) != 1 or node.generators[0].is_async:
            return None  # nested generators: ev_ListComp
        gen = node.generators[0]
        iter_node = gen.iter
        iter_code = self.code_of(iter_node)
        target = gen.target
        name = target.id if type(target) is ast.Name else None
        ifs = tuple(self.code_of(c) for c in gen.ifs)
        elt = self.code_of(node.elt)
        interp = self
        iterate = self.iterate
        assign = self.assign
        check = self._check

        def list_comprehension(scope):
            """`_comprehension` with one `for`: its iterable in the enclosing scope, the rest in its own."""
            out = []
            inner = Scope({}, scope, COMP)
            inner_vars = inner.vars
            n = 0
            limit = interp.max_loop
            for item in iterate(iter_code(scope)):
                n += 1
                if n > limit:
                    raise interp._loop_limit(iter_node)
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(iter_node)
                if name is not None:
                    inner_vars[name] = item
                else:
                    assign(target, item, inner, name_tensors=False)
                kept = True
                for c in ifs:
                    if not c(inner):
                        kept = False
                        break
                if kept:
                    out.append(elt(inner))
            return out
        return list_comprehension

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

        def list_display(scope):
            return [c(scope) for c in items]
        return list_display

    def _c_Tuple(self, node):
        if type(node.ctx) is not ast.Load or any(type(e) is ast.Starred for e in node.elts):
            return None
        items = tuple(self.code_of(e) for e in node.elts)

        def tuple_display(scope):
            return tuple([c(scope) for c in items])
        return tuple_display

    def _c_Call(self, node):
        if any(type(a) is ast.Starred for a in node.args) or any(kw.arg is None or kw.arg[:1] == "_"
                                                                   for kw in node.keywords):
            return None  # `*args` / `**kwargs` / `_x=`: ev_Call's checks
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

    def _positional_call(self, node, func, args):
        """`_c_Call`'s closure for a call with at most two positional arguments (no list comprehension, no
        keyword dict: each is a function call of its own in CPython 3.11)."""
        call = self.call
        call_user = self.call_user
        at = self._at
        interp = self
        first = args[0] if args else None
        second = args[1] if len(args) == 2 else None

        def call_positional(scope):
            f = func(scope)
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

    def _formatted(self, node):
        """One `{value!conv:spec}` of an f-string, as `ev_FormattedValue`."""
        if type(node) is not ast.FormattedValue:
            return self.code_of(node)
        value_code = self.code_of(node.value)
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
                value = value_code(scope)
                try:
                    if type(value) in PRIMITIVES:  # (format_value's text of them with no spec: str)
                        return str(value)
                    return format_value(value, "")
                except Exception as e:
                    raise at(e, node) from None
            return plain

        def formatted(scope):
            value = value_code(scope)
            if conv is not None:
                value = convert(value, conv)
            if spec_node is None:
                spec = ""
            else:
                spec = constant_specs.get(spec_node)
                if spec is None:
                    spec = ev(spec_node, scope)
                    if constant_spec:  # `{x:5d}`: the same text every time
                        constant_specs[spec_node] = spec
            try:
                if type(value) in PRIMITIVES and spec in checked_specs:  # a spec checked before
                    return format(value, spec)
                return format_value(value, spec)
            except Exception as e:
                raise at(e, node) from None
        return formatted

    # ================================================================= statements
    def _c_Expr(self, node):
        value = self.code_of(node.value)

        def expression_statement(scope):
            value(scope)
        return expression_statement

    def _c_Pass(self, node):
        def pass_statement(scope):
            return None
        return pass_statement

    def _c_Break(self, node):
        def break_statement(scope):
            return BREAK
        return break_statement

    def _c_Continue(self, node):
        def continue_statement(scope):
            return CONTINUE
        return continue_statement

    def _c_Return(self, node):
        if node.value is None:
            def return_none(scope):
                return Return(None)
            return return_none
        value = self.code_of(node.value)

        def return_value(scope):
            return Return(value(scope))
        return return_value

    def _c_Assign(self, node):
        value_code = self.code_of(node.value)
        rec = self.rec
        nameable = self.nameable_types
        assign = self.assign
        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            name = node.targets[0].id

            def assign_name(scope):
                value = value_code(scope)
                scope.vars[name] = value
                if rec is not None and isinstance(value, nameable):
                    rec.name_tensor(value, name)
            return assign_name
        targets = tuple((t, t.id if type(t) is ast.Name else None) for t in node.targets)

        def assign_targets(scope):
            value = value_code(scope)
            for target, name in targets:
                if name is not None:
                    scope.vars[name] = value
                    if rec is not None and isinstance(value, nameable):
                        rec.name_tensor(value, name)
                else:
                    assign(target, value, scope)
        return assign_targets

    def _c_AugAssign(self, node):
        target = node.target
        if type(target) is ast.Attribute:
            return self._augmented_attribute(node)
        if type(target) is ast.Subscript:
            return self._augmented_item(node)
        if type(target) is not ast.Name:
            return None  # (the checks refuse other targets): ex_AugAssign's error
        name = target.id
        value_code = self.code_of(node.value)
        op = type(node.op)
        fn = _BINOPS[op]
        lookup = self.lookup
        binop = self.binop
        rec = self.rec
        nameable = self.nameable_types
        max_bits = self.max_bits
        int_safe = op in _INT_SAFE_OPS
        float_ok = op in _NUMBER_OPS

        def augmented(scope):
            d = scope.vars
            cur = d[name] if name in d else lookup(name, scope, target)
            b = value_code(scope)
            ta = type(cur)
            tb = type(b)
            value = None
            # plain numbers: binop's result when its checks could not fail (`+=` on them is `+`)
            if ta is int and tb is int and int_safe:
                try:
                    value = fn(cur, b)
                except Exception:
                    value = None
                if value is not None and type(value) is int and value.bit_length() > max_bits:
                    value = None
            elif float_ok and (ta is float or tb is float) and (ta is int or ta is float) and (tb is int or tb is float):
                try:
                    value = fn(cur, b)
                except Exception:
                    value = None
            if value is None:
                value = binop(op, cur, b, node, inplace=True)
            scope.vars[name] = value
            if rec is not None and isinstance(value, nameable):
                rec.name_tensor(value, name)
        return augmented

    def _augmented_attribute(self, node):
        obj_code = self.code_of(node.target.value)
        attr = node.target.attr
        value_code = self.code_of(node.value)
        op = type(node.op)
        get_attribute = self.get_attribute
        set_attribute = self.set_attribute
        binop = self.binop

        def augmented_attribute(scope):
            obj = obj_code(scope)
            cur = get_attribute(obj, attr)
            set_attribute(obj, attr, binop(op, cur, value_code(scope), node, inplace=True))
        return augmented_attribute

    def _augmented_item(self, node):
        obj_code = self.code_of(node.target.value)
        key_code = self.code_of(node.target.slice)
        value_code = self.code_of(node.value)
        op = type(node.op)
        get_item = self.get_item
        set_item = self.set_item
        binop = self.binop

        def augmented_item(scope):
            obj = obj_code(scope)
            key = key_code(scope)
            cur = get_item(obj, key)
            set_item(obj, key, binop(op, cur, value_code(scope), node, inplace=True))
        return augmented_item

    def _c_If(self, node):
        test = self.code_of(node.test)
        body = self.block_of(node.body)
        orelse = self.block_of(node.orelse) if node.orelse else None

        def if_statement(scope):
            if test(scope):
                return body(scope)
            if orelse is not None:
                return orelse(scope)
            return None
        return if_statement

    def _c_For(self, node):
        iter_code = self.code_of(node.iter)
        iterate = self.iterate
        run_loop = self.run_loop
        loop = self._compiled_loop(node, node.target)

        def for_statement(scope):
            v = iter_code(scope)
            total = len(v) if type(v) in SIZED_LOOPS else None  # told when the time limit stops the loop
            return run_loop(node, iterate(v), total, lambda items: loop(items, scope))
        return for_statement

    def _c_While(self, node):
        test = self.code_of(node.test)
        run_loop = self.run_loop
        loop = self._compiled_loop(node, None)

        def iterations(scope):
            while test(scope):
                yield None

        def while_statement(scope):
            return run_loop(node, iterations(scope), None, lambda items: loop(items, scope))
        return while_statement

    def _compiled_loop(self, node, target):
        """`Interpreter._loop`: the body once per item, at most max_loop_iterations times, then `else`."""
        interp = self
        name = target.id if type(target) is ast.Name else None
        body = self.block_of(node.body)
        orelse = self.block_of(node.orelse) if node.orelse else None
        assign = self.assign

        def loop(items, scope):
            n = 0
            limit = interp.max_loop
            vars = scope.vars  # noqa: A001
            for item in items:
                n += 1
                if n > limit:
                    raise interp._loop_limit(node)
                if name is not None:
                    vars[name] = item
                elif target is not None:
                    assign(target, item, scope, name_tensors=False)
                r = body(scope)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is CONTINUE:
                        continue
                    return r
            if orelse is not None:
                return orelse(scope)
            return None
        return loop


_MAKERS = {getattr(ast, name[3:]): method for name, method in vars(Compiler).items() if name.startswith("_c_")}
