"""The sandboxed interpreter: walks the checked syntax tree under allowlists.

User text never reaches `eval`, `exec` or `compile`. Statements and expressions are evaluated
by methods dispatched on the node type; every value a program can touch is either a plain Python
value, an engine object reached through the allowlists in `policy`, or an interpreter object
from `objects`. Limits (steps, loop iterations, time, output, integer size, sequence size,
recursion) are checked here; tensor sizes and graph nodes inside the engine (`engine.limits`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import math
import operator
import random as _random
import re
import string
import sys
import time
import types
import warnings
from dataclasses import dataclass, field

from . import policy
from .backend import load_backend
from .checks import parse_program
from .errors import LimitError, ProgramError, scrub
from .objects import (
    CLASS,
    COMP,
    FUNC,
    SUPER,
    BoundMethod,
    Builtin,
    BuiltinType,
    ModuleProxy,
    Scope,
    Shown,
    SuperProxy,
    TypeView,
    UserClass,
    UserFunction,
    UserInstance,
)


@dataclass
class SandboxLimits:
    max_source_chars: int = 4096
    max_ast_depth: int = 50
    max_ast_nodes: int = 2000
    max_loop_iterations: int = 10_000
    max_steps: int = 1_000_000
    max_int_bits: int = 4096
    max_output_bytes: int = 65536
    time_limit_s: float = 2.0
    max_tensor_elements: int = 100_000
    max_live_elements: int = 1_000_000
    max_graph_nodes: int = 10_000


@dataclass
class RunOutcome:
    stdout: str
    error: dict | None
    globals: dict = field(default_factory=dict)


MAX_CALL_DEPTH = 100  # nested user function calls
MAX_FORMAT_WIDTH = 1000  # width/precision in format specs
MAX_ENGINE_STRING = 200  # characters of a string handed to the engine (a module or parameter name, ...)
MAX_MODULE_LINKS = 1000  # modules attached to modules per run
ALLOC_FACTOR = 10  # a run may create at most this many times max_live_elements list/string items in total
TIME_CHECK_EVERY = 16  # steps between clock reads (an engine op takes at most a few tens of ms)
ENGINE_MODULE = "engine"

BREAK = object()
CONTINUE = object()


class _Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


_MISSING = object()
_NoneType = type(None)
_PRIMITIVES = (int, float, bool, str, _NoneType, complex)
_PRIMITIVE_TYPES = frozenset(_PRIMITIVES)
_SCALARS = frozenset({int, float, bool, _NoneType, complex, slice, type(Ellipsis)})
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_SEQ_TYPES = frozenset({str, list, tuple, bytes})
_INT_TYPES = frozenset({int, bool})
_SUBSCRIPTABLE = frozenset({list, tuple, str, dict, range, bytes})
_FORBIDDEN_BUILTINS = frozenset("""eval exec compile open getattr setattr delattr hasattr globals locals vars
dir input breakpoint help memoryview object id hash exit quit __import__ __build_class__ classmethod staticmethod
property issubclass bytearray""".split())

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

_SPEC_RE = re.compile(r"(?:.?[<>=^])?[+\- ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[bcdeEfFgGnosxX%]?\Z", re.S)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.S)
_formatter_parse = string.Formatter().parse


class Interpreter:
    def __init__(self, limits: SandboxLimits, recorder=None, on_print=None, backend=None):
        self.limits = limits
        self.rec = recorder
        self.on_print = on_print
        self.B = backend
        self.max_steps = limits.max_steps
        self.max_loop = limits.max_loop_iterations
        self.max_bits = limits.max_int_bits
        self.max_seq = limits.max_live_elements
        self.max_out = limits.max_output_bytes
        self.steps = 0
        self.next_check = min(TIME_CHECK_EVERY, self.max_steps + 1)
        self.deadline = None
        self.depth = 0
        self.out: list[str] = []
        self.out_bytes = 0
        self.allocated = 0
        self.links = 0
        self.imported: dict[str, object] = {}
        self.globals: dict[str, object] = {}
        self.tensor_type = backend.Tensor if backend is not None else ()
        # What an assignment names for the recorder: tensors, and modules (which name their parameters).
        self.nameable_types = (backend.Tensor, backend.Module) if backend is not None else ()
        self._attr_cache: dict[type, frozenset] = {}
        self._ev = {}
        self._ex = {}
        for name in dir(self):
            if name.startswith("ev_"):
                self._ev[getattr(ast, name[3:])] = getattr(self, name)
            elif name.startswith("ex_"):
                self._ex[getattr(ast, name[3:])] = getattr(self, name)
        self.builtins = self._make_builtins()
        for v in self.builtins.values():
            if type(v) in (Builtin, BuiltinType) and v is not SUPER:
                v.interp = self
        if backend is not None:
            for t in (backend.Tensor, backend.Parameter):
                if t is not None:
                    _SPECIAL[(t, "tolist")] = _tensor_tolist

    # ================================================================= running
    def run(self, source: str) -> RunOutcome:
        error = None
        try:
            tree = parse_program(source, self.limits)
            self.deadline = time.monotonic() + self.limits.time_limit_s
            with self._engine_context():
                scope = Scope(self.globals)
                r = self.exec_block(tree.body, scope)
                del r
        except ProgramError as e:
            error = e.to_dict()
        except RecursionError:
            error = {"type": "RecursionError", "message": "maximum recursion depth exceeded", "line": None,
                     "column": None}
        except MemoryError:
            error = {"type": "MemoryError", "message": "out of memory", "line": None, "column": None}
        except Exception as e:  # an engine limit raised outside any statement, or an interpreter bug
            error = {"type": type(e).__name__, "message": scrub(str(e)), "line": None, "column": None}
        return RunOutcome(stdout="".join(self.out), error=error, globals=self._user_globals())

    @contextlib.contextmanager
    def _engine_context(self):
        B = self.B
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 8000))
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            try:
                import numpy as np

                stack.enter_context(np.errstate(all="ignore"))
            except ImportError:  # pragma: no cover
                pass
            if B is not None:
                prev_recorder = getattr(B.state, "recorder", None) if B.state is not None else None
                if B.state is not None and hasattr(B.state, "grad_enabled"):
                    # torch.set_grad_enabled(False) as a plain call outlives the program: not its caller's code
                    stack.callback(setattr, B.state, "grad_enabled", B.state.grad_enabled)
                if B.reset_run_state is not None:
                    B.reset_run_state()
                if self.rec is not None and B.state is not None:
                    stack.callback(setattr, B.state, "recorder", prev_recorder)
                    if B.state.recorder is not self.rec and hasattr(self.rec, "__enter__"):
                        stack.enter_context(self.rec)
                if B.limited is not None:
                    stack.enter_context(B.limited(max_tensor_elements=self.limits.max_tensor_elements,
                                                  max_live_elements=self.limits.max_live_elements,
                                                  max_graph_nodes=self.limits.max_graph_nodes))
            try:
                yield
            finally:
                sys.setrecursionlimit(old_limit)

    def _user_globals(self):
        out = {}
        imported = self.imported
        for k, v in self.globals.items():
            if type(v) is ModuleProxy:
                continue
            if k in imported and imported[k] is v:
                continue
            out[k] = v
        return out

    # ================================================================= errors and limits
    def _wrap(self, e: BaseException, node) -> ProgramError:
        if isinstance(e, ProgramError):
            return e
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        B = self.B
        if B is not None and B.LimitExceeded is not None and isinstance(e, B.LimitExceeded):
            return ProgramError("LimitExceeded", scrub(str(e)), line, col)
        if isinstance(e, RecursionError):
            return ProgramError("RecursionError", "maximum recursion depth exceeded", line, col)
        if isinstance(e, MemoryError):
            return ProgramError("MemoryError", "out of memory", line, col)
        try:
            if isinstance(e, KeyError) and len(e.args) == 1 and type(e.args[0]) in _PRIMITIVE_TYPES:
                key = e.args[0]
                msg = repr(key[:200] + "…" if type(key) is str and len(key) > 200 else key)
            elif isinstance(e, KeyError) and len(e.args) == 1:  # a tuple key: str(e) would repr it in C, unbounded
                try:
                    msg = self.repr_value(e.args[0])
                except LimitError:
                    msg = "<a key too long to show>"
            else:
                msg = str(e)
        except Exception:  # a message that cannot be rendered (too large, ...)
            msg = type(e).__name__
        return ProgramError(type(e).__name__, scrub(msg), line, col)

    def _check(self, node):
        """Step budget and clock, every TIME_CHECK_EVERY steps."""
        if self.steps > self.max_steps:
            raise LimitError(f"program ran more than {self.max_steps:,} steps (limit max_steps = {self.max_steps:,})",
                             node.lineno, node.col_offset)
        self.next_check = min(self.steps + TIME_CHECK_EVERY, self.max_steps + 1)
        if time.monotonic() > self.deadline:
            t = self.limits.time_limit_s
            raise LimitError(f"program ran longer than {t:g} s (limit time_limit_s = {t:g})",
                             node.lineno, node.col_offset)

    def _check_time(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            t = self.limits.time_limit_s
            raise LimitError(f"program ran longer than {t:g} s (limit time_limit_s = {t:g})")

    def _loop_limit(self, node):
        n = self.max_loop
        return LimitError(f"loop ran more than {n:,} iterations (limit max_loop_iterations = {n:,})",
                          node.lineno, node.col_offset)

    def alloc(self, n, what="sequence"):
        """Account for a list/string of n items about to be created: per object and per run."""
        if n > self.max_seq:
            raise self._seq_limit(n, what)
        if n:  # every size counts: 10**5 lists of 4,095 items are 3 GB as well
            self.allocated += n
            if self.allocated > ALLOC_FACTOR * self.max_seq:
                total = ALLOC_FACTOR * self.max_seq
                raise LimitError(f"this run created more than {total:,} list/string items in total (limit "
                                 f"{ALLOC_FACTOR} × max_live_elements = {total:,})")

    def _seq_limit(self, n, what="sequence"):
        return LimitError(f"{what} would have {n:,} items (limit max_live_elements = {self.max_seq:,})")

    def _int_limit(self, bits):
        return LimitError(f"integer result would have about {bits:,} bits (limit max_int_bits = {self.max_bits:,})")

    def take(self, it, what="iterable"):
        """Materialise an iterable into a list, bounded in size and time."""
        t = type(it)
        if t is list:
            return it
        if t in _CONTAINERS or t is str:
            self.alloc(len(it), what)
            return list(it)
        limit = self.max_seq
        if t is range:
            self.alloc(len(it), what)
            return list(it)
        try:
            n = len(it)
        except Exception:
            n = None
        if n is not None and n > limit:
            raise self._seq_limit(n, what)
        out = []
        append = out.append
        for i, x in enumerate(self._iter(it)):
            if i >= limit:
                raise self._seq_limit(i + 1, what)
            if not (i & 63):  # an engine generator's items can be slow to make (named_parameters of deep modules)
                self._check_time()
            append(x)
        self.alloc(len(out), what)
        return out

    def check_data(self, *values, names=False):
        """Values handed to the engine or to numpy (arguments, operands, indices, values a program
        function returns to engine code) hold at most max_live_elements items in all. Nested lists,
        tuples, dicts and sets count item by item *with repetition* (a list holding one list 100 times
        counts its length 100 times: that is what numpy sees when it flattens it), strings by their
        characters, tensors by their elements. With `names`, no string in them may start with '_':
        the engine turns names (register_parameter, add_module, Sequential's OrderedDict keys) into
        attributes, and numpy reads `__array_interface__` & co. from an object's attributes; and none is
        longer than MAX_ENGINE_STRING (named_modules() joins the names of every level: long names in a
        deep chain of modules make gigabytes of text)."""
        if self.B is None:
            return
        T = self.tensor_type
        stack = [v for v in values if type(v) not in _SCALARS]
        if not stack:
            return
        M = self.B.Module
        budget = self.max_seq
        n = 0
        pop = stack.pop
        push = stack.extend
        while stack:
            x = pop()
            t = type(x)
            if t in _SCALARS:
                continue
            if t is str:
                n += len(x)
                if names and (x[:1] == "_" or len(x) > MAX_ENGINE_STRING):
                    if x[:1] == "_":
                        raise ValueError(f"names starting with '_' such as {x[:40]!r} are not allowed in flowgrad "
                                         "programs")
                    raise LimitError(f"a name or string handed to the engine has {len(x):,} characters (limit "
                                     f"{MAX_ENGINE_STRING})")
            elif isinstance(x, (list, tuple, set, frozenset)):
                n += len(x)
                if n > budget:
                    break
                push(x)
            elif isinstance(x, dict):
                n += 2 * len(x)
                if n > budget:
                    break
                push(x.keys())
                push(x.values())
            elif isinstance(x, T):
                n += x.numel()
            elif t is range:  # numpy reads a range inside a list as a list
                n += len(x) if abs(x.stop - x.start) < 2**62 else budget + 1
            elif isinstance(x, M) and hasattr(type(x), "__len__"):  # Sequential, ModuleList: numpy sees lists
                mods = x.__dict__.get("_modules")
                if mods is not None:
                    n += len(mods)
                    if n > budget:
                        break
                    push(mods.values())
            if n > budget:
                break
        if n > budget:
            raise LimitError(f"the data handed to the engine would have more than {budget:,} items "
                             f"(limit max_live_elements = {budget:,})")

    def module_links(self, k):
        """A module handed to the engine (add_module, Sequential(...), ModuleList.append, `self.fc = ...`) may
        become a submodule: at most MAX_MODULE_LINKS per run. The engine walks modules level by level,
        joining the names of every level (named_parameters() of a chain 10,000 deep is seconds in one call)."""
        self.links += k
        if self.links > MAX_MODULE_LINKS:
            raise LimitError(f"this run attached more than {MAX_MODULE_LINKS:,} modules to other modules (limit "
                             f"{MAX_MODULE_LINKS:,})")

    def tick(self):
        """A step for a call made from engine code or a builtin (Module.apply(fn), sorted(key=...))."""
        self.steps += 1
        if self.steps >= self.next_check:
            self._check(_NODE0)

    def text_size_check(self, v):
        """Before the engine renders one of its objects (a module, an optimizer, a Size, a bound method of
        one), bound the program data it will print: the engine's repr formats lists in C, unbounded."""
        B = self.B
        budget = self.max_out
        n = 0
        stack = [v]
        pop = stack.pop
        push = stack.extend
        UserModule = B.UserModule
        while stack:
            x = pop()
            t = type(x)
            if t in _SCALARS or t in _INTERP_TYPES or isinstance(x, B.Tensor):
                continue
            if t is str:
                n += len(x)
            elif t is types.MethodType:
                push((x.__self__,))
            elif isinstance(x, (list, tuple, set, frozenset)):
                n += len(x)
                if n <= budget:
                    push(x)
            elif isinstance(x, dict):
                n += 2 * len(x)
                if n <= budget:
                    push(x.keys())
                    push(x.values())
            elif isinstance(x, B.Module):
                d = x.__dict__
                mods = d.get("_modules")
                if mods is not None:
                    n += len(mods)
                    push(mods.values())
                if not isinstance(x, UserModule):  # an engine module prints its attributes (extra_repr)
                    push([val for k, val in d.items() if k not in ("_modules", "_parameters")])
            else:
                d = getattr(x, "__dict__", None)
                if type(d) is dict:
                    push(d.values())
            if n > budget:
                raise LimitError(f"the text of this value would be longer than {budget:,} characters (limit "
                                 f"max_output_bytes = {budget:,})")

    # ================================================================= statements
    def exec_block(self, body, scope):
        ex = self._ex
        rec = self.rec
        for stmt in body:
            self.steps += 1
            if self.steps >= self.next_check:
                self._check(stmt)
            if rec is not None:
                rec.line = stmt.lineno
            try:
                r = ex[type(stmt)](stmt, scope)
            except ProgramError as e:
                if e.line is None:
                    e.line, e.column = stmt.lineno, stmt.col_offset
                raise
            except Exception as e:
                raise self._wrap(e, stmt) from None
            if r is not None:
                return r
        return None

    def ex_Expr(self, node, scope):
        self._ev[type(node.value)](node.value, scope)

    def ex_Pass(self, node, scope):
        return None

    def ex_Break(self, node, scope):
        return BREAK

    def ex_Continue(self, node, scope):
        return CONTINUE

    def ex_Return(self, node, scope):
        return _Return(None if node.value is None else self.ev(node.value, scope))

    def ex_Assign(self, node, scope):
        value = self._ev[type(node.value)](node.value, scope)
        for target in node.targets:
            if type(target) is ast.Name:
                scope.vars[target.id] = value
                if self.rec is not None and isinstance(value, self.nameable_types):
                    self.rec.name_tensor(value, target.id)
            else:
                self.assign(target, value, scope)

    def ex_AnnAssign(self, node, scope):
        if node.value is not None:
            self.assign(node.target, self.ev(node.value, scope), scope)

    def ex_AugAssign(self, node, scope):
        target = node.target
        op = type(node.op)
        t = type(target)
        if t is ast.Name:
            cur = self.lookup(target.id, scope, target)
            value = self.binop(op, cur, self.ev(node.value, scope), node, inplace=True)
            self.assign(target, value, scope)
        elif t is ast.Attribute:
            obj = self.ev(target.value, scope)
            cur = self.get_attribute(obj, target.attr)
            value = self.binop(op, cur, self.ev(node.value, scope), node, inplace=True)
            self.set_attribute(obj, target.attr, value)
        elif t is ast.Subscript:
            obj = self.ev(target.value, scope)
            key = self.ev(target.slice, scope)
            cur = self.get_item(obj, key)
            value = self.binop(op, cur, self.ev(node.value, scope), node, inplace=True)
            self.set_item(obj, key, value)
        else:  # pragma: no cover - the parser rejects other targets
            raise ProgramError("SyntaxError", "illegal expression for augmented assignment", node.lineno)

    def ex_If(self, node, scope):
        if self.ev(node.test, scope):
            return self.exec_block(node.body, scope)
        if node.orelse:
            return self.exec_block(node.orelse, scope)
        return None

    def ex_While(self, node, scope):
        n = 0
        limit = self.max_loop
        test = node.test
        ev = self._ev[type(test)]
        body = node.body
        while ev(test, scope):
            n += 1
            if n > limit:
                raise self._loop_limit(node)
            r = self.exec_block(body, scope)
            if r is not None:
                if r is BREAK:
                    return None
                if r is CONTINUE:
                    continue
                return r
        if node.orelse:
            return self.exec_block(node.orelse, scope)
        return None

    def ex_For(self, node, scope):
        iterable = self.ev(node.iter, scope)
        iterator = self._iter(iterable)
        n = 0
        limit = self.max_loop
        target = node.target
        name = target.id if type(target) is ast.Name else None
        body = node.body
        vars = scope.vars  # noqa: A001
        for item in iterator:
            n += 1
            if n > limit:
                raise self._loop_limit(node)
            if name is not None:
                vars[name] = item
            else:
                self.assign(target, item, scope, name_tensors=False)
            r = self.exec_block(body, scope)
            if r is not None:
                if r is BREAK:
                    return None
                if r is CONTINUE:
                    continue
                return r
        if node.orelse:
            return self.exec_block(node.orelse, scope)
        return None

    def _iter(self, v):
        if type(v) in _INTERP_TYPES:
            raise TypeError(f"'{self.type_name(v)}' object is not iterable")
        return iter(v)

    def ex_FunctionDef(self, node, scope):
        a = node.args
        defaults = [self.ev(d, scope) for d in a.defaults]
        kw_defaults = {p.arg: self.ev(d, scope) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        f = UserFunction(node.name, node, node.body, False, scope, self, defaults, kw_defaults)
        scope.vars[node.name] = f

    def ex_ClassDef(self, node, scope):
        B = self.B
        module_base = B.Module if B is not None else None
        bases = []
        for b in node.bases:
            v = self.ev(b, scope)
            if not (isinstance(v, UserClass) or (module_base is not None and v is module_base)):
                raise ProgramError("TypeError", f"class {node.name} can only inherit from nn.Module or from classes "
                                   "defined in the program", b.lineno, b.col_offset)
            bases.append(v)
        cls = UserClass(node.name, bases, self, module_base)
        body_scope = Scope(cls.ns, scope, CLASS)
        self.exec_block(node.body, body_scope)
        for v in cls.ns.values():
            if type(v) is UserFunction and v.closure is body_scope:
                v.owner = cls
        scope.vars[node.name] = cls

    def ex_Import(self, node, scope):
        for alias in node.names:
            mod = self._import(alias.name, node)
            if alias.asname:
                name, value = alias.asname, mod
            else:
                name = alias.name.split(".")[0]
                value = self._import(name, node)
            scope.vars[name] = value
            if scope.vars is self.globals:
                self.imported[name] = value

    def ex_ImportFrom(self, node, scope):
        mod = self._import(node.module or "", node)
        for alias in node.names:
            value = mod.attrs.get(alias.name, _MISSING)
            if value is _MISSING:
                full = f"{node.module}.{alias.name}"
                if self.B is not None and full in self.B.modules:
                    value = self.B.modules[full]
                else:
                    raise ProgramError("ImportError", f"cannot import name '{alias.name}' from '{node.module}'"
                                       " (not available in flowgrad)", node.lineno, node.col_offset)
            name = alias.asname or alias.name
            scope.vars[name] = value
            if scope.vars is self.globals:
                self.imported[name] = value

    def _import(self, name, node):
        if name == "random":
            return self._random_module()
        B = self.B
        if B is None:
            if name == "math":
                return self.builtins["math"]
            raise ProgramError("ImportError", f"cannot import '{name}': the engine is not available",
                               node.lineno, node.col_offset)
        mod = B.modules.get(name)
        if mod is None:
            avail = ", ".join(sorted(B.modules))
            raise ProgramError("ModuleNotFoundError", f"No module named '{name}' (flowgrad programs can import "
                               f"{avail})", node.lineno, node.col_offset)
        return mod

    def _random_module(self):
        """Python's `random`, as a per-run generator (seeded the same for every run)."""
        proxy = self.builtins.get("\0random")
        if proxy is None:
            rng = _random.Random(0)
            take = self.take

            def sample(population, k):
                if type(k) in _INT_TYPES:
                    self.alloc(k)
                return rng.sample(population if type(population) in (range, list, tuple) else take(population), k)

            def shuffle(xs):
                if type(xs) is not list:
                    raise TypeError("shuffle() needs a list")
                rng.shuffle(xs)

            def seed(a=None):
                if a is None or type(a) in (int, float, str, bool):
                    rng.seed(0 if a is None else a)
                else:
                    raise TypeError("random.seed() takes an int, float or str")

            def choice(seq):
                return rng.choice(seq if type(seq) in (range, list, tuple, str) else take(seq))

            attrs = {name: Builtin(name, fn, self) for name, fn in (
                ("random", rng.random), ("uniform", rng.uniform), ("randint", rng.randint), ("gauss", rng.gauss),
                ("normalvariate", rng.normalvariate), ("randrange", rng.randrange), ("choice", choice),
                ("shuffle", shuffle), ("sample", sample), ("seed", seed))}
            proxy = ModuleProxy("random", attrs)
            self.builtins["\0random"] = proxy
        return proxy

    def ex_With(self, node, scope):
        return self._with(node.items, 0, node.body, scope)

    def _with(self, items, i, body, scope):
        if i == len(items):
            return self.exec_block(body, scope)
        item = items[i]
        cm = self.ev(item.context_expr, scope)
        t = type(cm)
        B = self.B
        if B is None or not (t.__module__ + ".").startswith(B.prefix) or not hasattr(t, "__enter__"):
            raise TypeError(f"'{self.type_name(cm)}' object does not support the context manager protocol "
                            "(flowgrad supports torch.no_grad(), torch.enable_grad(), torch.inference_mode())")
        value = t.__enter__(cm)
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, scope)
        try:
            r = self._with(items, i + 1, body, scope)
        except BaseException as e:
            t.__exit__(cm, type(e), e, None)
            raise
        t.__exit__(cm, None, None, None)
        return r

    def ex_Assert(self, node, scope):
        if not self.ev(node.test, scope):
            msg = "" if node.msg is None else self.to_str(self.ev(node.msg, scope))
            raise ProgramError("AssertionError", msg, node.lineno, node.col_offset)

    def ex_Delete(self, node, scope):
        for target in node.targets:
            t = type(target)
            if t is ast.Name:
                if target.id not in scope.vars:
                    raise NameError(f"name '{target.id}' is not defined")
                del scope.vars[target.id]
            elif t is ast.Subscript:
                obj = self.ev(target.value, scope)
                key = self.ev(target.slice, scope)
                if type(obj) not in (list, dict):
                    raise TypeError(f"'{self.type_name(obj)}' object doesn't support item deletion")
                del obj[key]
            elif t in (ast.Tuple, ast.List):
                self.ex_Delete(ast.Delete(targets=target.elts, lineno=node.lineno, col_offset=node.col_offset),
                               scope)
            else:
                raise ProgramError("NotImplementedError", "this 'del' target is not supported", node.lineno,
                                   node.col_offset)

    # ================================================================= assignment
    def assign(self, target, value, scope, name_tensors=True):
        t = type(target)
        if t is ast.Name:
            scope.vars[target.id] = value
            if name_tensors and self.rec is not None and isinstance(value, self.nameable_types):
                self.rec.name_tensor(value, target.id)
        elif t is ast.Tuple or t is ast.List:
            self._unpack(target.elts, value, scope, name_tensors, target)
        elif t is ast.Attribute:
            self.set_attribute(self.ev(target.value, scope), target.attr, value)
        elif t is ast.Subscript:
            self.set_item(self.ev(target.value, scope), self.ev(target.slice, scope), value)
        else:
            raise ProgramError("SyntaxError", "cannot assign to this expression", target.lineno, target.col_offset)

    def _unpack(self, elts, value, scope, name_tensors, node):
        items = value if type(value) in (list, tuple) else self.take(self._iter(value))
        star = [i for i, e in enumerate(elts) if type(e) is ast.Starred]
        n = len(items)
        if not star:
            if n != len(elts):
                if n < len(elts):
                    raise ValueError(f"not enough values to unpack (expected {len(elts)}, got {n})")
                raise ValueError(f"too many values to unpack (expected {len(elts)})")
            for e, v in zip(elts, items):
                self.assign(e, v, scope, name_tensors)
            return
        if len(star) > 1:
            raise ProgramError("SyntaxError", "multiple starred expressions in assignment", node.lineno)
        s = star[0]
        after = len(elts) - s - 1
        if n < len(elts) - 1:
            raise ValueError(f"not enough values to unpack (expected at least {len(elts) - 1}, got {n})")
        for e, v in zip(elts[:s], items[:s]):
            self.assign(e, v, scope, name_tensors)
        self.assign(elts[s].value, list(items[s:n - after]), scope, name_tensors)
        for e, v in zip(elts[s + 1:], items[n - after:]):
            self.assign(e, v, scope, name_tensors)

    def set_attribute(self, obj, name, value):
        t = type(obj)
        if t is UserInstance:
            obj.attrs[name] = value
            return
        B = self.B
        if B is not None:
            if isinstance(obj, B.Tensor):
                if name in policy.TENSOR_SETTABLE:
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
        if isinstance(obj, type) or t in (BuiltinType, Builtin):
            cname = obj.__name__ if isinstance(obj, type) else obj.name
            raise TypeError(f"cannot set attribute '{name}' on class '{cname}' in flowgrad programs")
        if t is ModuleProxy:
            raise TypeError(f"cannot set attribute '{name}' on module '{obj.name}' in flowgrad programs")
        raise AttributeError(f"cannot set attribute '{name}' on a '{self.type_name(obj)}' object in flowgrad "
                             "programs")

    def set_item(self, obj, key, value):
        t = type(obj)
        if t is list and type(key) is slice:
            # slice assignment consumes any iterable in C: bound it first
            if type(value) not in (list, tuple):
                value = self.take(value)
            self.alloc(len(obj) + len(value), "list")
            obj[key] = value
            return
        if t is list or t is dict:
            obj[key] = value
            return
        B = self.B
        if B is not None and isinstance(obj, (B.Tensor, B.Module)) and hasattr(t, "__setitem__"):
            self.check_data(key, value)
            obj[key] = value
            return
        raise TypeError(f"'{self.type_name(obj)}' object does not support item assignment")

    def get_item(self, obj, key):
        t = type(obj)
        if t in _SUBSCRIPTABLE:
            if type(key) is slice and t is not dict and t is not range:
                r = obj[key]
                self.alloc(len(r))  # slices copy
                return r
            return obj[key]
        B = self.B
        if B is not None and (isinstance(obj, (B.Tensor, B.Module)) or isinstance(obj, (list, tuple, dict))):
            if hasattr(t, "__getitem__"):
                self.check_data(key)
                return obj[key]
        raise TypeError(f"'{self.type_name(obj)}' object is not subscriptable")

    # ================================================================= names and attributes
    def lookup(self, name, scope, node=None):
        d = scope.vars
        if name in d:
            return d[name]
        s = scope.parent
        while s is not None:
            if s.kind != CLASS and name in s.vars:
                return s.vars[name]
            s = s.parent
        v = self.builtins.get(name, _MISSING)
        if v is not _MISSING:
            return v
        if name in _FORBIDDEN_BUILTINS:
            raise NameError(f"name '{name}' is not defined ({name} is not available in flowgrad programs)")
        raise NameError(f"name '{name}' is not defined")

    def type_of(self, obj):
        """`type(obj)`: a user class, a builtin type, a reachable engine class, or a display-only TypeView."""
        t = type(obj)
        if t is UserInstance:
            return obj.cls
        bt = self.builtins.get(t.__name__)
        if type(bt) is BuiltinType and bt.pytype is t:
            return bt
        B = self.B
        if B is not None:
            if isinstance(obj, B.UserModule):
                return obj.__dict__["_fg_cls"]
            if t in B.class_names:
                return t
        if t in (UserClass, BuiltinType, TypeView):
            return TypeView("type", type)
        if t in (UserFunction, BoundMethod, Builtin):
            return TypeView("function", UserFunction)
        if t is ModuleProxy:
            return TypeView("module", ModuleProxy)
        return TypeView(self.type_name(obj), t)

    def type_name(self, obj):
        t = type(obj)
        if t is UserInstance:
            return obj.cls.name
        if t is UserClass:
            return "type"
        if t in (UserFunction, BoundMethod, Builtin):
            return "function"
        if t is BuiltinType or t is TypeView:
            return "type"
        if t is ModuleProxy:
            return "module"
        if self.B is not None and isinstance(obj, self.B.UserModule):
            return obj.__dict__["_fg_cls"].name
        return t.__name__

    def _no_attr(self, obj, name):
        tn = self.type_name(obj)
        if type(obj) not in _INTERP_TYPES and hasattr(type(obj), name):
            return AttributeError(f"'{tn}' object attribute '{name}' is not available in flowgrad programs")
        return AttributeError(f"'{tn}' object has no attribute '{name}'")

    def get_attribute(self, obj, name):
        t = type(obj)
        allowed = self._attr_cache.get(t)
        if allowed is not None:
            if name in allowed:
                special = _SPECIAL.get((t, name))
                if special is not None:
                    return Builtin(name, special(self, obj), self)
                return getattr(obj, name)
            raise self._no_attr(obj, name)
        if t is UserInstance:
            attrs = obj.attrs
            if name in attrs:
                return attrs[name]
            _, v = obj.cls.lookup(name)
            if v is not None or name in obj.cls.ns:
                return BoundMethod(v, obj) if type(v) is UserFunction else v
            raise AttributeError(f"'{obj.cls.name}' object has no attribute '{name}'")
        if t is ModuleProxy:
            v = obj.attrs.get(name, _MISSING)
            if v is _MISSING:
                raise AttributeError(f"module '{obj.name}' has no attribute '{name}' (not available in flowgrad)")
            return v
        if t is UserClass:
            c, v = obj.lookup(name)
            if c is None:
                raise AttributeError(f"type object '{obj.name}' has no attribute '{name}'")
            return v
        if t is SuperProxy:
            return self._super_attr(obj, name)
        B = self.B
        if B is not None:
            if isinstance(obj, B.Module):
                return self._module_attr(obj, name)
            table = self._table_for(obj)
            if table is not None:
                self._attr_cache[t] = table
                return self.get_attribute(obj, name)
        else:
            table = _BASIC_ATTRS.get(t)
            if table is not None:
                self._attr_cache[t] = table
                return self.get_attribute(obj, name)
        raise self._no_attr(obj, name)

    def _table_for(self, obj):
        t = type(obj)
        if t in _BASIC_ATTRS:
            return _BASIC_ATTRS[t]
        B = self.B
        if isinstance(obj, B.Tensor):
            return policy.TENSOR_ATTRS
        if B.Optimizer is not None and isinstance(obj, B.Optimizer):
            return policy.OPTIMIZER_ATTRS
        if B.Scheduler is not None and isinstance(obj, B.Scheduler):
            return policy.SCHEDULER_ATTRS
        if B.node_types and isinstance(obj, B.node_types):
            return policy.GRADFN_ATTRS
        if B.dtype is not None and isinstance(obj, B.dtype):
            return policy.DTYPE_ATTRS
        if B.Size is not None and isinstance(obj, B.Size):
            return policy.SIZE_ATTRS
        if isinstance(obj, tuple) and hasattr(t, "_fields"):  # named tuples such as (values, indices)
            return policy.TUPLE_ATTRS | frozenset(f for f in t._fields if not f.startswith("_"))
        # subclasses of plain containers (OrderedDict from state_dict(), ...): the plain methods that cannot
        # loop in C over an unbounded iterable
        if isinstance(obj, dict):
            return policy.DICT_ATTRS - {"update"}
        if isinstance(obj, list):
            return policy.LIST_ATTRS - {"extend"}
        if isinstance(obj, tuple):
            return policy.TUPLE_ATTRS
        return None

    def _module_attr(self, obj, name):
        d = obj.__dict__
        ucls = d.get("_fg_cls")
        if name in d:
            return d[name]
        params = d.get("_parameters")
        if params is not None and name in params:
            return params[name]
        mods = d.get("_modules")
        if mods is not None and name in mods:
            return mods[name]
        if ucls is not None:
            c, v = ucls.lookup(name)
            if c is not None:
                return BoundMethod(v, obj) if type(v) is UserFunction else v
        if name in policy.MODULE_ATTRS and hasattr(type(obj), name):
            return getattr(obj, name)
        if ucls is not None:
            raise AttributeError(f"'{ucls.name}' object has no attribute '{name}'")
        raise self._no_attr(obj, name)

    def _super_attr(self, sp, name):
        obj = sp.obj
        if type(obj) is UserInstance:
            mro = obj.cls.mro
        elif self.B is not None and isinstance(obj, self.B.UserModule):
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
                return BoundMethod(v, obj) if type(v) is UserFunction else v
        B = self.B
        if sp.cls.is_module and B is not None:
            base = B.Module
            if name == "__init__":
                return Builtin("__init__", lambda *a, **k: base.__init__(obj, *a, **k))
            if name in policy.MODULE_ATTRS and hasattr(base, name):
                return getattr(base, name).__get__(obj)
        elif name == "__init__":
            def init(*args, **kwargs):
                if args or kwargs:
                    raise TypeError("object.__init__() takes exactly one argument (the instance to initialize)")
            return Builtin("__init__", init)
        raise AttributeError(f"'super' object has no attribute '{name}'")

    # ================================================================= expressions
    def ev(self, node, scope):
        return self._ev[type(node)](node, scope)

    def ev_Constant(self, node, scope):
        return node.value

    def ev_Name(self, node, scope):
        d = scope.vars
        name = node.id
        if name in d:
            return d[name]
        return self.lookup(name, scope, node)

    def ev_Attribute(self, node, scope):
        obj = self._ev[type(node.value)](node.value, scope)
        try:
            return self.get_attribute(obj, node.attr)
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def ev_Subscript(self, node, scope):
        obj = self._ev[type(node.value)](node.value, scope)
        key = self._ev[type(node.slice)](node.slice, scope)
        try:
            return self.get_item(obj, key)
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def ev_Slice(self, node, scope):
        return slice(None if node.lower is None else self.ev(node.lower, scope),
                     None if node.upper is None else self.ev(node.upper, scope),
                     None if node.step is None else self.ev(node.step, scope))

    def ev_BinOp(self, node, scope):
        a = self._ev[type(node.left)](node.left, scope)
        b = self._ev[type(node.right)](node.right, scope)
        return self.binop(type(node.op), a, b, node)

    def binop(self, op, a, b, node, inplace=False):
        ta = type(a)
        tb = type(b)
        try:
            if ta is float or tb is float:
                if op is ast.Mod and ta is str:
                    return self._percent(a, b)
            elif ta in _INT_TYPES and tb in _INT_TYPES:
                self._check_int_op(op, a, b)
                r = _BINOPS[op](a, b)
                if type(r) is int and r.bit_length() > self.max_bits:
                    raise self._int_limit(r.bit_length())
                return r
            elif ta in _SEQ_TYPES or tb in _SEQ_TYPES:
                b = self._check_seq_op(op, a, b, ta, tb, inplace)
                if op is ast.Mod and (ta is str or ta is bytes):
                    return self._percent(a, b)
            T = self.tensor_type
            if T and (isinstance(a, T) or isinstance(b, T)):  # the engine converts the other operand
                self.check_data(a, b)
                if op in _BIT_OPS:
                    self._check_broadcast(a, b)
            r = (_INPLACE if inplace else _BINOPS)[op](a, b)
            if type(r) in _COPIES:  # set and dict operators copy
                self.alloc(len(r))
            return r
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def _check_broadcast(self, a, b):
        """Tensor `&` and `|` are numpy calls outside the engine's op table, unchecked by its limits:
        (100000, 1) & (1, 100000) would allocate 10 GB. Check the broadcast shape the way the engine does."""
        import numpy as np

        limits = getattr(self.B.state, "limits", None)
        if limits is None:
            return
        try:
            T = self.tensor_type
            shape = np.broadcast_shapes(*(tuple(v.shape) if isinstance(v, T) else np.shape(v) for v in (a, b)))
        except ValueError:
            return  # the operator reports the mismatch
        limits.before_alloc(shape)

    def _check_int_op(self, op, a, b):
        max_bits = self.max_bits
        if op is ast.Pow:
            if b > 0 and abs(a) > 1:
                bits = b * math.log2(abs(a))
                if bits > max_bits:
                    raise self._int_limit(int(bits))
        elif op is ast.Mult:
            bits = a.bit_length() + b.bit_length()
            if bits > max_bits + 1:
                raise self._int_limit(bits)
        elif op is ast.LShift:
            if a and b > 0:
                bits = a.bit_length() + b
                if bits > max_bits:
                    raise self._int_limit(bits)

    def _check_seq_op(self, op, a, b, ta, tb, inplace):
        if op is ast.Mult:
            if ta in _SEQ_TYPES and tb in _INT_TYPES:
                n = len(a) * max(b, 0)
            elif tb in _SEQ_TYPES and ta in _INT_TYPES:
                n = len(b) * max(a, 0)
            else:
                return b
            self.alloc(n)
        elif op is ast.Add:
            if ta in _SEQ_TYPES and tb in _SEQ_TYPES:
                self.alloc(len(a) + len(b))
            elif inplace and ta is list:
                # `xs += iterable` extends with any iterable: bound it first
                b = self.take(b)
                self.alloc(len(a) + len(b))
        return b

    def _percent(self, template, args):
        if type(template) is bytes:
            raise TypeError("%-formatting of bytes is not supported in flowgrad programs")
        for m in _PERCENT_RE.finditer(template):
            width, prec, _ = m.groups()
            if width == "*" or prec == "*":
                raise ValueError("'*' widths in %-format strings are not supported in flowgrad programs")
            for v in (width, prec):
                if v and int(v) > MAX_FORMAT_WIDTH:
                    raise LimitError(f"format width/precision {int(v):,} is larger than the limit {MAX_FORMAT_WIDTH}")
        if type(args) is tuple:
            args = tuple(self._shown(a) for a in args)
        elif type(args) is dict:
            args = {k: self._shown(v) for k, v in args.items()}
        else:
            args = self._shown(args)
        return self._check_len(template % args)

    def _shown(self, v):
        t = type(v)
        if t in _PRIMITIVE_TYPES or isinstance(v, self.tensor_type):
            return v
        return Shown(self.to_str(v), self.repr_value(v))

    def _check_len(self, s):
        self.alloc(len(s), "string")
        return s

    def ev_UnaryOp(self, node, scope):
        v = self.ev(node.operand, scope)
        op = type(node.op)
        if op is ast.Not:
            return not v
        try:
            return _UNARY[op](v)
        except Exception as e:
            raise self._wrap(e, node) from None

    def ev_BoolOp(self, node, scope):
        if type(node.op) is ast.And:
            v = True
            for e in node.values:
                v = self.ev(e, scope)
                if not v:
                    return v
            return v
        v = False
        for e in node.values:
            v = self.ev(e, scope)
            if v:
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
                    if T and (isinstance(left, T) or isinstance(right, T)):
                        self.check_data(left, right)
                    r = _CMP[t](left, right)
                if len(node.ops) == 1:
                    return r
                if not r:
                    return r
                left = right
            return r
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def _contains(self, container, item):
        t = type(container)
        if t in _CONTAINERS or t is str or t is bytes:
            return item in container
        if t is range and type(item) in _INT_TYPES:
            return item in container
        if isinstance(container, (UserInstance, UserClass, ModuleProxy, UserFunction, BoundMethod)):
            raise TypeError(f"argument of type '{self.type_name(container)}' is not iterable")
        if self.B is not None and isinstance(container, (self.B.Tensor, dict, list, tuple)):
            if isinstance(container, self.B.Tensor):
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

    def _elements(self, elts, scope):
        out = []
        for e in elts:
            if type(e) is ast.Starred:
                out.extend(self.take(self._iter(self.ev(e.value, scope))))
                if len(out) > self.max_seq:
                    raise self._seq_limit(len(out))
            else:
                out.append(self._ev[type(e)](e, scope))
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
                d[self.ev(k, scope)] = self.ev(v, scope)
        self.alloc(len(d), "dict")
        return d

    def ev_Starred(self, node, scope):
        raise ProgramError("SyntaxError", "can't use starred expression here", node.lineno, node.col_offset)

    def ev_Lambda(self, node, scope):
        a = node.args
        defaults = [self.ev(d, scope) for d in a.defaults]
        kw_defaults = {p.arg: self.ev(d, scope) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
        return UserFunction("<lambda>", node, node.body, True, scope, self, defaults, kw_defaults)

    # ----------------------------------------------------------------- comprehensions
    def _comprehension(self, node, scope, emit):
        inner = Scope({}, scope, COMP)
        gens = node.generators
        self._comp_loop(gens, 0, inner, scope, emit)

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
        for item in self._iter(iterable):
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
        ev = self._ev[type(elt)]
        self._comprehension(node, scope, lambda s: out.append(ev(elt, s)))
        return out

    def ev_GeneratorExp(self, node, scope):
        return iter(self.ev_ListComp(node, scope))

    def ev_SetComp(self, node, scope):
        out = set()
        self._comprehension(node, scope, lambda s: out.add(self.ev(node.elt, s)))
        return out

    def ev_DictComp(self, node, scope):
        out = {}

        def emit(s):
            out[self.ev(node.key, s)] = self.ev(node.value, s)
        self._comprehension(node, scope, emit)
        return out

    # ----------------------------------------------------------------- f-strings
    def ev_JoinedStr(self, node, scope):
        parts = []
        total = 0
        for v in node.values:
            if type(v) is ast.Constant:
                s = v.value
            else:
                s = self.ev_FormattedValue(v, scope)
            total += len(s)
            if total > self.max_seq:
                raise self._seq_limit(total, "string")
            parts.append(s)
        self.alloc(total, "string")
        return "".join(parts)

    def ev_FormattedValue(self, node, scope):
        value = self.ev(node.value, scope)
        conv = node.conversion
        if conv == 115:  # !s
            value = self.to_str(value)
        elif conv == 114:  # !r
            value = self.repr_value(value)
        elif conv == 97:  # !a
            value = ascii(self.repr_value(value))
        spec = "" if node.format_spec is None else self.ev(node.format_spec, scope)
        try:
            return self.format_value(value, spec)
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def format_value(self, value, spec):
        if not spec:
            return self.to_str(value)
        m = _SPEC_RE.match(spec)
        if m is None:
            raise ValueError(f"Invalid format specifier '{spec[:50]}' for object of type '{self.type_name(value)}'")
        for v in m.groups():
            if v and int(v) > MAX_FORMAT_WIDTH:
                raise LimitError(f"format width/precision {int(v):,} is larger than the limit {MAX_FORMAT_WIDTH}")
        t = type(value)
        if t in _PRIMITIVE_TYPES or isinstance(value, self.tensor_type):
            return format(value, spec)
        if t.__module__ == "numpy" and isinstance(value, (int, float, complex)) or hasattr(value, "dtype") and \
                t.__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
            return format(value, spec)
        raise TypeError(f"unsupported format string passed to {self.type_name(value)}.__format__")

    def safe_format(self, template, args, kwargs):
        """str.format without attribute/index lookups and with checked specs."""
        out = []
        auto = 0
        total = 0
        for literal, field_name, spec, conv in _formatter_parse(template):
            out.append(literal)
            total += len(literal)
            if field_name is None:
                continue
            if field_name == "":
                if auto >= len(args):
                    raise IndexError(f"Replacement index {auto} out of range for positional args tuple")
                value = args[auto]
                auto += 1
            elif field_name.isdigit():
                i = int(field_name)
                if i >= len(args):
                    raise IndexError(f"Replacement index {i} out of range for positional args tuple")
                value = args[i]
            elif "." in field_name or "[" in field_name:
                raise ValueError("attribute and index lookups in format strings ('{x.attr}', '{x[0]}') are not "
                                 "supported in flowgrad programs")
            else:
                if field_name not in kwargs:
                    raise KeyError(field_name)
                value = kwargs[field_name]
            if spec and "{" in spec:
                raise ValueError("nested replacement fields in format specs are not supported in flowgrad programs")
            if conv == "r":
                value = self.repr_value(value)
            elif conv == "s":
                value = self.to_str(value)
            elif conv == "a":
                value = ascii(self.repr_value(value))
            elif conv is not None:
                raise ValueError(f"Unknown conversion specifier {conv}")
            s = self.format_value(value, spec or "")
            total += len(s)
            if total > self.max_seq:
                raise self._seq_limit(total, "string")
            out.append(s)
        self.alloc(total, "string")
        return "".join(out)

    # ----------------------------------------------------------------- calls
    def ev_Call(self, node, scope):
        f = self._ev[type(node.func)](node.func, scope)
        args = []
        for a in node.args:
            if type(a) is ast.Starred:
                args.extend(self.take(self._iter(self.ev(a.value, scope))))
            else:
                args.append(self._ev[type(a)](a, scope))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                m = self.ev(kw.value, scope)
                if type(m) is not dict:
                    raise ProgramError("TypeError", "argument after ** must be a mapping", kw.lineno, kw.col_offset)
                for k in m:
                    if type(k) is not str:
                        raise ProgramError("TypeError", "keywords must be strings", kw.lineno, kw.col_offset)
                    if k.startswith("_"):
                        raise ProgramError("TypeError", f"keyword argument '{k}' is not allowed", kw.lineno,
                                           kw.col_offset)
                    if k in kwargs:
                        raise ProgramError("TypeError", f"got multiple values for keyword argument '{k}'",
                                           kw.lineno, kw.col_offset)
                kwargs.update(m)
            else:
                kwargs[kw.arg] = self._ev[type(kw.value)](kw.value, scope)
        if f is SUPER:
            return self._super(args, scope, node)
        try:
            return self.call(f, args, kwargs)
        except ProgramError as e:
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            raise
        except Exception as e:
            raise self._wrap(e, node) from None

    def call(self, f, args, kwargs):
        t = type(f)
        if t is UserFunction:
            return self.call_user(f, args, kwargs)
        if t is BoundMethod:
            return self.call_user(f.func, [f.obj, *args], kwargs)
        if t is Builtin or t is BuiltinType:
            return f.fn(*args, **kwargs)
        if t is UserClass:
            return self.instantiate(f, args, kwargs)
        if t in _PRIMITIVE_TYPES or t in _CONTAINERS or t is UserInstance or t is ModuleProxy or t is SuperProxy:
            raise TypeError(f"'{self.type_name(f)}' object is not callable")
        if not callable(f):
            raise TypeError(f"'{self.type_name(f)}' object is not callable")
        # an engine function, class, module or allowlisted method: bound lazy iterables first
        for i, a in enumerate(args):
            ta = type(a)
            if ta not in _PRIMITIVE_TYPES and ta not in _CONTAINERS and (ta is range or hasattr(ta, "__next__")):
                if ta is range and len(a) > self.max_seq:
                    raise self._seq_limit(len(a))
                if ta is not range:
                    args[i] = self.take(a)
        B = self.B
        owner = getattr(f, "__self__", None)
        if B is not None and type(owner) not in _BASIC_ATTRS:  # not a str/list/... method
            if B.Optimizer is not None and isinstance(owner, B.Optimizer):
                # param_groups are plain lists the program can grow: step() loops over groups x params
                self.check_data(owner.param_groups)
            if f in B.not_constructible:
                raise TypeError(f"cannot create '{B.class_names.get(f, f.__name__)}' instances")
            T = self.tensor_type
            if kwargs or any(type(a) not in _SCALARS and not isinstance(a, T) for a in args):
                self.check_data(args, kwargs, names=True)  # (tensors and numbers alone are within the limits)
            # modules handed to the engine, directly or in a list, may become submodules
            links = 0
            for a in (*args, *kwargs.values()):
                if isinstance(a, B.Module):
                    links += 1
                elif type(a) in (list, tuple):
                    links += sum(1 for x in a if isinstance(x, B.Module))
            if links:
                self.module_links(links)
            for i, a in enumerate(args):  # a callback the engine may call many times (Module.apply): count steps
                if type(a) is set:  # the engine's copy: named_modules(memo=s) fills s with object addresses
                    args[i] = set(a)
                elif type(a) not in _INTERP_TYPES and type(a) not in _PRIMITIVE_TYPES and callable(a) and \
                        not isinstance(a, (type, B.Module)):
                    args[i] = Builtin(getattr(a, "__name__", "function"), functools.partial(a), self)
            for k, a in kwargs.items():
                if type(a) is set:
                    kwargs[k] = set(a)
                elif type(a) not in _INTERP_TYPES and type(a) not in _PRIMITIVE_TYPES and callable(a) and \
                        not isinstance(a, (type, B.Module)):
                    kwargs[k] = Builtin(getattr(a, "__name__", "function"), functools.partial(a), self)
        r = f(*args, **kwargs)
        if isinstance(r, _SIZED):  # copies made by allowlisted methods (str.split, dict.copy, ...) count
            self.alloc(len(r))
        return r

    def _super(self, args, scope, node):
        if args:
            if len(args) != 2 or type(args[0]) is not UserClass:
                raise ProgramError("TypeError", "super() arguments must be (class, instance)", node.lineno,
                                   node.col_offset)
            return SuperProxy(args[0], args[1])
        s = scope
        while s is not None and s.func is None:
            s = s.parent
        if s is None or s.func.owner is None or not s.func.posnames:
            raise ProgramError("RuntimeError", "super(): no arguments (use it inside a method)", node.lineno,
                               node.col_offset)
        obj = s.vars.get(s.func.posnames[0], _MISSING)
        if obj is _MISSING:
            raise ProgramError("RuntimeError", "super(): the first argument is gone", node.lineno, node.col_offset)
        return SuperProxy(s.func.owner, obj)

    def _bind(self, f, args, kwargs):
        names = f.posnames
        n = len(args)
        if f.simple:
            if n == f.nparams and not kwargs:
                return dict(zip(names, args))
        nparams = f.nparams
        d = {}
        if n > nparams:
            if f.vararg is None:
                given = n - (1 if f.owner is not None else 0)
                takes = nparams - (1 if f.owner is not None else 0)
                raise TypeError(f"{f.name}() takes {takes} positional argument{'s' if takes != 1 else ''} but "
                                f"{given} {'were' if given != 1 else 'was'} given")
            d[f.vararg] = tuple(args[nparams:])
            args = args[:nparams]
        elif f.vararg is not None:
            d[f.vararg] = ()
        for name, v in zip(names, args):
            d[name] = v
        extra = {}
        for k, v in kwargs.items():
            if k in d or (k in names and names.index(k) < len(args)):
                raise TypeError(f"{f.name}() got multiple values for argument '{k}'")
            if k in names or k in f.kwonly:
                d[k] = v
            elif f.kwarg is not None:
                extra[k] = v
            else:
                raise TypeError(f"{f.name}() got an unexpected keyword argument '{k}'")
        if f.kwarg is not None:
            d[f.kwarg] = extra
        missing = []
        ndef = len(f.defaults)
        first_default = nparams - ndef
        for i, name in enumerate(names):
            if name not in d:
                if i >= first_default:
                    d[name] = f.defaults[i - first_default]
                else:
                    missing.append(name)
        if missing:
            q = [f"'{m}'" for m in missing]
            listed = q[0] if len(q) == 1 else ", ".join(q[:-1]) + " and " + q[-1]
            raise TypeError(f"{f.name}() missing {len(q)} required positional argument"
                            f"{'s' if len(q) != 1 else ''}: {listed}")
        for name in f.kwonly:
            if name not in d:
                if name in f.kw_defaults:
                    d[name] = f.kw_defaults[name]
                else:
                    raise TypeError(f"{f.name}() missing 1 required keyword-only argument: '{name}'")
        return d

    def call_user(self, f, args, kwargs):
        self.depth += 1
        try:
            if self.depth > MAX_CALL_DEPTH:
                raise ProgramError("RecursionError", f"maximum recursion depth exceeded (limit: {MAX_CALL_DEPTH} "
                                   "nested calls)")
            self.steps += 1
            if self.steps >= self.next_check:
                self._check(f.node)
            scope = Scope(self._bind(f, args, kwargs), f.closure, FUNC, f)
            rec = self.rec
            line = rec.line if rec is not None else None
            if f.is_lambda:
                try:
                    return self.ev(f.body, scope)
                except ProgramError:
                    raise
                except Exception as e:
                    raise self._wrap(e, f.body) from None
            r = self.exec_block(f.body, scope)
            if rec is not None:
                rec.line = line  # the rest of the calling statement is on the caller's line
            if r is None:
                return None
            if type(r) is _Return:
                return r.value
            return None
        finally:
            self.depth -= 1

    def instantiate(self, cls, args, kwargs):
        B = self.B
        if cls.is_module:
            obj = B.UserModule.__new__(B.UserModule)
            object.__setattr__(obj, "_fg_cls", cls)
        else:
            obj = UserInstance(cls)
        _, init = cls.lookup("__init__")
        if init is not None:
            r = self.call(init, [obj, *args], kwargs) if type(init) is UserFunction else init(obj, *args, **kwargs)
            if r is not None:
                raise TypeError(f"__init__() should return None, not '{self.type_name(r)}'")
        elif cls.is_module:
            B.Module.__init__(obj, *args, **kwargs)
        elif args or kwargs:
            raise TypeError(f"{cls.name}() takes no arguments")
        return obj

    # ================================================================= text
    def to_str(self, v):
        t = type(v)
        if t is str:
            return v
        if t in _PRIMITIVE_TYPES:
            return str(v)
        return self.repr_value(v)

    def repr_value(self, v):
        budget = [self.max_out + 1]
        s = self._repr(v, 0, set(), budget)
        self.alloc(len(s), "string")  # str(big_list) 10,000 times is 650 MB
        return s

    def _repr(self, v, depth, seen, budget):
        t = type(v)
        if t in _PRIMITIVE_TYPES:
            s = repr(v)
        elif t in _CONTAINERS:
            if id(v) in seen or depth > 100:
                s = {list: "[...]", tuple: "(...)", dict: "{...}"}.get(t, "{...}")
            else:
                seen.add(id(v))
                parts = []
                if t is dict:
                    for k, x in v.items():
                        parts.append(self._repr(k, depth + 1, seen, budget) + ": " +
                                     self._repr(x, depth + 1, seen, budget))
                else:
                    for x in v:
                        parts.append(self._repr(x, depth + 1, seen, budget))
                seen.discard(id(v))
                inner = ", ".join(parts)
                if t is list:
                    s = f"[{inner}]"
                elif t is tuple:
                    s = f"({inner},)" if len(parts) == 1 else f"({inner})"
                elif t is dict:
                    s = "{" + inner + "}"
                elif not parts:
                    s = f"{t.__name__}()"
                elif t is set:
                    s = "{" + inner + "}"
                else:
                    s = f"frozenset({{{inner}}})"
        elif t in _INTERP_TYPES:
            s = repr(v)
        elif isinstance(v, type):
            name = self.B.class_names.get(v) if self.B is not None else None
            s = f"<class '{name or v.__name__}'>"
        else:
            if self.B is not None:
                self.text_size_check(v)
            s = scrub(repr(v))
        budget[0] -= len(s)
        if budget[0] < 0:
            raise LimitError(f"the text of this value would be longer than {self.max_out:,} characters (limit "
                             f"max_output_bytes = {self.max_out:,})")
        return s

    def emit(self, text):
        n = len(text.encode("utf-8", "replace"))
        if self.out_bytes + n > self.max_out:
            room = self.max_out - self.out_bytes
            part = text.encode("utf-8", "replace")[:max(room, 0)].decode("utf-8", "ignore")
            if part:
                self.out.append(part)
                self.out_bytes += len(part.encode("utf-8"))
                if self.on_print is not None:
                    self.on_print(part)
            raise LimitError(f"printed output exceeded {self.max_out:,} bytes (limit max_output_bytes = "
                             f"{self.max_out:,})")
        self.out.append(text)
        self.out_bytes += n
        if self.on_print is not None:
            self.on_print(text)

    # ================================================================= builtins
    def _make_builtins(self):
        take = self.take

        def _print(*args, sep=" ", end="\n", file=None, flush=False):
            if file is not None:
                raise TypeError("print(file=...) is not supported in flowgrad programs")
            if sep is None:
                sep = " "
            if end is None:
                end = "\n"
            if type(sep) is not str or type(end) is not str:
                raise TypeError("sep and end must be None or a string")
            parts = []
            total = len(end)
            room = self.max_out - self.out_bytes
            for a in args:
                s = self.to_str(a)
                total += len(s) + len(sep)
                parts.append(s)
                if total > room:  # more characters than bytes left: emit what fits, then fail
                    break
            self.emit(sep.join(parts) + end)

        def _len(x):
            if isinstance(x, (UserInstance, UserClass, UserFunction, BoundMethod, ModuleProxy, Builtin)):
                raise TypeError(f"object of type '{self.type_name(x)}' has no len()")
            return len(x)

        def _sum(iterable, start=0):
            items = take(iterable)
            total = start
            for i, x in enumerate(items):
                total = self.binop(ast.Add, total, x, _NODE0)
                if not (i & 1023):
                    self._check_time()
            return total

        def _minmax(fn, name):
            def inner(*args, **kwargs):
                if not args:
                    raise TypeError(f"{name} expected at least 1 argument, got 0")
                if len(args) == 1:
                    return fn(take(args[0]), **kwargs)
                return fn(*args, **kwargs)
            return inner

        def _sorted(iterable, key=None, reverse=False):
            items = take(iterable)
            self.alloc(len(items), "list")
            return sorted(items, key=key, reverse=reverse)

        def _any(iterable):
            return any(take(iterable))

        def _all(iterable):
            return all(take(iterable))

        def _round(number, ndigits=None):
            if ndigits is not None and type(ndigits) in _INT_TYPES and abs(ndigits) > 1000:
                raise LimitError(f"round() ndigits {ndigits:,} is larger than the limit 1000")
            return round(number) if ndigits is None else round(number, ndigits)

        def _int(x=0, base=_MISSING):
            r = int(x) if base is _MISSING else int(x, base)
            if type(r) is int and r.bit_length() > self.max_bits:
                raise self._int_limit(r.bit_length())
            return r

        def _str(*args):
            if not args:
                return ""
            if len(args) > 1:
                raise TypeError("str() with an encoding is not supported in flowgrad programs")
            return self.to_str(args[0])

        def _list(iterable=()):
            items = take(iterable)
            self.alloc(len(items), "list")
            return list(items)

        def _tuple(iterable=()):
            items = take(iterable)
            self.alloc(len(items), "tuple")
            return tuple(items)

        def _set(iterable=()):
            items = take(iterable)
            self.alloc(len(items), "set")
            return set(items)

        def _dict(*args, **kwargs):
            if len(args) > 1:
                raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
            d = {}
            if args:
                a = args[0]
                d = dict(a) if type(a) is dict else dict(take(a))
            d.update(kwargs)
            self.alloc(len(d), "dict")
            return d

        def _isinstance(obj, classinfo):
            if type(classinfo) is tuple:
                return any(_isinstance(obj, c) for c in classinfo)
            if type(classinfo) is BuiltinType:
                return isinstance(obj, classinfo.pytype)
            if type(classinfo) is UserClass:
                t = type(obj)
                if t is UserInstance:
                    return classinfo in obj.cls.mro
                if self.B is not None and isinstance(obj, self.B.UserModule):
                    return classinfo in obj.__dict__["_fg_cls"].mro
                return False
            if isinstance(classinfo, type) and type(classinfo) is type:
                return isinstance(obj, classinfo)
            if type(classinfo) is TypeView:
                return isinstance(obj, classinfo.cls)
            raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")

        def _repr(x):
            return self.repr_value(x)

        def _format(value, spec=""):
            return self.format_value(value, spec)

        def _enumerate(iterable, start=0):
            return enumerate(self._iter(iterable), start)

        def _zip(*iterables, strict=False):
            return zip(*[self._iter(i) for i in iterables], strict=strict)

        def _reversed(seq):
            if type(seq) not in (list, tuple, str, range, dict) and not (
                    self.B is not None and isinstance(seq, (self.B.Tensor, self.B.Module))):
                seq = take(seq)
            return reversed(seq)

        def _map(fn, *iterables):
            return map(fn, *[self._iter(i) for i in iterables])

        def _filter(fn, iterable):
            return filter(fn, self._iter(iterable))

        def _iter(x):
            return self._iter(x)

        def _next(it, *default):
            if not hasattr(type(it), "__next__") or type(it) in (UserInstance,):
                raise TypeError(f"'{self.type_name(it)}' object is not an iterator")
            return next(it, *default)

        def _float(x=0.0):
            return float(x)

        def _bool(x=False):
            return bool(x)

        def _type(*args):
            if len(args) != 1:
                raise TypeError("type() takes 1 argument in flowgrad programs")
            return self.type_of(args[0])

        def _callable(x):
            return callable(x) and type(x) not in (UserInstance,)

        def _divmod(a, b):
            return divmod(a, b)

        def _chr(i):
            return chr(i)

        def _ord(c):
            return ord(c)

        b = {
            "print": Builtin("print", _print), "len": Builtin("len", _len), "range": Builtin("range", range),
            "enumerate": Builtin("enumerate", _enumerate), "zip": Builtin("zip", _zip),
            "min": Builtin("min", _minmax(min, "min")), "max": Builtin("max", _minmax(max, "max")),
            "abs": Builtin("abs", abs), "round": Builtin("round", _round), "sum": Builtin("sum", _sum),
            "isinstance": Builtin("isinstance", _isinstance), "sorted": Builtin("sorted", _sorted),
            "reversed": Builtin("reversed", _reversed), "any": Builtin("any", _any), "all": Builtin("all", _all),
            "repr": Builtin("repr", _repr), "format": Builtin("format", _format), "map": Builtin("map", _map),
            "filter": Builtin("filter", _filter), "iter": Builtin("iter", _iter), "next": Builtin("next", _next),
            "callable": Builtin("callable", _callable), "type": Builtin("type", _type), "divmod": Builtin("divmod", _divmod),
            "chr": Builtin("chr", _chr), "ord": Builtin("ord", _ord),
            "float": BuiltinType("float", float, _float), "int": BuiltinType("int", int, _int),
            "bool": BuiltinType("bool", bool, _bool), "str": BuiltinType("str", str, _str),
            "list": BuiltinType("list", list, _list), "tuple": BuiltinType("tuple", tuple, _tuple),
            "dict": BuiltinType("dict", dict, _dict), "set": BuiltinType("set", set, _set),
            "super": SUPER, "__name__": "__main__",
        }
        B = self.B
        if B is not None:
            b.update(B.bare)
        else:
            from .policy import MATH_NAMES
            b["math"] = ModuleProxy("math", {n: getattr(math, n) for n in MATH_NAMES if hasattr(math, n)})
        return b


_SIZED = (list, tuple, str, dict, set, frozenset)
_COPIES = frozenset({set, frozenset, dict})
_BIT_OPS = frozenset({ast.BitAnd, ast.BitOr, ast.BitXor})
_INTERP_TYPES = frozenset({UserInstance, UserClass, UserFunction, BoundMethod, Builtin, BuiltinType, ModuleProxy,
                           SuperProxy, TypeView})
_NODE0 = ast.Constant(value=None, lineno=None, col_offset=None)

# ---------------------------------------------------------------- attribute tables of plain values
_BASIC_ATTRS = {
    str: policy.STR_ATTRS, list: policy.LIST_ATTRS, tuple: policy.TUPLE_ATTRS, dict: policy.DICT_ATTRS,
    set: policy.SET_ATTRS, frozenset: policy.SET_ATTRS, int: policy.INT_ATTRS, bool: policy.INT_ATTRS,
    float: policy.FLOAT_ATTRS, range: policy.RANGE_ATTRS, slice: policy.SLICE_ATTRS,
}


def _str_format(interp, s):
    return lambda *args, **kwargs: interp.safe_format(s, args, kwargs)


def _str_join(interp, s):
    def join(iterable):
        items = interp.take(iterable)
        total = len(s) * max(len(items) - 1, 0)
        for x in items:
            if type(x) is str:
                total += len(x)
        interp.alloc(total, "string")
        return s.join(items)
    return join


def _str_replace(interp, s):
    def replace(old, new, count=-1):
        if type(old) is str and type(new) is str and len(new) > len(old):
            n = s.count(old) if old else len(s) + 1
            if count is not None and count >= 0:
                n = min(n, count)
            interp.alloc(len(s) + n * (len(new) - len(old)), "string")
        return s.replace(old, new, count)
    return replace


def _str_pad(name):
    def factory(interp, s):
        method = getattr(s, name)

        def pad(width, *args):
            if type(width) in _INT_TYPES:
                interp.alloc(width, "string")
            return method(width, *args)
        return pad
    return factory


def _tensor_tolist(interp, t):
    def tolist():
        interp.alloc(t.numel(), "list")
        return t.tolist()
    return tolist


def _list_extend(interp, xs):
    def extend(iterable):
        items = interp.take(iterable)
        interp.alloc(len(xs) + len(items), "list")
        xs.extend(items)
    return extend


def _set_method(name):
    def factory(interp, s):
        method = getattr(s, name)

        def call(*others):
            return method(*[interp.take(o) if type(o) not in (set, frozenset, dict) else o for o in others])
        return call
    return factory


def _dict_update(interp, d):
    def update(*args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 argument, got {len(args)}")
        if args:
            a = args[0]
            d.update(a if type(a) is dict else interp.take(a))
        d.update(kwargs)
    return update


def _list_index(interp, xs):
    # list.index's error message is the repr of the value, made in C: of a list sharing its sublists
    # [[[0] * 1000] * 1000] * 1000 that is 3 GB of text. operator.indexOf says "not in sequence".
    def index(value, start=0, stop=sys.maxsize):
        start, stop, _ = slice(start, stop).indices(len(xs))
        return operator.indexOf(itertools.islice(xs, start, stop), value) + start
    return index


def _copy(interp, obj):
    def copy():
        interp.alloc(len(obj))
        return obj.copy()
    return copy


_SPECIAL = {(list, "copy"): _copy, (dict, "copy"): _copy, (set, "copy"): _copy,
            (str, "format"): _str_format, (str, "join"): _str_join, (str, "replace"): _str_replace,
            (list, "extend"): _list_extend, (dict, "update"): _dict_update, (list, "index"): _list_index}
for _n in ("center", "ljust", "rjust", "zfill"):
    _SPECIAL[(str, _n)] = _str_pad(_n)
for _t in (set, frozenset):
    for _n in ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
               "isdisjoint", "update"):
        _SPECIAL[(_t, _n)] = _set_method(_n)


# ================================================================= public entry point
def run_program(source: str, limits: SandboxLimits | None = None, *, recorder=None, on_print=None) -> RunOutcome:
    """Run an untrusted program; never raises for anything the program does."""
    limits = limits or SandboxLimits()
    backend = load_backend(ENGINE_MODULE)
    try:
        interp = Interpreter(limits, recorder, on_print, backend)
    except Exception as e:  # pragma: no cover - a broken engine import
        return RunOutcome("", {"type": type(e).__name__, "message": scrub(str(e)), "line": None, "column": None}, {})
    return interp.run(source)
