"""The `try` and `with` closures of the compiled interpreter (`compiler.Compiler` mixes them in): what
`Flow.g_Try` and `Flow.ex_With` do for a statement that cannot suspend, without a Python generator per run
of it. Statements with a `yield` inside still run through `Flow`'s generator methods."""

from __future__ import annotations


class CompiledFlow:
    """Mixed into the Compiler: `_c_Try`, `_c_Assert` and `_c_With`."""

    def _c_Try(self, node):
        body = self.block_of(node.body)
        orelse = self.block_of(node.orelse) if node.orelse else None
        finalbody = self.block_of(node.finalbody) if node.finalbody else None
        handlers = tuple(self._compiled_handler(h) for h in node.handlers)
        caught = self._caught
        exception_value = self.exception_value
        matches = self._matches

        def try_statement(scope):
            pending = None  # the error to re-raise once the finally block has run
            try:
                r = body(scope)
            except Exception as e:
                pe = caught(e, node)  # (a limit is re-raised here: no handler, no finally block runs)
                r = None
                try:
                    value = exception_value(pe)
                    for h, type_code, run_handler in handlers:
                        if type_code is None or matches(value, type_code(scope), h):
                            r = run_handler(pe, value, scope)
                            break
                    else:
                        pending = pe
                except Exception as e2:
                    pending = caught(e2, node)
            else:
                if orelse is not None and r is None:
                    try:
                        r = orelse(scope)
                    except Exception as e2:
                        pending = caught(e2, node)
            if finalbody is not None:
                fr = finalbody(scope)
                if fr is not None:
                    return fr  # return/break/continue in `finally` drops the pending error, as in Python
            if pending is not None:
                raise pending
            return r
        return try_statement

    def _compiled_handler(self, handler):
        """(handler, its type's closure or None, `run(pe, value, scope)`): `Flow._g_handler` as a closure."""
        type_code = self.code_of(handler.type) if handler.type is not None else None
        block = self.block_of(handler.body)
        name = handler.name

        def run_handler(pe, value, scope):
            if name is not None:
                scope.vars[name] = value
            outer = getattr(scope, "handling", None)
            scope.handling = pe  # what a bare `raise` in the block re-raises
            try:
                return block(scope)
            finally:
                scope.handling = outer
                if name is not None:
                    scope.vars.pop(name, None)  # Python deletes the name at the end of the handler
        return handler, type_code, run_handler

    def _c_Assert(self, node):
        test = self.code_of(node.test)
        message = self.code_of(node.msg) if node.msg is not None else None
        exception_error = self.exception_error

        def assert_statement(scope):
            if not test(scope):
                value = AssertionError() if message is None else AssertionError(message(scope))
                raise exception_error(value, node)
        return assert_statement

    def _c_With(self, node):
        run = self.block_of(node.body)
        for item in reversed(node.items):  # `with a, b:` is `with a:` around `with b:`
            run = self._compiled_with_item(item, run)
        return run

    def _compiled_with_item(self, item, inner):
        """`Flow._with` for one item around `inner` (the next items' closure, or the body's)."""
        context = self.code_of(item.context_expr)
        target = item.optional_vars
        assign = self.assign
        is_user_cm = self._is_user_cm
        engine_cm_type = self._engine_cm_type
        user_with = self._user_with
        engine_types = set()  # types `_engine_cm_type` accepted and `_is_user_cm` did not claim: both decide by type

        def with_item(scope):
            cm = context(scope)
            t = type(cm)
            if t not in engine_types:
                if is_user_cm(cm):
                    return user_with(cm, item, inner, scope)
                engine_types.add(engine_cm_type(cm))  # (its TypeError for anything else)
            value = t.__enter__(cm)
            if target is not None:
                assign(target, value, scope)
            try:
                r = inner(scope)
            except Exception as e:
                t.__exit__(cm, type(e), e, None)  # the engine's grad mode: no program code runs
                raise
            t.__exit__(cm, None, None, None)
            return r
        return with_item

    def _user_with(self, cm, item, inner, scope):
        """`Flow._g_user_with` around a closure: the program's `__enter__`, then `__exit__(type, value, None)`;
        a true result of `__exit__` swallows the error (never a limit: `__exit__` does not run then)."""
        enter = self.get_attribute(cm, "__enter__") if self._has_method(cm, "__enter__") else None
        exit_ = self.get_attribute(cm, "__exit__") if self._has_method(cm, "__exit__") else None
        if enter is None or exit_ is None:
            missing = "__enter__" if enter is None else "__exit__"
            raise TypeError(f"'{self.type_name(cm)}' object does not support the context manager protocol "
                            f"(missed {missing} method)")
        value = self.call(enter, [], {})
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, scope)
        try:
            r = inner(scope)
        except Exception as e:
            pe = self._caught(e, item.context_expr)
            exc = self.exception_value(pe)
            if self.call(exit_, [self.type_of(exc), exc, None], {}):
                return None
            raise pe from None
        self.call(exit_, [None, None, None], {})
        return r

