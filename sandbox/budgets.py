"""Budgets and limits: what a run may spend (steps, time, loop iterations, list/string items, integer
bits, printed bytes, data handed to the engine), and the checks that spend it.

`SandboxLimits` holds the configurable limits; it has no defaults: the caller passes every value (the
server from its `Settings`). The constants below are fixed properties of the interpreter, not settings.
Every limit message is built by `errors.limit_error`.
"""

from __future__ import annotations

import ast
import math
import operator
import time
import types
import weakref
from dataclasses import dataclass

import numpy as np

from .errors import LimitError, limit_error
from .objects import CONTAINERS, INTERP_TYPES, INTS, SCALARS

# a loop holding one of these may end before its last item: no forecast from it
_EARLY_EXITS = (ast.Break, ast.Return, ast.Raise)
_PLAIN_LOOPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # loop node -> whether it has none


def elements(tensor) -> int:
    """A tensor's elements as the budgets count them: none for a lazy layer's parameter before its first forward
    (whose numel() refuses, as PyTorch's does)."""
    return 0 if tensor._uninitialized else tensor.numel()


@dataclass
class SandboxLimits:
    max_source_chars: int
    max_ast_depth: int
    max_ast_nodes: int
    max_loop_iterations: int
    max_steps: int
    max_int_bits: int
    max_output_bytes: int
    time_limit_s: float  # CPU seconds (plus seconds slept): `Budgets.clock`
    # the worker's wall-clock kill: a run on a machine so busy that it gets there first ends itself at
    # WALL_SHARE of it, gracefully (its passes and variables are kept), instead of being killed
    max_wall_s: float
    max_tensor_elements: int
    max_live_elements: int
    max_graph_nodes: int
    # plots (sandbox/plots.py)
    max_figures: int
    max_figure_points: int
    max_plot_label_chars: int
    max_figure_bytes: int
    max_op_flops: int
    # the run's in-memory files (sandbox/files.py): bytes of all of them (with what torch.save copied), and how many
    max_file_bytes: int
    max_files: int


MAX_CALL_DEPTH = 100  # nested user function calls
MAX_FORMAT_WIDTH = 1000  # width/precision in format specs
MAX_ROUND_DIGITS = 1000  # round(x, ndigits): |ndigits|
MAX_ENGINE_STRING = 200  # characters of a string handed to the engine (a module or parameter name, ...)
MAX_MODULE_LINKS = 1000  # modules attached to modules per run
ALLOC_FACTOR = 10  # a run may create at most this many times max_live_elements list/string items in total
TAIL_SHARE = 8  # once the output is cut, the last 1/8 of max_output_bytes keeps its last lines
TAIL_LINES = 20  # ... at most this many
WALL_SHARE = 0.8  # of max_wall_s (the worker's wall-clock kill): a run ends itself here, the rest ships its results
TIME_CHECK_EVERY = 16  # steps between clock checks (an engine op takes at most a few tens of ms)
# the CPU clock is a system call here (~3 us, 20x the monotonic clock): it is read when a millisecond of wall
# time has passed since its last reading (CPU time cannot outrun wall time by more than the threads running)
CPU_CLOCK_EVERY_S = 0.001
NO_NODE = ast.Constant(value=None, lineno=None, col_offset=None)  # the location of a step taken outside user code
# What `*` repeats and `+` concatenates: these types *and their subclasses* (torch.Size, namedtuples, numpy strings).
SEQUENCE_TYPES = (str, bytes, list, tuple)


class Budgets:
    """Mixed into the Interpreter: uses `self.limits`, `self.B` (the Backend) and the counters set in its
    `__init__` (steps, next_check, deadline, allocated, links, out, out_bytes)."""

    # ---------------------------------------------------------------- steps and time
    def clock(self) -> float:
        """The run's time: this process's CPU time plus the seconds the program slept (`time.sleep` costs no
        CPU, so it is counted here explicitly). CPU time, not wall time: load on the machine never changes
        where a program stops."""
        return time.process_time() + self.slept

    def _check(self, node):
        """Step budget and clock, every TIME_CHECK_EVERY steps."""
        if self.steps > self.max_steps:
            raise limit_error(f"program ran more than {self.max_steps:,} steps", "max_steps", self.max_steps,
                              node.lineno, node.col_offset)
        self.next_check = min(self.steps + TIME_CHECK_EVERY, self.max_steps + 1)
        self._check_clocks(node)

    def check_time(self):
        if self.deadline is not None:
            self._check_clocks(NO_NODE)

    def _check_clocks(self, node):
        """The run's own time (`clock`), then the wall-clock share of the worker's kill."""
        now = time.monotonic()
        if now >= self.cpu_clock_due:
            self.cpu_clock_due = now + CPU_CLOCK_EVERY_S
            if self.clock() > self.deadline:
                raise self._time_limit(node)
        if now > self.wall_deadline:
            raise self._wall_limit(node)

    def _time_limit(self, node):
        t = self.limits.time_limit_s
        e = limit_error(f"program ran longer than {t:g} s", "time_limit_s", float(t), node.lineno, node.col_offset)
        e.run_time_spent = True  # the outermost running loop restates it with how far it got (`loop_stopped`)
        return e

    # ---------------------------------------------------------------- the outermost running loop
    # (node, its length or None, items drawn): where a run stopped by its time budget says it got to
    outer_loop = None

    def loop_forecast(self):
        """(loop node, iterations, iterations begun) of the outermost loop running now when its length is known and
        nothing in it can leave it early (`break`, `return`, `raise` anywhere inside); else None. The recorder
        forecasts from it how many passes are still to come (app/runner/quiet.py)."""
        state = self.outer_loop
        if state is None or state[1] is None:
            return None
        node = state[0]
        plain = _PLAIN_LOOPS.get(node)
        if plain is None:
            plain = _PLAIN_LOOPS[node] = not any(type(n) in _EARLY_EXITS for n in ast.walk(node))
        return (node, state[1], state[2]) if plain else None

    def run_loop(self, node, total, run):
        """`run(state)`, a loop; the outermost one gets `state` ([node, total, items drawn]) and keeps its count
        of items in state[2], so that the time limit firing anywhere inside it (a call, a nested loop) says how
        far it got on that loop's line, not a line inside it. Inner loops get None."""
        if self.outer_loop is not None:
            return run(None)
        state = self.outer_loop = [node, total, 0]
        try:
            return run(state)
        except LimitError as e:
            if getattr(e, "run_time_spent", False):
                raise self.loop_stopped(node, state[2] - 1, total) from None
            raise
        finally:
            self.outer_loop = None

    def loop_stopped(self, node, done, total):
        t = self.limits.time_limit_s
        of = f" of {total:,}" if total is not None else ""
        plural = "" if done == 1 and total is None else "s"
        return limit_error(f"stopped after {done:,}{of} iteration{plural} of the loop on line {node.lineno}: the run "
                           f"used its {t:g} s", "time_limit_s", float(t), node.lineno, node.col_offset)

    def _wall_limit(self, node):
        """The run reached WALL_SHARE of the worker's wall-clock kill before its CPU time ran out: the machine is busy."""
        hard = float(self.limits.max_wall_s)
        used = self.clock() - (self.deadline - self.limits.time_limit_s)
        return limit_error(f"program was stopped after {WALL_SHARE * hard:g} s of wall time, having used {used:.2f} s "
                           f"of its {self.limits.time_limit_s:g} s of CPU time: the machine is busy", "max_wall_s", hard,
                           node.lineno, node.col_offset)

    def tick(self):
        """A step for a call made from engine code or a builtin (Module.apply(fn), sorted(key=...))."""
        self.steps += 1
        if self.steps >= self.next_check:
            self._check(NO_NODE)

    def _loop_limit(self, node):
        n = self.max_loop
        return limit_error(f"loop ran more than {n:,} iterations", "max_loop_iterations", n, node.lineno,
                           node.col_offset)

    # ---------------------------------------------------------------- list/string items
    def alloc(self, n, what="sequence"):
        """Account for a list/string of n items about to be created: per object and per run."""
        if type(n) is not int:
            n = operator.index(n)  # a count a program handed over (a tensor, a numpy integer): one int from here on
        if n > self.max_seq:
            raise self._seq_limit(n, what)
        if n:  # every size counts: 10**5 lists of 4,095 items are 3 GB as well
            self.allocated += n
            if self.allocated > ALLOC_FACTOR * self.max_seq:
                total = ALLOC_FACTOR * self.max_seq
                raise limit_error(f"this run created more than {total:,} list/string items in total",
                                  f"{ALLOC_FACTOR} × max_live_elements", total)

    def _seq_limit(self, n, what="sequence"):
        return limit_error(f"{what} would have {n:,} items", "max_live_elements", self.max_seq)

    def take(self, it, what="iterable"):
        """Materialise an iterable into a list, bounded in size and time."""
        t = type(it)
        if t is list:
            return it
        if t in CONTAINERS or t is str or t is range:
            self.alloc(len(it), what)
            return list(it)
        limit = self.max_seq
        try:
            n = len(it)
        except Exception:
            n = None
        if n is not None and n > limit:
            raise self._seq_limit(n, what)
        out = []
        append = out.append
        for i, x in enumerate(self.iterate(it)):
            if i >= limit:
                raise self._seq_limit(i + 1, what)
            if not (i & 63):  # an engine generator's items can be slow to make (named_parameters of deep modules)
                self.check_time()
            append(x)
        self.alloc(len(out), what)
        return out

    # ---------------------------------------------------------------- integers and sequence operators
    def int_limit(self, bits):
        return limit_error(f"integer result would have about {bits:,} bits", "max_int_bits", self.max_bits)

    def _check_int_op(self, op, a, b):
        max_bits = self.max_bits
        if op is ast.Pow:
            if b > 0 and abs(a) > 1:
                bits = b * math.log2(abs(a))
                if bits > max_bits:
                    raise self.int_limit(int(bits))
        elif op is ast.Mult:
            bits = a.bit_length() + b.bit_length()
            if bits > max_bits + 1:
                raise self.int_limit(bits)
        elif op is ast.LShift:
            if a and b > 0:
                bits = a.bit_length() + b
                if bits > max_bits:
                    raise self.int_limit(bits)

    def as_count(self, v):
        """The int Python reads from `v` where it wants a count or a size (`seq * v`, `s.center(v)`,
        `random.sample(xs, v)`, `round(x, v)`). Python takes anything with `__index__` there — a one-element
        integer tensor, a numpy integer — and builds the result in C, unchecked: read it once, here, so the
        check and the call see the same int. Anything else comes back as it is (the call raises its own
        TypeError)."""
        t = type(v)
        if t in INTS or t is float or not hasattr(t, "__index__"):
            return v
        try:
            return operator.index(v)
        except Exception:
            return v

    def list_items(self, shape):
        """Items of the nested lists `tolist()` builds for a tensor of `shape`: every element, and every list
        inside the outer one (an empty tensor of shape (10**5, 10**5, 0) is 10**10 empty lists); stops
        counting past the per-object limit."""
        total, level = 0, 1
        for d in shape:
            level *= int(d)
            total += level
            if total > self.max_seq:
                break
        return total

    def _check_seq_op(self, op, a, b, inplace):
        """Sequence `*` and `+` (and `*=`, `+=`) on str, bytes, list, tuple and their subclasses (torch.Size,
        the (values, indices) of max(dim)): the result's items are accounted before Python builds it. A
        repetition count that is not an int (`'a' * torch.tensor(10**9)`) is read through `as_count` and handed
        on as a plain int. Returns the operands to use."""
        if op is ast.Mult:
            if isinstance(a, SEQUENCE_TYPES):
                if isinstance(b, SEQUENCE_TYPES):
                    return a, b  # Python's TypeError
                seq, k = a, b
            elif isinstance(b, SEQUENCE_TYPES):
                seq, k = b, a
                if isinstance(a, self.tensor_type) and not isinstance(b, (str, bytes)):
                    return a, b  # tensor * list: the engine's elementwise product (the list is a tensor operand)
            else:
                return a, b
            if type(k) not in INTS:
                k = self.as_count(k)
                if type(k) is not int:
                    return a, b  # not a count: Python raises its own TypeError
                a, b = (seq, k) if seq is a else (k, seq)
            self.alloc(len(seq) * max(k, 0))
        elif op is ast.Add:
            if isinstance(a, SEQUENCE_TYPES) and isinstance(b, SEQUENCE_TYPES):
                self.alloc(len(a) + len(b))
            elif inplace and isinstance(a, list):
                # `xs += iterable` extends with any iterable: bound it first
                b = self.take(b)
                self.alloc(len(a) + len(b))
        return a, b

    def _check_broadcast(self, a, b):
        """Tensor `&` and `|` are numpy calls outside the engine's op table, unchecked by its limits:
        (100000, 1) & (1, 100000) would allocate 10 GB. Check the broadcast shape the way the engine does."""
        limits = getattr(self.B.state, "limits", None)
        if limits is None:
            return
        try:
            T = self.tensor_type
            shape = np.broadcast_shapes(*(tuple(v.shape) if isinstance(v, T) else np.shape(v) for v in (a, b)))
        except ValueError:
            return  # the operator reports the mismatch
        limits.before_alloc(shape)

    # ---------------------------------------------------------------- data handed to the engine
    def check_param_groups(self, groups):
        """`check_data(groups)` for an optimizer's param_groups (checked on every `step()`/`zero_grad()`): the
        engine's layout (dicts of names to numbers, tensors and flat lists or tuples of them) counted as the
        walk counts it; anything else, or a count past the limit, goes to `check_data` (and its error)."""
        if type(groups) is not list:
            return self.check_data(groups)
        T = self.tensor_type
        n = len(groups)
        for g in groups:
            if type(g) is not dict:
                return self.check_data(groups)
            n += 2 * len(g)
            for k, v in g.items():
                if type(k) is not str:
                    return self.check_data(groups)
                n += len(k)
                tv = type(v)
                if tv in SCALARS:
                    continue
                if tv is list or tv is tuple:
                    n += len(v)
                    for x in v:
                        if isinstance(x, T):
                            n += elements(x)
                        elif type(x) not in SCALARS:
                            return self.check_data(groups)
                elif isinstance(v, T):
                    n += elements(v)
                elif tv is str:
                    n += len(v)
                else:
                    return self.check_data(groups)
        if n > self.max_seq:
            return self.check_data(groups)
        return None

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
        T = self.tensor_type
        n = 0
        for v in values:  # the common case, numbers and tensors alone: counted without the walk below
            t = type(v)
            if t is T or t is self.parameter_type:
                n += v.numel()
            elif t is tuple:  # an index of numbers (`P[i, j]`): its length, as the walk below counts it
                for x in v:
                    if type(x) not in SCALARS:
                        break
                else:
                    n += len(v)
                    continue
                break
            elif t not in SCALARS:
                break
        else:
            if n <= self.max_seq:
                return
        stack = [v for v in values if type(v) not in SCALARS]
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
            if t in SCALARS:
                continue
            if t is str:
                n += len(x)
                if names and x[:1] == "_":
                    raise ValueError(f"names starting with '_' such as {x[:40]!r} are not allowed in flowgrad programs")
                if names and len(x) > MAX_ENGINE_STRING:
                    raise limit_error(f"a name or string handed to the engine has {len(x):,} characters", None,
                                      MAX_ENGINE_STRING)
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
                n += elements(x)
            elif t is np.ndarray:  # numpy copies an array inside a list element by element
                n += x.size
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
            raise limit_error(f"the data handed to the engine would have more than {budget:,} items",
                              "max_live_elements", budget)

    def module_links(self, k):
        """A module handed to the engine (add_module, Sequential(...), ModuleList.append, `self.fc = ...`) may
        become a submodule: at most MAX_MODULE_LINKS per run. The engine walks modules level by level,
        joining the names of every level (named_parameters() of a chain 10,000 deep is seconds in one call)."""
        self.links += k
        if self.links > MAX_MODULE_LINKS:
            raise limit_error(f"this run attached more than {MAX_MODULE_LINKS:,} modules to other modules", None,
                              MAX_MODULE_LINKS)

    # ---------------------------------------------------------------- text
    def text_limit(self):
        m = self.max_out
        return limit_error(f"the text of this value would be longer than {m:,} characters", "max_output_bytes", m)

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
            if t in SCALARS or t in INTERP_TYPES or isinstance(x, B.Tensor):
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
            elif B.TypedStorage is not None and isinstance(x, B.TypedStorage):
                n += 2 * len(x)  # a line per element, of two characters at least
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
                raise self.text_limit()

    def emit(self, text):
        """Printed output. Past max_output_bytes it is cut, not fatal: the first part is kept (and streamed as
        it comes), then the last lines (`TAIL_LINES`, at most 1/`TAIL_SHARE` of the limit), with one line
        between them saying how much was left out (`finish_output`). Text printed after the first
        7/8 is held back until the run shows whether it all fits. One print longer than the whole limit is
        refused (what fits of it is kept first): no answer could show it."""
        n = len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
        if self.out_bytes + n <= self.out_unheld and not self.held and not self.cut:
            # the common case, a print well within the limit: `_emit` inlined (one call less per print)
            self.out.append(text)
            self.out_bytes += n
            if self.on_print is not None:
                self.on_print(text)
            return
        if n > self.max_out:
            if not self.cut:
                room = self.max_out - self.out_bytes - self.held_bytes
                part = text.encode("utf-8", "replace")[:max(room, 0)].decode("utf-8", "ignore")
                if part:
                    self.emit(part)
            raise limit_error(f"one print wrote {n:,} bytes, more than a run's whole printed output",
                              "max_output_bytes", self.max_out)
        if self.cut:  # cut already: only the last lines can still be kept
            self._keep_tail(text, n)
        elif not self.held and self.out_bytes + n <= self.max_out - self.max_out // TAIL_SHARE:
            self._emit(text, n)
        elif self.out_bytes + self.held_bytes + n <= self.max_out:
            self.held.append(text)
            self.held_bytes += n
        else:  # the output does not fit: what was held back and this text are the start of the cut part
            held, self.held, self.held_bytes = self.held, [], 0
            self.cut = True
            self.tail_whole = not self.out or self.out[-1].endswith("\n")  # the cut part starts a line
            for t in held:
                self._keep_tail(t, len(t.encode("utf-8", "replace")))
            self._keep_tail(text, n)

    def _keep_tail(self, text, n):
        self.cut_bytes += n
        self.cut_lines += text.count("\n")
        self.tail.append(text)
        self.tail_bytes += n
        room = self.tail_room()
        if self.tail_bytes > 2 * room:  # only the last `room` bytes can be kept: drop the rest now
            kept = "".join(self.tail).encode("utf-8", "replace")[-room:].decode("utf-8", "ignore") if room else ""
            self.tail_whole = False
            self.tail = [kept]
            self.tail_bytes = len(kept.encode("utf-8"))

    def tail_room(self):
        return max(0, min(self.max_out // TAIL_SHARE, self.max_out - self.out_bytes))

    def flush_output(self):
        """Text held back near the limit goes out now (before a figure is shown, so it is placed after it)."""
        if self.held and not self.cut:
            held, self.held, self.held_bytes = self.held, [], 0
            for t in held:
                self._emit(t, len(t.encode("utf-8", "replace")))

    def finish_output(self):
        """At the end of the run: the held-back text, or, when the output was cut, the line that says so and
        the last lines. Returns why the output was cut (None: it was not)."""
        if not self.cut:
            self.flush_output()
            return None
        room = self.tail_room()
        kept = "".join(self.tail)
        encoded = kept.encode("utf-8", "replace")
        tail = encoded[len(encoded) - room:].decode("utf-8", "ignore") if room else ""
        if len(encoded) > room or not self.tail_whole:  # the kept text starts inside a line: from the next one
            tail = tail[tail.find("\n") + 1:] if "\n" in tail[:-1] else ""
        lines = tail.splitlines(keepends=True)[-TAIL_LINES:]
        tail = "".join(lines)
        tail_bytes = len(tail.encode("utf-8"))
        # lines left out: their newlines, and a last one without its newline when no kept line follows
        cut_lines = self.cut_lines - tail.count("\n") + (not tail and not kept.endswith("\n"))
        cut_bytes = self.cut_bytes - tail_bytes
        plural = "" if cut_lines == 1 else "s"
        where = f"max_output_bytes = {self.max_out:,}"
        newline = "" if not self.out or self.out[-1].endswith("\n") else "\n"
        self._emit(f"{newline}… {cut_lines:,} line{plural} cut ({cut_bytes:,} bytes; output limit {where}) …\n", 0)
        if tail:
            self._emit(tail, tail_bytes)
        return (f"printed output was cut after its first {self.out_bytes - tail_bytes:,} bytes: {cut_lines:,} "
                f"line{plural} ({cut_bytes:,} bytes) left out, the last {len(lines):,} kept (limit {where})")

    def _emit(self, text, n):
        self.out.append(text)
        self.out_bytes += n
        if self.on_print is not None:
            self.on_print(text)
