"""The evaluator core: `run_program`, the Interpreter, statements, assignment, names and types.

User text never reaches `eval`, `exec` or `compile`. The checked tree is compiled once into Python
closures (`compiler`); node types it has no closure for are evaluated by methods dispatched on the node
type (`ex_<Stmt>` here, `ev_<Expr>` in `expressions`); every value a
program can touch is a plain Python value, an engine object reached through the allowlists
(`names`, `attributes`), or an interpreter object from `objects`. The Interpreter is assembled from
one mixin per job: budgets and limits (`budgets`), text formatting (`formatting`), the attribute
policy (`attributes`), expressions and calls; tensor sizes and graph nodes are limited inside the
engine (`Backend.limited`).
"""

from __future__ import annotations

import ast
import collections
import contextlib
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import files, plots
from .attributes import Attributes
from .backend import Backend
from .budgets import TAIL_SHARE, TIME_CHECK_EVERY, WALL_SHARE, Budgets, SandboxLimits
from .builtin_functions import FORBIDDEN_BUILTINS, make_builtins, random_module
from .calls import Calls
from .checks import parse_program
from .compiler import Compiler
from .errors import LimitError, ProgramError, scrub
from .expressions import Expressions
from .flow import CATCHABLE_BASES, Flow, UserGenerator
from .formatting import FakeAddresses, Formatting
from .numpy_module import IndexTrick, gate_of, numpy_module
from .objects import (
    CLASS,
    EXCEPTIONS_BY_NAME,
    INTERP_TYPES,
    MISSING,
    PRIMITIVES,
    SCALARS,
    SUBSCRIPTABLE,
    USER_EXCEPTION_TYPES,
    BoundMethod,
    Builtin,
    BuiltinClass,
    BuiltinType,
    ModuleProxy,
    NamedTupleValue,
    NumpyRandomState,
    RandomObject,
    Scope,
    TypeView,
    UserClass,
    UserFunction,
    UserInstance,
)
from .stdlib import COLLECTION_TYPES, STDLIB_NAMES, Stdlib, math_module
from .stdlib_re import RegexMatch
from .stdlib_tools import TypeHint, exit_message
from .suggest import did_you_mean


@dataclass
class RunOutcome:
    stdout: str
    error: dict | None
    globals: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)  # [{"svg", "at"}]: plots, `at` = characters printed before each
    # why the printed output was cut (past max_output_bytes: its first part and last lines kept), None if it was not
    output_cut: str | None = None


def run_program(source: str, limits: SandboxLimits, backend: Backend, *, recorder=None, on_print=None,
                on_figure=None) -> RunOutcome:
    """Run an untrusted program on the engine `backend` (`backend_for(engine)`) within `limits`; never
    raises for anything the program does. `on_figure({"svg", "at"})` is called as each figure is shown."""
    interp = Interpreter(limits, backend, recorder, on_print)
    interp.on_figure = on_figure
    return interp.run(source)


# modules a run builds for itself (per-run state), besides the Backend's proxies
EXTRA_MODULES = ("random", "numpy", "numpy.random", "numpy.linalg", "matplotlib.pyplot", "io")


class Interpreter(Compiler, Attributes, Budgets, Formatting, Expressions, Calls, Flow, Stdlib):
    # the attributes read on every statement, call or print: slots, which CPython reads and writes faster than the
    # instance's (large) __dict__; every other attribute lives there. Each is set in __init__.
    __slots__ = ("steps", "next_check", "max_loop", "max_bits", "max_seq", "max_out", "out", "out_bytes",
                 "out_unheld", "held", "cut", "allocated", "on_print", "rec", "depth")

    def __init__(self, limits: SandboxLimits, backend: Backend, recorder=None, on_print=None):
        self.limits = limits
        self.B = backend
        self.rec = recorder
        self.on_print = on_print
        self.on_figure = None  # run_program's: called with each figure as it is shown (streamed in order with stdout)
        self.max_steps = limits.max_steps
        self.max_loop = limits.max_loop_iterations
        self.max_bits = limits.max_int_bits
        self.max_seq = limits.max_live_elements
        self.max_out = limits.max_output_bytes
        self.steps = 0
        self.next_check = min(TIME_CHECK_EVERY, self.max_steps + 1)
        self.deadline = None  # in `clock()` seconds: CPU time plus time slept
        self.slept = 0.0
        self.wall_deadline = None  # time.monotonic() when the run ends itself before the worker's hard kill
        self.cpu_clock_due = 0.0  # time.monotonic() from which the next clock check reads the CPU clock (budgets.py)
        self.depth = 0
        self.out: list[str] = []
        self.out_bytes = 0
        self.out_unheld = self.max_out - self.max_out // TAIL_SHARE  # printed bytes sent on as they come (emit)
        # printed output past max_output_bytes (budgets.emit): held back near the limit, then cut
        self.held: list[str] = []
        self.held_bytes = 0
        self.cut = False
        self.cut_bytes = 0
        self.cut_lines = 0
        self.tail: list[str] = []
        self.tail_bytes = 0
        self.tail_whole = True  # self.tail starts at the start of a line
        self.allocated = 0
        self.links = 0
        self.imported: dict[str, object] = {}
        self.globals: dict[str, object] = {}
        self.tensor_type = backend.Tensor
        self.parameter_type = backend.Parameter
        # What an assignment names for the recorder: tensors, and modules (which name their parameters).
        self.nameable_types = (backend.Tensor, backend.Module)
        self._attr_rules: dict = {}
        self.addresses = FakeAddresses()  # the stand-ins every repr and message of this run shows
        self._random = None
        self._yield_cache = {}  # function node -> its statements with a `yield` (flow.py)
        self._decl_cache = {}  # function node -> its global/nonlocal names (calls.py)
        self._constant_specs = {}  # f-string format-spec node without fields -> its text (formatting.py)
        self._checked_specs = set()  # format specs that passed the checks (formatting.py)
        self.has_properties = False  # a program made a property: attribute assignments look for setters
        self._numpy = None  # (numpy, numpy.random) proxies, made on first import
        self._code = {}  # node -> its closure (compiler.py)
        self.engine_module_types = set()  # engine nn.Module classes a program called through `call` (calls.py)
        self.engine_functions = set()  # engine functions a program called through `call` (calls.py)
        self._blocks = {}  # id(list of statements) -> (the list, its closure); statement -> its block (compiler.py)
        self._ev = {}
        self._ex = {}
        for name in dir(self):
            if name.startswith("ev_"):
                self._ev[getattr(ast, name[3:])] = getattr(self, name)
            elif name.startswith("ex_"):
                self._ex[getattr(ast, name[3:])] = getattr(self, name)
        self._stdlib = {}  # standard-library modules imported by this run (stdlib.py)
        self.own_collections = {}  # id -> (a weak reference to) the OrderedDicts, deques... the program made (`Stdlib.own`)
        self.builtins = make_builtins(self)
        # torch with this run's save/load (files.py: the run's in-memory files)
        self.torch = self.builtins["torch"] = files.torch_module_for(self, backend.modules["torch"])
        math_proxy = backend.modules.get("math")
        if math_proxy is not None:  # `math`, bound without import too: with the bounded integer functions
            self._stdlib["math"] = self.builtins["math"] = math_module(self, math_proxy)

    # ================================================================= running
    def run(self, source: str) -> RunOutcome:
        error = None
        try:
            tree = parse_program(source, self.limits)
            self.wall_deadline = time.monotonic() + WALL_SHARE * self.limits.max_wall_s
            self.deadline = self.clock() + self.limits.time_limit_s
            with self._engine_context():
                self.exec_block(tree.body, Scope(self.globals))
        except ProgramError as e:
            error = e.to_dict()
            if isinstance(e.value, SystemExit):  # why it stopped, in words (Python's str of SystemExit() is empty)
                error["message"] = exit_message(self, e.value.code)
        except RecursionError:
            error = {"type": "RecursionError", "message": "maximum recursion depth exceeded", "line": None,
                     "column": None}
        except MemoryError:
            error = {"type": "MemoryError", "message": "out of memory", "line": None, "column": None}
        except Exception as e:  # an engine limit raised outside any statement, or an interpreter bug
            error = {"type": type(e).__name__, "message": self.scrub_message(str(e)), "line": None, "column": None}
        try:
            output_cut = self.finish_output()
        except Exception:  # noqa: BLE001 - the caller's on_print failed: what was kept stays in stdout
            output_cut = None
        figures = []
        plot_gate = self.__dict__.get("plot_gate")
        if plot_gate is not None:  # the figures still open at the end are shown, as a notebook shows them
            try:
                figures = plot_gate.finish()
            except Exception as e:  # noqa: BLE001 - a figure over its limits: the run's error, if it had none
                figures = plot_gate.rendered
                if error is None:
                    error = self._wrap(e, None).to_dict()
        return RunOutcome(stdout="".join(self.out), error=error, globals=self._user_globals(), figures=figures,
                          output_cut=output_cut)

    @contextlib.contextmanager
    def _engine_context(self):
        B = self.B
        state = B.state
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 8000))
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            stack.enter_context(B.fp_warnings_silenced())  # numpy's errstate, all ignored; the engine told so
            prev_recorder = state.recorder
            # torch.set_grad_enabled(False) as a plain call outlives the program: not its caller's code
            stack.callback(setattr, state, "grad_enabled", state.grad_enabled)
            B.reset_run_state()
            # the engine's own loops over a program's work (jacobian rows, vmap, gradcheck) count steps and time
            state.tick = self.tick
            stack.callback(setattr, state, "tick", None)
            if self.rec is not None:
                stack.callback(setattr, state, "recorder", prev_recorder)
                if state.recorder is not self.rec and hasattr(self.rec, "__enter__"):
                    stack.enter_context(self.rec)
                watch_loops = getattr(self.rec, "watch_loops", None)
                if watch_loops is not None:  # the recorder forecasts the passes still to come from the loops
                    watch_loops(self.loop_forecast)
                    stack.callback(watch_loops, None)
            lim = self.limits
            stack.enter_context(B.limited(max_tensor_elements=lim.max_tensor_elements,
                                          max_live_elements=lim.max_live_elements, max_graph_nodes=lim.max_graph_nodes,
                                          max_text_chars=4 * lim.max_output_bytes, max_op_flops=lim.max_op_flops))
            try:
                yield
            finally:
                sys.setrecursionlimit(old_limit)

    def _user_globals(self):
        imported = self.imported
        return {k: v for k, v in self.globals.items()
                if type(v) is not ModuleProxy and not (k in imported and imported[k] is v)}

    # ================================================================= errors
    def _wrap(self, e: BaseException, node) -> ProgramError:
        """A Python or engine exception as the program's error, at `node` (a ProgramError as it is)."""
        if isinstance(e, ProgramError):
            return e
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        if isinstance(e, self.B.LimitExceeded):
            return ProgramError("LimitExceeded", self.scrub_message(str(e)), line, col)
        if isinstance(e, RecursionError):
            return ProgramError("RecursionError", "maximum recursion depth exceeded", line, col)
        if isinstance(e, MemoryError):
            return ProgramError("MemoryError", "out of memory", line, col)
        exc_args = None
        try:
            if not e.args:
                exc_args = ()
            if isinstance(e, KeyError) and len(e.args) == 1 and type(e.args[0]) in PRIMITIVES:
                key = e.args[0]
                msg = repr(key[:200] + "…" if type(key) is str and len(key) > 200 else key)
                if type(key) is not str or len(key) <= 200:
                    exc_args = e.args
            elif isinstance(e, KeyError) and len(e.args) == 1:  # a tuple key: str(e) would repr it in C, unbounded
                try:
                    msg = self.repr_value(e.args[0])
                except LimitError:
                    msg = "<a key too long to show>"
            else:
                msg = str(e)
        except Exception:  # a message that cannot be rendered (too large, ...)
            msg = type(e).__name__
        pe = ProgramError(type(e).__name__, self.scrub_message(msg), line, col)
        pe.exc_args = exc_args
        if type(e) in self.B.program_exception_classes:  # GradcheckError: caught as itself, as under torch
            pe.exc_class = type(e)
        elif pe.type_name not in EXCEPTIONS_BY_NAME:  # UnicodeDecodeError: caught as the ValueError it is
            pe.exc_class = next((c for c in type(e).__mro__ if c in CATCHABLE_BASES), None)
        return pe

    def scrub_message(self, message: str) -> str:
        """An exception's message as the program sees it: no host paths, the run's stand-in addresses,
        torch's names for engine classes (`errors.scrub`, `Backend.torch_names_in`)."""
        return scrub(self.B.torch_names_in(message), self.addresses)

    def _at(self, e: BaseException, node) -> ProgramError:
        """`_wrap`, and a ProgramError without a location gets `node`'s: errors point at the innermost
        expression or statement."""
        if isinstance(e, ProgramError):
            if e.line is None:
                e.line, e.column = node.lineno, node.col_offset
            return e
        return self._wrap(e, node)

    # ================================================================= statements (the rest: compiler.py)
    def ex_AnnAssign(self, node, scope):
        if scope.kind == CLASS and node.simple and type(node.target) is ast.Name:
            names = scope.annotations
            if node.target.id not in names:
                names.append(node.target.id)
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

    def iterate(self, v):
        """`iter(v)`; for an interpreter object, the error names the type the program sees."""
        if type(v) in INTERP_TYPES and type(v) is not UserGenerator and type(v) is not UserInstance:
            raise TypeError(f"'{self.type_name(v)}' object is not iterable")
        return iter(v)

    def ex_Import(self, node, scope):
        for alias in node.names:
            mod = self._import(alias.name, node)
            if alias.asname:
                name, value = alias.asname, mod
            else:
                name = alias.name.split(".")[0]
                value = self._import(name, node)
            self._bind_import(scope, name, value)

    def ex_ImportFrom(self, node, scope):
        mod = self._import(node.module or "", node)
        for alias in node.names:
            value = mod.attrs.get(alias.name, MISSING)
            if value is MISSING:
                value = self.B.modules.get(f"{node.module}.{alias.name}", MISSING)
            if value is MISSING:
                raise ProgramError("ImportError", f"cannot import name '{alias.name}' from '{node.module}'"
                                   " (not available in flowgrad)", node.lineno, node.col_offset)
            self._bind_import(scope, alias.asname or alias.name, value)

    def _bind_import(self, scope, name, value):
        scope.vars[name] = value
        if scope.vars is self.globals:
            self.imported[name] = value  # left out of the run's globals

    def _import(self, name, node):
        if name == "random":
            if self._random is None:
                self._random = random_module(self)
            return self._random
        if name in ("numpy", "numpy.random", "numpy.linalg"):  # per run: np.random is the run's own RandomState
            if self._numpy is None:
                self._numpy = numpy_module(self)
            if name == "numpy.linalg":
                return self._numpy[0].attrs["linalg"]
            return self._numpy[name == "numpy.random"]
        if name in ("matplotlib", "matplotlib.pyplot"):
            return plots.module_for(self, name)
        if name == "torch":
            return self.torch
        if name == "io":
            return files.io_module(self)
        mod = self.stdlib_module(name) or self.B.modules.get(name)
        if mod is None:
            avail = ", ".join(sorted({*self.B.modules, *STDLIB_NAMES, "random", *EXTRA_MODULES}))
            raise ProgramError("ModuleNotFoundError", f"No module named '{name}' (flowgrad programs can import "
                               f"{avail})", node.lineno, node.col_offset)
        return mod

    def ex_Delete(self, node, scope):
        for target in node.targets:
            self._delete(target, scope, node)

    def _delete(self, target, scope, node):
        t = type(target)
        if t is ast.Name:
            if target.id not in scope.vars:
                raise NameError(f"name '{target.id}' is not defined")
            del scope.vars[target.id]
        elif t is ast.Subscript:
            obj = self.ev(target.value, scope)
            key = self.ev(target.slice, scope)
            if isinstance(obj, self.B.Module) and hasattr(type(obj), "__delitem__"):  # ModuleDict, ParameterDict
                self.check_data(key)
            elif type(obj) not in (list, dict, UserInstance) and not self.owns(obj):
                raise TypeError(f"'{self.type_name(obj)}' object doesn't support item deletion")
            del obj[key]
        elif t in (ast.Tuple, ast.List):
            for e in target.elts:
                self._delete(e, scope, node)
        else:
            raise ProgramError("NotImplementedError", "this 'del' target is not supported", node.lineno,
                               node.col_offset)

    # ================================================================= assignment and items
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
        items = value if type(value) in (list, tuple) else self.take(self.iterate(value))
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

    def set_item(self, obj, key, value):
        t = type(obj)
        if t is list and type(key) is slice:
            # slice assignment consumes any iterable in C: bound it first
            if type(value) not in (list, tuple):
                value = self.take(value)
            self.alloc(len(obj) + len(value), "list")
            obj[key] = value
            return
        if t is list or t is dict or t is UserInstance or (t in COLLECTION_TYPES and self.owns(obj)):
            obj[key] = value
            return
        if t is self.tensor_type or t is self.parameter_type:  # (the isinstance branch below, taken directly)
            self.check_data(key, value)
            obj[key] = value
            return
        if t is np.ndarray:
            gate_of(self).set_item(obj, key, value)
            return
        if isinstance(obj, (self.B.Tensor, self.B.Module)) and hasattr(t, "__setitem__"):
            self.check_data(key, value)
            if isinstance(obj, self.B.Module):  # `md[key] = v`: the key becomes a registered name (add_module's)
                self.check_data(key, names=True)
                if isinstance(value, self.B.Module):
                    self.module_links(1)
            obj[key] = value
            return
        if t is collections.defaultdict and obj.default_factory is dict and isinstance(key, self.B.Tensor):
            # an optimizer's state (the engine's only defaultdict): `opt.state[p] = {}` resets a parameter's state;
            # what the optimizer reads back is what it keeps there, tensors and numbers under names
            if type(value) is not dict or not all(type(k) is str and (isinstance(v, self.B.Tensor) or type(v) in SCALARS)
                                                  for k, v in value.items()):
                raise TypeError("optimizer.state[param] takes a dict of tensors and numbers (the parameter's state) in "
                                f"flowgrad programs, not {self.type_name(value)}")
            obj[key] = value
            return
        raise TypeError(f"'{self.type_name(obj)}' object does not support item assignment")

    def get_item(self, obj, key):
        t = type(obj)
        if t in SUBSCRIPTABLE:
            if type(key) is slice and t is not dict and t is not range:
                r = obj[key]
                self.alloc(len(r))  # slices copy
                return r
            return obj[key]
        if t is self.tensor_type or t is self.parameter_type:  # (the isinstance branch below, taken directly)
            if type(key) not in SCALARS:  # (a number counts nothing)
                self.check_data(key)
            return obj[key]
        if t is UserInstance or t is TypeHint or t is IndexTrick or t is RegexMatch:  # __getitem__, List[int], np.c_, m[0]
            return obj[key]
        B = self.B
        if t is np.ndarray:
            return gate_of(self).get_item(obj, key)
        if isinstance(obj, (B.Tensor, B.Module, list, tuple, dict, *COLLECTION_TYPES)) and hasattr(t, "__getitem__"):
            self.check_data(key)
            return obj[key]
        if B.TypedStorage is not None and isinstance(obj, B.TypedStorage) and type(key) in (int, bool, slice):
            if type(key) is slice:  # storage[a:b]: a list of its elements
                self.alloc(len(range(*key.indices(len(obj)))), "list")
            return obj[key]
        if B.Dataset is not None and isinstance(obj, B.Dataset):  # TensorDataset, Subset, user subclasses
            self.check_data(key)
            return obj[key]
        raise TypeError(f"'{self.type_name(obj)}' object is not subscriptable")

    # ================================================================= names and types
    def lookup(self, name, scope, node=None):
        d = scope.vars
        if name in d:
            return d[name]
        s = scope.parent
        while s is not None:
            if s.kind != CLASS and name in s.vars:
                return s.vars[name]
            s = s.parent
        v = self.builtins.get(name, MISSING)
        if v is not MISSING:
            return v
        if name in FORBIDDEN_BUILTINS:
            raise NameError(f"name '{name}' is not defined ({name} is not available in flowgrad programs)")
        raise NameError(f"name '{name}' is not defined" + self._name_hint(name, scope))

    def _name_hint(self, name, scope):
        """CPython's "Did you mean: 'loss'?" over the names this line can see."""
        seen, s = set(self.builtins), scope
        while s is not None:
            seen.update(s.vars)
            s = s.parent
        return did_you_mean(name, seen)

    def type_of(self, obj):
        """`type(obj)`: a user class, a builtin type, a reachable engine class, or a display-only TypeView."""
        t = type(obj)
        if t is UserInstance:
            return obj.cls
        if t in USER_EXCEPTION_TYPES or t is NamedTupleValue:
            return obj.__dict__["_fg_cls"]
        bt = self.builtins.get(t.__name__)
        if type(bt) is BuiltinType and bt.pytype is t:
            return bt
        if t in self.B.exception_types:  # `type(e) is torch.linalg.LinAlgError`
            return self.B.exception_types[t]
        if isinstance(obj, self.B.UserModule) or t is self.B.UserDataset:
            return obj.__dict__["_fg_cls"]
        if t in self.B.class_names:
            return t
        if t in (UserClass, BuiltinType, BuiltinClass, TypeView):
            return TypeView("type", type)
        if t in (UserFunction, BoundMethod, Builtin):
            return TypeView("function", UserFunction)
        if t is ModuleProxy:
            return TypeView("module", ModuleProxy)
        if t is UserGenerator:
            return TypeView("generator", UserGenerator)
        if t is RandomObject:
            return TypeView("random.Random", RandomObject)
        if t is NumpyRandomState:
            return TypeView("numpy.random.mtrand.RandomState", NumpyRandomState)
        if t.__module__ in ("collections", "itertools", "functools"):  # `<class 'collections.deque'>`
            return TypeView(f"{t.__module__}.{t.__qualname__}", t)
        return TypeView(self.B.display_name(t) if t.__module__ != "builtins" else self.type_name(obj), t)

    def type_name(self, obj):
        t = type(obj)
        if t is UserInstance:
            return obj.cls.name
        if t in USER_EXCEPTION_TYPES or t is NamedTupleValue:
            return obj.__dict__["_fg_cls"].name
        if t is UserClass:
            return "type"
        if t in (UserFunction, BoundMethod, Builtin):
            return "function"
        if t is BuiltinType or t is BuiltinClass or t is TypeView:
            return "type"
        if t is ModuleProxy:
            return "module"
        if isinstance(obj, self.B.UserModule) or t is self.B.UserDataset:
            return obj.__dict__["_fg_cls"].name
        return t.__name__
