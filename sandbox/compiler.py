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

from .compiled_calls import CompiledCalls
from .compiled_comprehensions import CompiledComprehensions
from .compiled_expressions import _INT_SAFE_OPS, _NUMBER_OPS, CompiledExpressions, scalar_key_items
from .compiled_flow import CompiledFlow
from .compiled_text import CompiledText
from .expressions import _BINOPS, _BIT_OPS, _INPLACE
from .objects import BREAK, CONTINUE, PRIMITIVES, SCALARS, Return

SIZED_LOOPS = (range, list, tuple, dict, str)  # a `for` over these knows how many iterations it has


class Compiler(CompiledExpressions, CompiledText, CompiledCalls, CompiledComprehensions, CompiledFlow):
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
        # an expression statement runs its expression's closure directly, its value dropped here (`ends` False)
        stmts = tuple((stmt, self._statement_code(stmt), type(stmt) is not ast.Expr) for stmt in body)
        at = self._at
        check = self._check

        if len(stmts) == 1:
            ((stmt, code, ends),) = stmts
            lineno = stmt.lineno

            def run_one(scope):
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(stmt)
                if rec is not None:
                    rec.line = lineno
                try:
                    r = code(scope)
                except Exception as e:
                    raise at(e, stmt) from None
                return r if ends else None
            return run_one

        if len(stmts) == 2:
            return self._two_statements(stmts)
        lines = tuple((stmt, code, stmt.lineno, ends) for stmt, code, ends in stmts)

        def run_block(scope):
            for stmt, code, lineno, ends in lines:
                interp.steps += 1
                if interp.steps >= interp.next_check:
                    check(stmt)
                if rec is not None:
                    rec.line = lineno
                try:
                    r = code(scope)
                except Exception as e:
                    raise at(e, stmt) from None
                if r is not None and ends:
                    return r
            return None
        return run_block

    def _two_statements(self, stmts):
        """`run_block` unrolled for a block of two statements (a loop body that updates and prints, ...)."""
        interp = self
        rec = self.rec
        at = self._at
        check = self._check
        (stmt1, code1, ends1), (stmt2, code2, ends2) = stmts
        line1 = stmt1.lineno
        line2 = stmt2.lineno

        def run_two(scope):
            interp.steps += 1
            if interp.steps >= interp.next_check:
                check(stmt1)
            if rec is not None:
                rec.line = line1
            try:
                r = code1(scope)
            except Exception as e:
                raise at(e, stmt1) from None
            if r is not None and ends1:
                return r
            interp.steps += 1
            if interp.steps >= interp.next_check:
                check(stmt2)
            if rec is not None:
                rec.line = line2
            try:
                r = code2(scope)
            except Exception as e:
                raise at(e, stmt2) from None
            return r if ends2 else None
        return run_two

    def _statement_code(self, stmt):
        """What a block runs for `stmt`: an expression statement's expression (the block drops its value)."""
        if type(stmt) is ast.Expr:
            return self.code_of(stmt.value)
        return self.code_of(stmt)

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
                if rec is not None and type(value) not in PRIMITIVES and isinstance(value, nameable):
                    rec.name_tensor(value, name)
            return assign_name
        if len(node.targets) == 1 and self._target_names(node.targets[0]) is not None:
            return self._assign_names(node, value_code)
        if len(node.targets) == 1 and type(node.targets[0]) in (ast.Attribute, ast.Subscript):
            return self._assign_into(node.targets[0], value_code)
        targets = tuple((t, t.id if type(t) is ast.Name else None) for t in node.targets)

        def assign_targets(scope):
            value = value_code(scope)
            for target, name in targets:
                if name is not None:
                    scope.vars[name] = value
                    if rec is not None and type(value) not in PRIMITIVES and isinstance(value, nameable):
                        rec.name_tensor(value, name)
                else:
                    assign(target, value, scope)
        return assign_targets

    def _assign_into(self, target, value_code):
        """`obj.attr = value` / `obj[key] = value`: `assign`'s branch for the target, its parts compiled (the value
        first, then the object, then the key, as `assign` evaluates them)."""
        obj_code = self.code_of(target.value)
        if type(target) is ast.Attribute:
            attr = target.attr
            set_attribute = self.set_attribute

            def assign_attribute(scope):
                value = value_code(scope)
                set_attribute(obj_code(scope), attr, value)
            return assign_attribute
        key_code = self.code_of(target.slice)
        set_item = self.set_item

        def assign_item(scope):
            value = value_code(scope)
            obj = obj_code(scope)
            set_item(obj, key_code(scope), value)
        return assign_item

    def _assign_names(self, node, value_code):
        """`a, b = value`: a list or tuple of as many items unpacked inline (as `_unpack` does), else `assign`."""
        target = node.targets[0]
        names = self._target_names(target)
        width = len(names)
        rec = self.rec
        nameable = self.nameable_types
        assign = self.assign

        def assign_names(scope):
            value = value_code(scope)
            if (type(value) is tuple or type(value) is list) and len(value) == width:
                d = scope.vars
                for name, v in zip(names, value):
                    d[name] = v
                    if rec is not None and type(v) not in PRIMITIVES and isinstance(v, nameable):
                        rec.name_tensor(v, name)
            else:
                assign(target, value, scope)
        return assign_names

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
        value_name = self._read_name(node.value)
        is_constant = type(node.value) is ast.Constant  # `n += 1`: the number itself, no closure call
        constant = node.value.value if is_constant else None
        op = type(node.op)
        fn = _BINOPS[op]
        lookup = self.lookup
        binop = self.binop
        rec = self.rec
        nameable = self.nameable_types
        max_bits = self.max_bits
        int_safe = op in _INT_SAFE_OPS
        float_ok = op in _NUMBER_OPS
        tensor_ok = op not in _BIT_OPS  # (`&=` & co. on tensors: binop checks their broadcast first)
        inplace_fn = _INPLACE[op]
        T = self.tensor_type
        P = self.parameter_type
        binop_result = self._binop_result
        interp = self
        at = self._at

        def augmented(scope):
            d = scope.vars
            cur = d[name] if name in d else lookup(name, scope, target)
            b = constant if is_constant else d[value_name] if value_name in d else value_code(scope)
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
            elif tensor_ok and (((ta is T or ta is P) and (tb is T or tb is P or tb in SCALARS))
                                or ((tb is T or tb is P) and ta in SCALARS)):
                # tensors and numbers (`a -= lr * g`): binop's tensor branch, its `check_data` inlined
                if (cur._data.size if ta is T or ta is P else 0) + (b._data.size if tb is T or tb is P else 0) \
                        <= interp.max_seq:
                    try:
                        value = inplace_fn(cur, b)
                    except Exception as e:
                        raise at(e, node) from None
                    if type(value) is not T:
                        value = binop_result(value, True, node)
                    scope.vars[name] = value  # (whatever the operator gave, None too: it ran once)
                    if rec is not None and type(value) not in PRIMITIVES and isinstance(value, nameable):
                        rec.name_tensor(value, name)
                    return
            if value is None:
                value = binop(op, cur, b, node, inplace=True)
            scope.vars[name] = value
            if rec is not None and type(value) not in PRIMITIVES and isinstance(value, nameable):
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
        interp = self
        at = self._at
        T = self.tensor_type
        P = self.parameter_type
        inplace_fn = _INPLACE[op]
        tensor_ok = op not in _BIT_OPS  # (`&=` & co. on tensors: binop checks their broadcast first)

        def augmented_item(scope):
            obj = obj_code(scope)
            key = key_code(scope)
            t = type(obj)
            if tensor_ok and (t is T or t is P):
                # `N[i, j] += 1`: get_item's, binop's and set_item's tensor branches, their check_data inlined
                key_items = scalar_key_items(key)
                max_seq = interp.max_seq
                if key_items <= max_seq:
                    cur = obj[key]
                    value = value_code(scope)
                    tc = type(cur)
                    tv = type(value)
                    value_tensor = tv is T or tv is P
                    if (tc is T or tc is P) and (value_tensor or tv in SCALARS) \
                            and cur.numel() + (value.numel() if value_tensor else 0) <= max_seq:
                        try:
                            r = inplace_fn(cur, value)
                        except Exception as e:
                            raise at(e, node) from None
                        if type(r) is not T:
                            r = interp._binop_result(r, True, node)
                        if type(r) is T and key_items + r.numel() <= max_seq:
                            obj[key] = r
                        else:
                            set_item(obj, key, r)
                        return
                    set_item(obj, key, binop(op, cur, value, node, inplace=True))
                    return
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
            items = iterate(v)
            return run_loop(node, total, lambda state: loop(items, scope, state))
        return for_statement

    def _c_While(self, node):
        test = self.code_of(node.test)
        run_loop = self.run_loop
        loop = self._compiled_loop(node, None)

        def iterations(scope):
            while test(scope):
                yield None

        def while_statement(scope):
            return run_loop(node, None, lambda state: loop(iterations(scope), scope, state))
        return while_statement

    @staticmethod
    def _target_names(target):
        """The names of a target that is a tuple or list of plain names (`for i, x in ...`, `a, b = ...`), else
        None: a list or tuple of that many items is then unpacked inline, anything else by `assign`."""
        if type(target) in (ast.Tuple, ast.List) and target.elts and all(type(e) is ast.Name for e in target.elts):
            return tuple(e.id for e in target.elts)
        return None

    def _compiled_loop(self, node, target):
        """`Interpreter._loop`: the body once per item, at most max_loop_iterations times, then `else`."""
        interp = self
        name = target.id if type(target) is ast.Name else None
        names = self._target_names(target)
        width = len(names) if names is not None else -1
        body = self.block_of(node.body)
        orelse = self.block_of(node.orelse) if node.orelse else None
        assign = self.assign

        def loop(items, scope, counted):
            n = 0
            limit = interp.max_loop
            vars = scope.vars  # noqa: A001
            for item in items:
                n += 1
                if counted is not None:  # the outermost loop: how far it got, should the time limit stop it
                    counted[2] = n
                if n > limit:
                    raise interp._loop_limit(node)
                if name is not None:
                    vars[name] = item
                elif names is not None and (type(item) is tuple or type(item) is list) and len(item) == width:
                    for n_, v in zip(names, item):  # (`_unpack`'s loop, with no other check to make)
                        vars[n_] = v
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


_MAKERS = {getattr(ast, name[3:]): method
           for cls in (CompiledExpressions, CompiledText, CompiledComprehensions, CompiledFlow, Compiler)
           for name, method in vars(cls).items() if name.startswith("_c_")}
