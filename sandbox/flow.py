"""Control flow that unwinds or suspends: `try`/`except`/`else`/`finally`, `raise`, exception values,
`with` on engine and program context managers, and generators (`yield`, `yield from`).

The statements that can suspend are run by generator methods (`g_<Stmt>`): a generator function's body
runs as a Python generator that yields where the program yields; every statement without a `yield` in
it runs through the ordinary `exec_block`, so a generator costs nothing in code that does not suspend.
`try` and `with` are written as generator methods here (`ex_Try`/`ex_With` drive them when nothing in them
suspends); the compiled interpreter runs a `try` or `with` without a `yield` in it as closures that do the
same (compiled_flow.py).

Limits are never catchable: a `LimitError` (steps, time, loop, memory, output, call depth), the engine's
LimitExceeded and the host's RecursionError/MemoryError pass every `except` (also `except BaseException`
and a bare `except`), skip `finally` blocks and `__exit__` methods (program code that would run after
the limit), and end the run. A suspended generator that is closed or collected runs no program code.
"""

from __future__ import annotations

import ast

from .budgets import MAX_CALL_DEPTH
from .errors import LimitError, ProgramError, limit_error
from .files import CONTEXT_TYPES as FILE_CONTEXT_TYPES
from .objects import (
    BREAK,
    CONTINUE,
    EXCEPTIONS_BY_NAME,
    USER_EXCEPTION_TYPES,
    BuiltinType,
    Return,
    UserClass,
    UserInstance,
    user_exception_class,
)
from .stdlib_tools import CONTEXT_TYPES as TOOL_CONTEXT_TYPES

# errors the host raised that a program must not catch (its own `raise RecursionError()` it may)
_LIMIT_TYPE_NAMES = frozenset({"LimitExceeded", "RecursionError", "MemoryError"})
_GEN_STMTS = (ast.If, ast.For, ast.While, ast.Try, ast.With)
# what an exception of a class a program cannot name is caught as: its nearest base among these (never
# plain Exception: an unknown host error is not the program's to catch)
CATCHABLE_BASES = frozenset(EXCEPTIONS_BY_NAME.values()) - {Exception, BaseException, RecursionError}


def _drive(gen):
    """Run a g_ method whose block cannot suspend to its end; its result."""
    try:
        gen.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("internal error: a statement suspended outside a generator")  # pragma: no cover


class Flow:
    """Mixed into the Interpreter."""

    # ================================================================= exception values
    def catchable(self, pe) -> bool:
        """Whether a program's `except` may catch `pe`: never a limit, never a host error it cannot name."""
        if isinstance(pe, LimitError):
            return False
        if pe.value is not None:
            return True
        return pe.type_name not in _LIMIT_TYPE_NAMES and (pe.type_name in EXCEPTIONS_BY_NAME or pe.exc_class is not None)

    def exception_value(self, pe):
        """The exception object the program sees for `pe`: the one it raised, or a fresh builtin exception
        with the (scrubbed) message, never the interpreter's or engine's own exception object."""
        v = pe.value
        if v is None:
            cls = pe.exc_class or EXCEPTIONS_BY_NAME[pe.type_name]
            args = pe.exc_args if pe.exc_args is not None else (pe.message,)
            v = pe.value = cls(*args)
            v._fg_where = (pe.line, pe.column)
        return v

    def is_exception_class(self, c) -> bool:
        return (type(c) is BuiltinType and isinstance(c.pytype, type) and issubclass(c.pytype, BaseException)) or (
            type(c) is UserClass and c.exc_base is not None)

    def make_exception(self, v, what="exceptions must derive from BaseException"):
        """`raise v`: an exception class is instantiated, an exception instance is itself."""
        if self.is_exception_class(v):
            v = self.call(v, [], {})
        if not isinstance(v, BaseException):
            raise TypeError(what)
        return v

    def exception_error(self, value, node) -> ProgramError:
        """The ProgramError that carries a raised exception `value`: its type, message and, for one raised
        before, the line where it was first raised (as Python's traceback shows it)."""
        where = getattr(value, "_fg_where", None)
        if where is None:
            where = value._fg_where = (node.lineno, node.col_offset)
        pe = ProgramError(self.type_name(value), self.exception_str(value), where[0], where[1])
        pe.value = value
        return pe

    def exception_str(self, e) -> str:
        """`str(e)` as Python's: no arguments "", one its str (a KeyError's key: its repr), more the tuple."""
        args = e.args
        if not args:
            return ""
        if len(args) == 1:
            if isinstance(e, KeyError):
                return self.repr_value(args[0])
            return self.to_str(args[0])
        return self.repr_value(args)

    def exception_repr(self, e) -> str:
        args = e.args
        inner = self.repr_value(args[0]) if len(args) == 1 else self.repr_value(args)[1:-1] if args else ""
        return f"{self.type_name(e)}({inner})"

    def _matches(self, value, classinfo, node) -> bool:
        if type(classinfo) is tuple:
            return any(self._matches(value, c, node) for c in classinfo)
        if not self.is_exception_class(classinfo):
            raise ProgramError("TypeError", "catching classes that do not inherit from BaseException is not allowed",
                               node.lineno, node.col_offset)
        if type(classinfo) is BuiltinType:
            return isinstance(value, classinfo.pytype)
        return type(value) in USER_EXCEPTION_TYPES and classinfo in value.__dict__["_fg_cls"].mro

    def new_user_exception(self, cls, args, kwargs):
        """An instance of a program's exception class: a real exception of its builtin base (so `except
        ValueError` catches it), `args` set as Python's `BaseException.__new__` sets them."""
        E = user_exception_class(cls.exc_base)
        obj = E.__new__(E, *args)
        obj.__dict__["_fg_cls"] = cls
        _, init = cls.lookup("__init__")
        if init is not None:
            r = self.call(init, [obj, *args], kwargs)
            if r is not None:
                raise TypeError(f"__init__() should return None, not '{self.type_name(r)}'")
        else:
            if kwargs:
                raise TypeError(f"{cls.name}() takes no keyword arguments")
            BaseException.__init__(obj, *args)
        return obj

    def _user_exception_attr(self, obj, name):
        d = obj.__dict__
        if name in d:  # (`_fg_cls`, `_fg_where`: private_attributes.check_private_attribute refused them)
            return d[name]
        ucls = d["_fg_cls"]
        c, v = ucls.lookup(name)
        if c is not None:
            return self.class_attribute(v, obj, ucls, name)
        if name == "args":
            return obj.args
        raise AttributeError(f"'{ucls.name}' object has no attribute '{name}'")

    # ================================================================= raise, assert
    def ex_Raise(self, node, scope):
        if node.exc is None:
            pe = getattr(scope, "handling", None)
            if pe is None:
                raise ProgramError("RuntimeError", "No active exception to reraise", node.lineno, node.col_offset)
            raise pe
        value = self.make_exception(self.ev(node.exc, scope))
        if node.cause is not None:
            cause = self.ev(node.cause, scope)
            if cause is not None:
                self.make_exception(cause, "exception causes must derive from BaseException")
        raise self.exception_error(value, node)

    def ex_Assert(self, node, scope):
        if not self.ev(node.test, scope):
            value = AssertionError() if node.msg is None else AssertionError(self.ev(node.msg, scope))
            raise self.exception_error(value, node)

    # ================================================================= try
    def ex_Try(self, node, scope):
        return _drive(self.g_Try(node, scope, None))

    def _caught(self, e, node):
        """The ProgramError for an exception that reached a `try`, or a re-raise of a limit."""
        pe = self._at(e, node)
        if not self.catchable(pe):
            raise pe
        return pe

    def g_Try(self, node, scope, yields):
        pending = None  # the error to re-raise once the finally block has run
        try:
            r = yield from self.g_block(node.body, scope, yields)
        except Exception as e:
            pe = self._caught(e, node)
            r = None
            try:
                value = self.exception_value(pe)
                handler = None
                for h in node.handlers:
                    if h.type is None or self._matches(value, self.ev(h.type, scope), h):
                        handler = h
                        break
                if handler is None:
                    pending = pe
                else:
                    r = yield from self._g_handler(handler, pe, value, scope, yields)
            except Exception as e2:
                pending = self._caught(e2, node)
        else:
            if node.orelse and r is None:
                try:
                    r = yield from self.g_block(node.orelse, scope, yields)
                except Exception as e2:
                    pending = self._caught(e2, node)
        if node.finalbody:
            fr = yield from self.g_block(node.finalbody, scope, yields)
            if fr is not None:
                return fr  # return/break/continue in `finally` drops the pending error, as in Python
        if pending is not None:
            raise pending
        return r

    def _g_handler(self, handler, pe, value, scope, yields):
        name = handler.name
        if name is not None:
            scope.vars[name] = value
        outer = getattr(scope, "handling", None)
        scope.handling = pe
        try:
            return (yield from self.g_block(handler.body, scope, yields))
        finally:
            scope.handling = outer
            if name is not None:
                scope.vars.pop(name, None)  # Python deletes the name at the end of the handler

    # ================================================================= with
    def ex_With(self, node, scope):
        return self._with(node.items, 0, node.body, scope)

    def _with(self, items, i, body, scope):
        """`_g_with` for a block that cannot suspend, without a generator (`with torch.no_grad():` in a loop)."""
        if i == len(items):
            return self.exec_block(body, scope)
        item = items[i]
        cm = self.ev(item.context_expr, scope)
        if self._is_user_cm(cm):
            return _drive(self._g_user_with(cm, item, items, i, body, scope, None))
        t = self._engine_cm_type(cm)
        value = t.__enter__(cm)
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, scope)
        try:
            r = self._with(items, i + 1, body, scope)
        except Exception as e:
            t.__exit__(cm, type(e), e, None)  # the engine's grad mode: no program code runs
            raise
        t.__exit__(cm, None, None, None)
        return r

    def _is_user_cm(self, cm):
        t = type(cm)
        return t is UserInstance or t in USER_EXCEPTION_TYPES or isinstance(cm, self.B.UserModule) or \
            t is self.B.UserDataset

    def _engine_cm_type(self, cm):
        """The class of an engine context manager (a grad mode), or the program's TypeError."""
        t = type(cm)
        if t in FILE_CONTEXT_TYPES or t in TOOL_CONTEXT_TYPES:  # the run's open files, tqdm bars: no program code
            return t
        if not (t.__module__ + ".").startswith(self.B.prefix) or not hasattr(t, "__enter__"):
            raise TypeError(f"'{self.type_name(cm)}' object does not support the context manager protocol")
        return t

    def _g_with(self, items, i, body, scope, yields):
        if i == len(items):
            return (yield from self.g_block(body, scope, yields))
        item = items[i]
        cm = self.ev(item.context_expr, scope)
        if self._is_user_cm(cm):
            return (yield from self._g_user_with(cm, item, items, i, body, scope, yields))
        t = self._engine_cm_type(cm)
        value = t.__enter__(cm)
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, scope)
        try:
            r = yield from self._g_with(items, i + 1, body, scope, yields)
        except Exception as e:
            t.__exit__(cm, type(e), e, None)  # the engine's grad mode: no program code runs
            raise
        except GeneratorExit:
            raise  # a closed generator: the grad mode is not the program's to restore any more
        t.__exit__(cm, None, None, None)
        return r

    def _g_user_with(self, cm, item, items, i, body, scope, yields):
        """`with` on an instance of a program class: its `__enter__`, then `__exit__(type, value, None)`;
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
            r = yield from self._g_with(items, i + 1, body, scope, yields)
        except Exception as e:
            pe = self._caught(e, item.context_expr)
            exc = self.exception_value(pe)
            if self.call(exit_, [self.type_of(exc), exc, None], {}):
                return None
            raise pe from None
        self.call(exit_, [None, None, None], {})
        return r

    def _has_method(self, obj, name):
        ucls = obj.cls if type(obj) is UserInstance else obj.__dict__["_fg_cls"]
        c, _ = ucls.lookup(name)
        return c is not None

    # ================================================================= blocks that can suspend
    def g_block(self, body, scope, yields):
        """`exec_block` as a generator: statements in `yields` (those with a `yield` in them) suspend."""
        if not yields:
            return self.exec_block(body, scope)
        rec = self.rec
        exec_block = self.exec_block
        for stmt in body:
            if stmt not in yields:
                r = exec_block((stmt,), scope)
            else:
                self.steps += 1
                if self.steps >= self.next_check:
                    self._check(stmt)
                if rec is not None:
                    rec.line = stmt.lineno
                try:
                    r = yield from self._g_stmt(stmt, scope, yields)
                except Exception as e:
                    raise self._at(e, stmt) from None
            if r is not None:
                return r
        return None
        yield  # noqa: B901 - unreachable: makes this a generator

    def _g_stmt(self, stmt, scope, yields):
        t = type(stmt)
        if t is ast.Expr:
            yield from self._g_yield(stmt.value, scope)
            return None
        if t is ast.Assign or t is ast.AnnAssign:
            value = yield from self._g_yield(stmt.value, scope)
            for target in (stmt.targets if t is ast.Assign else (stmt.target,)):
                self.assign(target, value, scope)
            return None
        if t is ast.If:
            block = stmt.body if self.ev(stmt.test, scope) else stmt.orelse
            return (yield from self.g_block(block, scope, yields))
        if t is ast.For or t is ast.While:
            return (yield from self._g_loop(stmt, scope, yields))
        if t is ast.Try:
            return (yield from self.g_Try(stmt, scope, yields))
        if t is ast.With:
            return (yield from self._g_with(stmt.items, 0, stmt.body, scope, yields))
        raise ProgramError("NotImplementedError", "'yield' is not supported in this statement in flowgrad programs",
                           stmt.lineno, stmt.col_offset)  # pragma: no cover - the checks refuse it first

    def _g_yield(self, node, scope):
        """`yield v` (the value sent in) or `yield from it` (the sub-generator's return value)."""
        if type(node) is ast.Yield:
            return (yield (None if node.value is None else self.ev(node.value, scope)))
        source = self.ev(node.value, scope)
        if type(source) is UserGenerator:
            sent = None
            while True:
                try:
                    v = source.send(sent)
                except StopIteration as stop:
                    return stop.value
                sent = yield v
        for v in self.iterate(source):
            yield v
        return None

    def _g_loop(self, node, scope, yields):
        if type(node) is ast.For:
            items = self.iterate(self.ev(node.iter, scope))
            target = node.target
        else:
            items = None
            target = None
        n = 0
        limit = self.max_loop
        while True:
            if items is not None:
                try:
                    item = next(items)
                except StopIteration:
                    break
            elif not self.ev(node.test, scope):
                break
            n += 1
            if n > limit:
                raise self._loop_limit(node)
            if target is not None:
                self.assign(target, item, scope, name_tensors=False)
            r = yield from self.g_block(node.body, scope, yields)
            if r is not None:
                if r is BREAK:
                    return None
                if r is CONTINUE:
                    continue
                return r
        if node.orelse:
            return (yield from self.g_block(node.orelse, scope, yields))
        return None

    # ================================================================= generator functions
    def yield_statements(self, fnode):
        """The statements of a function's body that contain a `yield` (not in nested functions or
        classes); empty for an ordinary function. Cached per function node."""
        cache = self._yield_cache
        found = cache.get(fnode)
        if found is None:
            found = set()
            if type(fnode) is not ast.Lambda:
                for stmt in fnode.body:
                    _mark_yields(stmt, found)
            found = frozenset(found)
            cache[fnode] = found
        return found

    def new_generator(self, f, scope, yields):
        self.alloc(GENERATOR_ITEMS, "generator")
        return UserGenerator(self, f, self._generator_body(f, scope, yields))

    def _generator_body(self, f, scope, yields):
        try:
            r = yield from self.g_block(f.body, scope, yields)
        except ProgramError as pe:
            if pe.type_name == "StopIteration" and self.catchable(pe):
                raise ProgramError("RuntimeError", "generator raised StopIteration", pe.line, pe.column) from None
            raise
        return r.value if type(r) is Return else None

    def resume(self, g, sent, throw=None):
        """Run generator `g` to its next `yield` (one call level); StopIteration when it has finished."""
        if g.running:
            raise ValueError("generator already executing")
        self.depth += 1
        g.running = True
        try:
            if self.depth > MAX_CALL_DEPTH:
                raise limit_error("maximum recursion depth exceeded", None, f"{MAX_CALL_DEPTH} nested calls",
                                  type_name="RecursionError")
            self.steps += 1
            if self.steps >= self.next_check:
                self._check(g.func.node)
            rec = self.rec
            line = rec.line if rec is not None else None
            try:
                if g.grad_mode is not None:
                    with self.grad_mode(g.grad_mode):
                        return g.gen.send(sent)
                return g.gen.send(sent)
            finally:
                if rec is not None:
                    rec.line = line
        finally:
            g.running = False
            self.depth -= 1


# what one generator counts against the run's item budget: its frames and scope, about 1 kB (8 bytes an item)
GENERATOR_ITEMS = 128


def _mark_yields(node, found) -> bool:
    """Whether statement `node` contains a yield (outside nested scopes); adds such statements to `found`."""
    t = type(node)
    if t is ast.FunctionDef or t is ast.ClassDef or t is ast.AsyncFunctionDef:
        return False
    has = False
    if t in _GEN_STMTS:
        for block in _blocks(node):
            for s in block:
                if _mark_yields(s, found):
                    has = True
        for child in _heads(node):
            if _expr_yields(child):
                has = True
    elif _expr_yields(node):
        has = True
    if has:
        found.add(node)
    return has


def _blocks(node):
    t = type(node)
    if t is ast.Try:
        return [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]
    if t is ast.With:
        return [node.body]
    return [node.body, node.orelse]


def _heads(node):
    """The expressions of a compound statement outside its blocks (tests, iterables, context managers)."""
    t = type(node)
    if t is ast.If or t is ast.While:
        return [node.test]
    if t is ast.For:
        return [node.iter, node.target]
    if t is ast.With:
        return [i.context_expr for i in node.items]
    if t is ast.Try:
        return [h.type for h in node.handlers if h.type is not None]
    return []


def _expr_yields(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return True
        if t is ast.Lambda or t is ast.FunctionDef or t is ast.ClassDef:
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


class UserGenerator:
    """A generator made by calling a program's generator function: `next()`, `for`, `send`, `close`.
    Resuming it is a call (one level of the call-depth limit, a step); closing it runs no program code."""

    __slots__ = ("interp", "func", "gen", "running", "name", "grad_mode")

    def __init__(self, interp, func, gen):
        self.interp = interp
        self.func = func
        self.gen = gen
        self.running = False
        self.name = func.name
        self.grad_mode = None  # made by a `@torch.no_grad()` generator function: each step in that mode

    def __iter__(self):
        return self

    def __next__(self):
        return self.interp.resume(self, None)

    def send(self, value):
        return self.interp.resume(self, value)

    def close(self):
        self.gen.close()

    def __repr__(self):
        return f"<generator object {self.func.qualname}>"

    __str__ = __repr__


UserGenerator.__name__ = UserGenerator.__qualname__ = "generator"
