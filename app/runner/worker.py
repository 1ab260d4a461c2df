"""A pool worker: a warm process that never runs user code itself.

It imports the engine and numpy once, keeps a long-lived ``dot`` and a layout cache, and runs
every program in a child forked from itself (``os.fork`` from this single-threaded process: a
copy-on-write snapshot). The child for the *next* run is forked ahead of time, right after a run
ends: it drops the descriptors it does not need (server connection, dot's pipes), sets rlimits
(address space = current + ``memory_limit_mb``, CPU seconds, no file writes, no core dumps),
runs a tiny warm-up program so the pages a run touches are already copied, then blocks until it
is handed a source. It runs the program (``capture``) and ships the raw capture; the worker
builds the trace (``app.trace``) and answers the server. A run past ``hard_kill_s``, or a cancel
from the server, SIGKILLs the child. Because every run is a
fresh fork of the same clean image, nothing a program does (``nn.ReLU.forward = …``, a leaked
global, a corrupted cache) can be seen by another run, and the layout cache lives in the worker,
out of the programs' reach.

Protocol on the connection to the server (pickled tuples):
  server → worker: ("run", job_id, source, options) | ("cancel", job_id) | ("stop",)
  worker → server: ("ready", pid) | ("piece", job_id, json bytes) | ("done", job_id, json bytes)
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time

from app.core.config import Settings, build_sandbox_limits
from app.core.problems import empty_trace, problem

# one BLAS thread: the worker forks, and a run gets one core's worth of time anyway
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"


WARM_SOURCE = (
    "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
    "model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(4, 2)\n"
    "for i in range(2):\n    opt.zero_grad()\n    loss = ((model(x) - 1) ** 2).mean()\n"
    "    loss.backward()\n    opt.step()\nprint(loss, x.grad)\n"
)


# what a spare run process executes before it waits for its program: it touches (copies from the
# worker) the pages a typical run needs, so the run itself starts hot; kept tiny because for
# back-to-back requests it is on the critical path
SPARE_WARM_SOURCE = "import torch\nx = torch.tensor(1.0, requires_grad=True)\n(x * 2).backward()\nprint(x)\n"


MAX_SAFE_ITEMS = 1_000_000  # items _json_safe walks before it stops copying (shared lists repeat)
MAX_SAFE_DEPTH = 200
_INT64 = 1 << 63


def _type_name(x) -> str:
    """What leaves a run in place of a value that is not plain JSON data: its type's name (bounded),
    never its ``str()`` (a real address, an internal module name, or gigabytes built in C)."""
    return f"<{type(x).__name__[:100]}>"


def _json_safe(x):
    """The answer as strict JSON data, when orjson refused it (a lone surrogate, a key that is not a
    string, an integer beyond 64 bits, an object that should never have got here): strings, numbers,
    bools, None, lists and dicts of those, at most MAX_SAFE_ITEMS items and MAX_SAFE_DEPTH levels; anything
    else as its type's name. Never calls ``str()`` or ``repr()`` on what it does not know."""
    from engine.trace_events import json_number  # not at the top: numpy loads after the BLAS settings

    budget = [MAX_SAFE_ITEMS]

    def key(k):
        if type(k) is str:
            return k.encode("utf-8", "replace").decode("utf-8")
        if type(k) in (int, float, bool) or k is None:
            return str(json_number(k)) if type(k) is not int or -_INT64 <= k < _INT64 else "<int>"
        return _type_name(k)

    def walk(v, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_SAFE_DEPTH:
            return "…"
        t = type(v)
        if t is str:
            return v.encode("utf-8", "replace").decode("utf-8")
        if v is None or t is bool:
            return v
        if t is int:
            return v if -_INT64 <= v < _INT64 else json_number(float(v)) if v.bit_length() < 1024 else \
                ("inf" if v > 0 else "-inf")
        if t is float:
            return json_number(v)
        if t is dict:
            return {key(k): walk(val, depth + 1) for k, val in v.items()}
        if t is list or t is tuple:
            return [walk(val, depth + 1) for val in v]
        return _type_name(v)

    return walk(x, 0)


def _figures(figures) -> list[dict]:
    """The run's plots as the answer carries them (docs/trace.md): SVG text and the count of characters
    printed before each; anything else the run process sent is dropped."""
    if type(figures) is not list:
        return []
    return [{"svg": f["svg"], "at": f["at"]} for f in figures
            if type(f) is dict and type(f.get("svg")) is str and type(f.get("at")) is int]


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def capture_budgets(settings: Settings) -> dict:
    """The keyword budgets ``run_capture`` takes, every one from ``settings``."""
    s = settings
    return {"head": s.full_passes_head, "tail": s.full_passes_tail, "max_string_chars": s.max_string_chars,
            "max_path_chars": s.max_path_chars, "value_budget": s.max_answer_bytes}


REASON_CHARS = 1_500  # truncated_reason is cut here (fit_answer keeps room for it)
PAYLOAD_TIME_FACTOR = 3  # a folded run's group payloads may take this many hard_kill_s after its answer (then: none)
SSE_FRAMING = 32  # bytes the stream adds around each piece ("event: pass\ndata: ...\n\n")


class AnswerBudget:
    """What one run's answer has used of ``max_answer_bytes``: the stream's pieces are counted as they
    go; a full pass gets its share of what is left (``pass_cap``); ``reserve`` is kept for ``done``."""

    def __init__(self, budget: int):
        self.budget = budget
        self.reserve = budget // 4
        self.sent = 0
        self.drawn = 0  # passes with a graph sent
        self.reasons: list[str] = []

    def left(self) -> int:
        return self.budget - self.sent

    def pass_cap(self, shares: int) -> int:
        return max(0, (self.budget - self.reserve - self.sent) // max(1, shares))

    def allows_small(self, n: int) -> bool:
        """A small piece (step, summary pass, progress, stdout) goes while it leaves the reserve."""
        return self.sent + n + SSE_FRAMING <= self.budget - self.reserve


def sandbox_limits(settings: Settings):
    """The interpreter's limits (the sandbox's ``SandboxLimits``), every one from ``settings``."""
    from sandbox import SandboxLimits

    return build_sandbox_limits(SandboxLimits, settings.limit_values())


class Worker:
    def __init__(self, conn, settings_dict: dict, dot: str):
        import gc

        import orjson

        from app.layout import LayoutEngine

        self.conn = conn
        self.settings = Settings(**settings_dict)
        s = self.settings
        self.orjson = orjson
        self.layout = LayoutEngine.from_settings(s, dot_binary=dot)  # dot: the startup check's path
        self.limits = sandbox_limits(s)
        from engine.recorder import op_table

        self.op_table = op_table()
        if s.preload_matplotlib:
            try:
                from sandbox.plots import preload

                preload()  # ~0.3 s once per worker instead of in every run that plots
            except Exception:  # noqa: BLE001 - best effort: without it, the first plot of each run imports it
                pass
        self._warm()
        self.spare = None
        gc.collect()
        gc.freeze()  # keep the forked children from touching (copying) the worker's objects
        self._prefork()

    def _warm(self) -> None:
        """Import and exercise everything once, so a run's child starts hot."""
        from app.runner.capture import run_capture

        s = self.settings
        msgs: list = []
        try:
            run_capture(WARM_SOURCE, self.limits, s.value_limit, s.max_events, msgs.append, **capture_budgets(s))
            from app.trace.budget import fit_answer
            from app.trace.build import TraceBuilder

            b = TraceBuilder(self.layout, head=s.full_passes_head, tail=s.full_passes_tail, max_passes=s.max_passes,
                             max_nodes=s.max_drawn_nodes)
            for m in msgs:
                if m[0] == "events":
                    b.feed_all(m[1])
            b.finish()
            fit_answer(b.result_parts(), s.max_answer_bytes)
        except Exception:  # noqa: BLE001 - warming is best effort
            pass

    # ------------------------------------------------------------------ loop
    def serve(self) -> None:
        self.conn.send(("ready", os.getpid()))
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if msg[0] == "run":
                _, job_id, source, opts = msg
                try:
                    self.run(job_id, source, opts)
                except (BrokenPipeError, EOFError):
                    break
                except Exception:  # noqa: BLE001 - a bug of ours: answer cleanly, keep serving
                    try:
                        body = empty_trace(problem("InternalError", "the run failed inside flowgrad"),
                                           stream=bool(opts.get("stream")))
                        self._send("done", job_id, body)
                    except (BrokenPipeError, EOFError, OSError):
                        break
            elif msg[0] == "stop":
                break
        if self.spare is not None:
            self._reap(self.spare[0], self.spare[2])
        self.layout.close()

    def _encode(self, obj: dict) -> bytes:
        try:
            return self.orjson.dumps(obj)
        except (TypeError, self.orjson.JSONEncodeError):
            return self.orjson.dumps(_json_safe(obj))  # e.g. a lone surrogate in a message

    def _send(self, kind: str, job_id: int, obj: dict) -> None:
        self.conn.send((kind, job_id, self._encode(obj)))

    def _prefork(self, warm: bool = True) -> None:
        """Fork the next run's process now, off the critical path, and let it warm up.

        The spare child sets its rlimits, runs a tiny program (so the pages a run touches are
        already copied from the worker), then blocks until it gets a source — or its job pipe
        closes because the worker died, and it exits.
        """
        import multiprocessing.connection as mpc

        job_r, job_w = mpc.Pipe(duplex=False)
        reader, writer = mpc.Pipe(duplex=False)
        pid = os.fork()
        if pid == 0:  # ---------------- child
            code = 0
            try:
                job_w.close()
                reader.close()
                self._child_setup(warm)
                try:
                    source, stream, passes, values = job_r.recv()
                except (EOFError, OSError):
                    os._exit(0)
                from app.runner.capture import run_capture

                s = self.settings
                run_capture(source, self.limits, s.value_limit, s.max_events, writer.send, stream=stream,
                            extra=passes, values=values, **capture_budgets(s))
                writer.close()
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        job_r.close()
        writer.close()
        self.spare = (pid, job_w, reader)

    def _take_spare(self, source: str, stream: bool, passes: tuple = (), values: str = "full"):
        """The warm spare child with ``source`` handed to it (a fresh fork if it died meanwhile)."""
        for _ in range(2):
            if self.spare is None:
                self._prefork()
            pid, job_w, reader = self.spare
            self.spare = None
            try:
                job_w.send((source, stream, passes, values))
                job_w.close()
                return pid, reader
            except (OSError, BrokenPipeError):
                self._reap(pid, reader)
        raise RuntimeError("could not start a run process")

    @staticmethod
    def _reap(pid: int, reader) -> int:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        status = 0
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        try:
            reader.close()
        except OSError:
            pass
        return status

    def run(self, job_id: int, source: str, opts: dict) -> None:
        import gc

        # building a trace allocates many small dicts: generational GC passes over the large,
        # acyclic heap cost ~40% on big graphs; everything here is freed by reference counting
        gc.disable()
        try:
            self._run(job_id, source, opts)
        finally:
            gc.enable()
            if self.spare is None:
                # always warm: skipping it when runs are queued was measured slower (the COW page
                # copies then land inside the next run instead of overlapping the worker's work)
                self._prefork()

    def _run(self, job_id: int, source: str, opts: dict) -> None:
        import multiprocessing.connection as mpc

        from app.trace.budget import clip_error, fit_answer, fold_pass
        from app.trace.build import FoldOptions, TraceBuilder
        from app.trace.values import clean
        from engine.trace_events import clip_text

        run_id = secrets.token_hex(16)  # the run store's key for this run's folded passes: unguessable

        s = self.settings
        stream = bool(opts.get("stream"))
        started = time.monotonic()
        self.layout.begin_run()  # cache status in the answer: this run's hits only
        passes = tuple(int(i) for i in opts.get("passes") or ())[:4]
        pid, reader = self._take_spare(source, stream, passes, opts.get("values") or "full")
        t_sent = t_end = time.monotonic()
        budget = AnswerBudget(s.max_answer_bytes)

        def piece(obj: dict, small: bool = True, data: bytes | None = None) -> None:
            """A stream piece, counted against the answer budget; small ones only while they leave the
            reserve for ``done`` (which repeats the steps and the whole stdout)."""
            data = self._encode(obj) if data is None else data
            if small and not budget.allows_small(len(data)):
                if not budget.reasons:
                    budget.reasons.append(f"the stream's later {obj.get('type')} pieces were left out (limit "
                                          f"max_answer_bytes = {budget.budget:,}); steps and stdout are in done")
                return
            budget.sent += len(data) + SSE_FRAMING
            self.conn.send(("piece", job_id, data))

        announced = []

        def announce() -> None:
            """A folded pass is about to go out: the server learns its run id first, so a group request that
            comes before the payloads are built waits for them instead of finding no run."""
            if not announced:
                announced.append(run_id)
                self.conn.send(("pending", run_id))

        def on_pass(pd: dict) -> None:
            if pd.get("graph") is not None and pd["graph"].get("folded"):
                announce()
            if pd.get("graph") is None:
                piece({"type": "pass", "pass": pd})
                return
            # the first graph may take half of what is left; the next ones share the rest; a folded pass is
            # already in its smallest form (its frames lazy) and may take all that is left
            shares = 2 if not budget.drawn and builder.emits_left > 1 else builder.emits_left
            if pd["graph"].get("folded"):
                shares = 1
            budget.drawn += 1
            cap = budget.pass_cap(shares) - SSE_FRAMING
            obj = {"type": "pass", "pass": pd}
            data = self._encode(obj)
            if len(data) > cap:  # over its share: folded (docs/trace.md §4)
                folded, _, how = fold_pass(pd, cap - 32)
                if how:
                    builder.truncated = True
                    builder.reasons.setdefault(f"pass {pd['index']}: {how}")
                obj, data = {"type": "pass", "pass": folded}, None
            piece(obj, small=False, data=data)

        builder = TraceBuilder(
            self.layout, head=s.full_passes_head, tail=s.full_passes_tail, max_passes=s.max_passes, extra=passes,
            on_pass=on_pass if stream else None,
            on_step=(lambda st: piece({"type": "step", **st})) if stream else None,
            max_nodes=s.max_drawn_nodes,
            fold=FoldOptions(s.fold_threshold, s.max_folded_nodes, s.fold_max_children, source, run_id),
            # no graph is drawn after this: the rest of the time goes to fitting and sending the answer
            deadline=started + s.answer_time_s - min(0.5, 0.15 * s.answer_time_s),
        )
        stdout_parts: list[str] = []
        n_events = 0
        last_progress = started
        end: dict | None = None
        error: dict | None = None
        deadline = started + s.hard_kill_s
        build_error = False
        while end is None:
            left = deadline - time.monotonic()
            if left <= 0:
                error = problem("TimeoutError", f"the program ran longer than {s.hard_kill_s:g} s and was stopped "
                                                f"(limit hard_kill_s = {s.hard_kill_s:g})")
                break
            ready = mpc.wait([reader, self.conn], timeout=left)
            if self.conn in ready:
                msg = self.conn.recv()
                if msg[0] == "cancel" and msg[1] == job_id:
                    error = problem("Cancelled", "the run was cancelled")
                    break
                if msg[0] == "stop":
                    error = problem("Cancelled", "the server is stopping")
                    break
            if reader in ready:
                try:
                    msg = reader.recv()
                except (EOFError, OSError):
                    break
                kind = msg[0]
                if kind == "events":
                    if not build_error:
                        try:
                            builder.feed_all(msg[1])
                        except Exception:  # noqa: BLE001 - a builder bug costs the graph, not the run
                            build_error = True
                    n_events += len(msg[1])
                    if stream and time.monotonic() - last_progress > 0.2:  # sign of life in a long pass
                        last_progress = time.monotonic()
                        piece({"type": "progress", "events": n_events, "ops": len(builder.ops),
                               "passes": builder.n_closed})
                elif kind == "stdout":
                    stdout_parts.append(msg[1])
                    if stream:
                        piece({"type": "stdout", "text": msg[1]})
                elif kind == "figure":
                    if stream:  # in place among the stdout pieces; `done` still carries every figure
                        for f in _figures([msg[1]]):
                            piece({"type": "figure", **f})
                elif kind == "end":
                    end = msg[1]
                    t_end = time.monotonic()
        # stop and reap the child (SIGKILL is harmless when it has already finished)
        status = self._reap(pid, reader)
        if end is None and error is None:
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            if sig == signal.SIGXCPU:
                error = problem("TimeoutError", f"the program used more than its CPU time (limit hard_kill_s = "
                                                f"{s.hard_kill_s:g})")
            elif sig == signal.SIGSEGV:
                # NOTE: CPython overflows its C stack on data nested ~100,000 deep (hashing or comparing it)
                error = problem("RecursionError", "the program crashed the interpreter: its data is nested too deeply")
            else:
                error = problem("MemoryError", f"the program was stopped: it exceeded the worker's memory "
                                               f"(limit memory_limit_mb = {s.memory_limit_mb})")
        try:
            builder.finish()
        except Exception:  # noqa: BLE001
            build_error = True
        stdout = end["stdout"] if end is not None else "".join(stdout_parts)
        if stream and end is not None:
            sent = "".join(stdout_parts)
            if stdout.startswith(sent) and len(stdout) > len(sent):
                piece({"type": "stdout", "text": stdout[len(sent):]})
        reasons: list[str] = []
        if end is not None:
            error = end.get("error")
            variables = end.get("variables") or {}
            figures = _figures(end.get("figures"))
            truncated = bool(end.get("truncated"))
            reasons += [str(r) for r in end.get("reasons") or []]
        else:
            variables, truncated, figures = {}, False, []
        if build_error:
            reasons.append("the trace could not be built past a point (a flowgrad bug)")
        parts = builder.result_parts()
        reasons += builder.reasons
        used = {k: self.op_table[k] for k in sorted(o for o in builder.ops_used if o in self.op_table)}
        trace = {
            "stdout": stdout,
            "error": clean(error),
            "variables": clean(variables),
            "ops": used,
            "passes": [] if stream else parts["passes"],
            "steps": parts["steps"],
            "modules": parts["modules"],
            "figures": figures,
            "truncated": truncated or parts["truncated"] or build_error,
            "truncated_reason": None,
        }
        if stream:
            del trace["passes"]
            trace = {"type": "done", **trace}
        reasons += budget.reasons
        room = budget.left() - SSE_FRAMING if stream else budget.budget
        clip_error(trace, s.max_string_chars)

        def finish(more: list[str]) -> bytes:
            reasons.extend(more)
            if reasons:
                trace["truncated"] = True
                trace["truncated_reason"] = clip_text("; ".join(dict.fromkeys(reasons)), REASON_CHARS)
            trace["elapsed_ms"] = round((time.monotonic() - started) * 1000, 2)
            trace["timing_ms"] = {"start": round((t_sent - started) * 1000, 2),
                                  "run": round((t_end - t_sent) * 1000, 2),
                                  "trace": round((time.monotonic() - t_end) * 1000, 2)}
            return self._encode(trace)

        data = finish([])
        if len(data) > room:  # over the answer budget: fold (docs/trace.md §4) and encode again
            data = finish(fit_answer(trace, room, max_string_chars=s.max_string_chars))
        if builder.folded_passes:
            announce()
        self.conn.send(("done", job_id, data))
        if builder.folded_passes:
            # the groups' payloads: built once the answer is out, then kept by the server's run store
            try:
                payloads = builder.build_payloads(deadline=time.monotonic() + PAYLOAD_TIME_FACTOR * s.hard_kill_s)
            except Exception:  # noqa: BLE001 - too slow, or a bug of ours: the groups answer RunExpired, the run stands
                payloads = None
            self.conn.send(("store", run_id, payloads))

    def _child_setup(self, warm: bool = True) -> None:
        """In a run's process: drop the worker's connection, set rlimits, warm up."""
        import resource

        s = self.settings
        try:
            self.conn.close()
        except OSError:
            pass
        proc, self.layout.dot.proc = self.layout.dot.proc, None  # dot belongs to the worker
        if proc is not None:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()  # our copies of its pipes only
                except (OSError, AttributeError):
                    pass
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        cpu = int(s.hard_kill_s) + 2
        limits = [
            (resource.RLIMIT_CPU, (cpu, cpu + 1)),
            (resource.RLIMIT_FSIZE, (0, 0)),
            (resource.RLIMIT_CORE, (0, 0)),
        ]
        vm = _vm_bytes()
        if vm:
            cap = vm + s.memory_limit_mb * 1024 * 1024
            limits.append((resource.RLIMIT_AS, (cap, cap)))
        for which, value in limits:
            try:
                resource.setrlimit(which, value)
            except (ValueError, OSError):
                pass
        from app.runner.capture import run_capture

        if warm:
            try:
                run_capture(SPARE_WARM_SOURCE, self.limits, s.value_limit, s.max_events, lambda m: None,
                            **capture_budgets(s))
            except Exception:  # noqa: BLE001
                pass


def worker_main(conn, settings_dict: dict, dot: str) -> None:
    """Entry point of a pool process (started with the 'forkserver' or 'spawn' context); ``dot`` is
    the Graphviz binary found by the app's startup check."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops us; Ctrl-C goes to it
    try:
        w = Worker(conn, settings_dict, dot)
    except Exception as e:  # noqa: BLE001
        try:
            conn.send(("failed", os.getpid(), f"{type(e).__name__}: {e}"))
        finally:
            sys.exit(1)
    w.serve()
