"""A pool worker: a warm process that never runs user code itself.

It keeps a long-lived ``dot`` and a layout cache, and runs every program in a child forked from its zygote
(``app.runner.zygote``): a single-threaded process forked once, before this module loads, from the run image
(``app.runner.runproc``: the engine, numpy and the sandbox imported and warmed, nothing of the trace, the layout
or pydantic), so that the worker itself never forks per run, its writes never page-fault on copy-on-write pages,
and each run's fork and exit copy a smaller image. The child for the *next* run is forked ahead of time, right
after a run ends: it sets rlimits (address space = current + ``memory_limit_mb``, CPU seconds, no file writes, no
core dumps), runs a tiny warm-up program so the pages a run touches are already copied (not under a burst:
``RunJob.backlog``), then blocks until it is handed a source. It runs the program (``capture``) and ships the raw
capture; the worker builds the trace (``app.runner.session``) and answers the server; once the run's housekeeping
is done (its trace freed, a folded run's payload process forked, the next run process forked) it says
``WorkerReady`` again, and only then does the pool give it another run. A run past ``hard_kill_s`` of its own
CPU time (or ``max_wall_s`` of wall time), or a cancel from the server, SIGKILLs the child. Because every run is a
fresh fork of the same clean image, nothing a program does (``nn.ReLU.forward = …``, a leaked
global, a corrupted cache) can be seen by another run, and the layout cache lives in the worker,
out of the programs' reach.

The messages on both pipes (server ↔ worker, worker ↔ run process) are ``app.runner.protocol``'s.
The process starts in ``app.runner.entry`` (its setup, then this module).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import mmap
import multiprocessing.connection as mpc
import os
import pickle
import signal
import time

from app.core.answer import failed_answer
from app.core.config import Settings
from app.core.problems import problem
from app.layout import LayoutEngine
from app.runner.protocol import (
    CancelJob,
    Done,
    End,
    Events,
    Program,
    RunJob,
    RunStored,
    StopWorker,
    WorkerReady,
    WorkerRecycled,
)
from app.runner.runproc import RunImage, capture_budgets, sandbox_limits, set_limits
from app.runner.session import PAYLOAD_TIME_FACTOR, RunSession, exit_problem
from app.runner.zygote import ZygoteClient
from app.trace.budget import fit_answer
from app.trace.build import TraceBuilder
from app.trace.policy import RunPolicy
from engine.recorder import op_table

__all__ = ["MAX_STORERS", "Worker", "capture_budgets", "payload_budget", "sandbox_limits"]  # the tests' names


def resident_mb() -> int:
    """This process's resident memory in MB (/proc/self/statm), 0 when unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)
    except (OSError, IndexError, ValueError):
        return 0


def payload_budget(settings: Settings) -> int:
    """Bytes one run's group payloads may take: a share of the run store, so one run cannot fill it."""
    return settings.run_store_max_bytes // PAYLOAD_STORE_SHARE


def _libc_malloc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_malloc_trim = _libc_malloc_trim()
RELEASE_ABOVE_MB = 32  # a run that left the worker this much larger: its freed heap goes back to the kernel
PAYLOAD_NICE = 5  # the payload process's niceness: students' runs on the same cores go first
MAX_STORERS = 2  # payload processes one worker keeps building at once (a third waits for the oldest)
PAYLOAD_STORE_SHARE = 8  # one run's payloads: at most this fraction of run_store_max_bytes
SHARED_SLACK = 1 << 20  # bytes of the payload process's shared buffer beyond the payload budget (pickle's framing)
CPU_POLL_S = 0.05  # how often a running child's CPU time is read
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (/proc/PID/stat), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime: fields 14 and 15 of proc(5)


class Worker:
    def __init__(self, conn, settings_dict: dict, dot: str, image: RunImage | None = None,
                 zygote: ZygoteClient | None = None, plots_zygote: ZygoteClient | None = None):
        """``image``, ``zygote`` and ``plots_zygote``: what ``app.runner.entry`` made before the trace and layout
        loaded (else made here, from this larger image)."""
        self.conn = conn
        self.settings = Settings(**settings_dict)
        s = self.settings
        self.layout = LayoutEngine.from_settings(s, dot_binary=dot)  # dot: the startup check's path
        self.image = image if image is not None else RunImage(s)
        self.op_table = op_table()
        self._warm()
        self.spare = None
        # the payload processes building folded runs' groups: (pid, its pipe, run id, wall deadline), oldest first
        self.storers: list[tuple] = []
        # the run processes' zygote, and the one with matplotlib loaded that forks the runs of plotting programs
        # (None without preload_matplotlib: those import it as they plot); key: whether it is the plotting one
        self.zygotes: dict[bool, ZygoteClient | None] = {False: zygote, True: plots_zygote}
        self.plots = s.preload_matplotlib
        gc.collect()
        gc.freeze()  # keep the payload processes forked from the worker from touching (copying) its objects
        self.base_rss_mb = resident_mb()
        if zygote is None:
            self._start_zygote(plots=False)
        if self.plots and plots_zygote is None:
            self.image.preload_plots()
            self._start_zygote(plots=True)
        self._prefork()

    def _warm(self) -> None:
        """Exercise the trace builder and the answer once, on the warm-up program's capture."""
        s = self.settings
        try:
            b = TraceBuilder(self.layout, policy=RunPolicy.from_settings(s), max_nodes=s.max_drawn_nodes)
            for m in self.image.warm_messages:
                if isinstance(m, Events):
                    b.feed_all(m.events)
            b.finish()
            fit_answer(b.result_parts(), s.max_answer_bytes)
        except Exception:  # noqa: BLE001 - warming is best effort
            pass

    # ------------------------------------------------------------------ loop
    def serve(self) -> None:
        self.conn.send(WorkerReady(os.getpid()))
        while True:
            try:
                if self.storers:
                    ready = mpc.wait([self.conn] + [st[1] for st in self.storers], timeout=CPU_POLL_S)
                    self._storers_ready(ready)
                    if self.conn not in ready:
                        continue
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if isinstance(msg, StopWorker):
                break
            if not isinstance(msg, RunJob):
                continue  # a cancel for a run already answered
            try:
                self.run(msg)
            except (BrokenPipeError, EOFError):
                break
            except Exception:  # noqa: BLE001 - a bug of ours: answer cleanly, keep serving
                try:
                    error = problem("InternalError", "the run failed inside flowgrad")
                    self.conn.send(Done(msg.job_id, failed_answer(error, stream=msg.options.stream)))
                except (BrokenPipeError, EOFError, OSError):
                    break
            rss_mb = resident_mb()
            if rss_mb > self.settings.worker_max_rss_mb:  # what a run left behind is not inherited by later runs
                try:
                    self._finish_storers()
                    self.conn.send(WorkerRecycled(rss_mb))
                except (BrokenPipeError, EOFError, OSError):
                    pass
                break
            try:
                # the run's housekeeping is done (its trace freed, its payload process forked, the next run
                # process warm): only now does the pool give this worker another run
                self.conn.send(WorkerReady(os.getpid()))
            except (BrokenPipeError, EOFError, OSError):
                break
        self._finish_storers()
        if self.spare is not None:
            self._reap_run(self.spare[0], self.spare[2])
        for zygote in self.zygotes.values():
            if zygote is not None:
                zygote.close()
        self.layout.close()

    def _start_zygote(self, plots: bool) -> None:
        """Fork a new zygote (``app.runner.runproc``) from the worker itself, when the first one is gone: this
        worker's larger image, which then writes next to nothing, so the worker itself never forks per run."""
        self.zygotes[plots] = self.image.start_zygote(self._zygote_setup)

    def _zygote_setup(self) -> None:
        """In the zygote: nothing of the worker's connections (server, dot, payload processes, the spare, an
        earlier zygote) stays open in it or in the run processes it forks."""
        try:
            self.conn.close()
        except OSError:
            pass
        self._drop_storers()
        self.storers = []
        self._drop_dot()
        if self.spare is not None:
            for end in self.spare[1:]:
                end.close()
            self.spare = None
        for zygote in self.zygotes.values():
            if zygote is not None:
                for pidfd in zygote.pidfds.values():
                    os.close(pidfd)
                zygote.sock.close()
        self.zygotes = {False: None, True: None}

    def _prefork(self, warm: bool = True) -> None:
        """Have the zygote fork the next run's process now, off the critical path, and let it warm up.

        The spare child sets its rlimits, runs a tiny program (so the pages a run touches are
        already copied), then blocks until it gets a source — or its job pipe
        closes because the worker died, and it exits.
        """
        self.spare = self._fork_run(plots=False, warm=warm)

    def _fork_run(self, plots: bool, warm: bool) -> tuple:
        """A new run process from the zygote ``plots`` says: (pid, its job pipe, its event pipe). A zygote that is
        gone is started again (once)."""
        job_r, job_w = mpc.Pipe(duplex=False)
        reader, writer = mpc.Pipe(duplex=False)
        try:
            for attempt in range(2):
                if self.zygotes[plots] is None:
                    self._start_zygote(plots)
                try:
                    pid = self.zygotes[plots].fork(job_r, writer, warm)
                    break
                except (OSError, EOFError):
                    self.zygotes[plots].kill()
                    self.zygotes[plots] = None
                    if attempt:
                        job_w.close()
                        reader.close()
                        raise
        finally:
            job_r.close()
            writer.close()
        return pid, job_w, reader

    def _take_spare(self, program: Program) -> tuple[int, object, bool]:
        """A run process with ``program`` handed to it: (pid, its event pipe, whether the plotting zygote forked
        it). The warm spare (a fresh fork if it died meanwhile); for a program that names matplotlib (the only
        way a program plots), a fresh fork of the plotting zygote: the spare, without matplotlib, stays for the
        next run."""
        plots = self.plots and "matplotlib" in program.source
        for _ in range(2):
            if plots:
                pid, job_w, reader = self._fork_run(plots=True, warm=False)
            else:
                if self.spare is None:
                    self._prefork()
                pid, job_w, reader = self.spare
                self.spare = None
            try:
                job_w.send(program)
                job_w.close()
                return pid, reader, plots
            except (OSError, BrokenPipeError):
                self._reap_run(pid, reader, plots)
        raise RuntimeError("could not start a run process")

    def _reap_run(self, pid: int, reader, plots: bool = False) -> int:
        """SIGKILL a run process (harmless when it has finished), close its pipe; its wait status (its zygote,
        the plotting one when ``plots``, reaps it)."""
        zygote = self.zygotes[plots]
        status = zygote.reap(pid) if zygote is not None else 0
        try:
            reader.close()
        except OSError:
            pass
        return status

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

    def run(self, job: RunJob) -> None:
        # building a trace allocates many small dicts: generational GC passes over the large,
        # acyclic heap cost ~40% on big graphs; everything here is freed by reference counting
        gc.disable()
        try:
            self._run(job)
        finally:
            gc.enable()
            self._release_memory()
            if self.spare is None:
                # a burst (runs queued): no warm-up, it costs ~5 ms of CPU a run while every core is busy (its
                # page copies are mostly ones the run takes anyway); idle: warm, its copies overlap idle time
                self._prefork(warm=not job.backlog)

    def _release_memory(self) -> None:
        """After a run that grew this worker (a big trace): give the freed heap back to the kernel, so later runs
        (forked from it) and the recycling check see what the worker really holds."""
        if resident_mb() > self.base_rss_mb + RELEASE_ABOVE_MB:
            gc.collect()
            if _malloc_trim is not None:
                _malloc_trim(0)

    def _run(self, job: RunJob) -> None:
        """Hand the program to the spare run process, feed what it sends to the run's session until its ``End``
        (or a cancel, or ``hard_kill_s`` of its CPU time, or ``max_wall_s``), reap it, answer."""
        s = self.settings
        started = time.monotonic()
        self.layout.begin_run()  # cache status in the answer: this run's hits only
        pid, reader, plots = self._take_spare(Program(job.source, job.options))
        cpu_before = cpu_seconds(pid)  # the spare's warm-up is not the program's
        session = RunSession(job.job_id, job.source, job.options, s, self.layout, self.op_table, self.conn.send,
                             started=started, sent=time.monotonic())
        end: End | None = None
        error: dict | None = None
        deadline = started + s.max_wall_s
        while end is None:
            left = deadline - time.monotonic()
            if left <= 0:
                error = problem("TimeoutError", f"the program ran longer than {s.max_wall_s:g} s of wall time and was "
                                                f"stopped (limit max_wall_s = {s.max_wall_s:g})")
                break
            if cpu_seconds(pid) - cpu_before > s.hard_kill_s:  # the run's own CPU time: load on the machine never moves this
                error = problem("TimeoutError", f"the program used more than {s.hard_kill_s:g} s of CPU time and was "
                                                f"stopped (limit hard_kill_s = {s.hard_kill_s:g})")
                break
            ready = mpc.wait([reader, self.conn] + [st[1] for st in self.storers], timeout=min(left, CPU_POLL_S))
            self._storers_ready(ready)
            if self.conn in ready:
                error = self._stopped(self.conn.recv(), job.job_id)
                if error is not None:
                    break
            if reader in ready:
                try:
                    end = session.receive(reader.recv())
                except (EOFError, OSError):
                    break
        # stop and reap the child (SIGKILL is harmless when it has already finished)
        status = self._reap_run(pid, reader, plots)
        if end is None and error is None:
            error = exit_problem(status, s)
        if session.finish(end, error):
            self._store_payloads(session)

    # ------------------------------------------------------------------ a folded run's payloads
    def _store_payloads(self, session: RunSession) -> None:
        """Build a folded run's group payloads in a child of this worker, limited like a run process (CPU
        seconds, address space, lower priority), while this worker takes the next run; its ``RunStored`` is
        forwarded as it comes (``_forward_stored``). At most ``MAX_STORERS`` at once: past that the oldest is
        waited for (within its deadline), never stopped: its student may be opening its groups now."""
        while len(self.storers) >= MAX_STORERS:
            self._finish_storer(self.storers[0])
        reader, writer = mpc.Pipe(duplex=False)
        # the payloads come back through shared memory: through the pipe, a niced child on a loaded machine
        # made the worker wait ~1 s per 33 MB, 64 KB at a time, while a student's run waited for the worker
        shared = mmap.mmap(-1, payload_budget(self.settings) + SHARED_SLACK)
        pid = os.fork()
        if pid == 0:  # ---------------- child
            code = 0
            try:
                reader.close()
                self._storer_setup()

                def send(msg) -> None:
                    data = pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
                    if len(data) <= len(shared):
                        shared[:len(data)] = data
                        writer.send_bytes(b"shared:%d" % len(data))
                    else:
                        writer.send_bytes(data)

                # its CPU time is its budget (rlimit); the wall deadline only ends one a loaded machine starves
                session.store_payloads(send, payload_budget(self.settings),
                                       deadline=time.monotonic() + self.settings.max_wall_s)
                writer.close()
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        writer.close()
        session.builder.folded_passes.clear()  # the child has them (copy-on-write); the worker keeps none
        s = self.settings
        self.storers.append((pid, reader, session.run_id, time.monotonic() + s.max_wall_s + s.supervisor_grace_s,
                             shared))

    def _storer_setup(self) -> None:
        """In the payload process: what a run process drops (the worker's connection, its dot: layouts start
        a dot of its own), a CPU budget of ``PAYLOAD_TIME_FACTOR`` × the run's ``hard_kill_s``, the run's address
        space, a lower priority."""
        s = self.settings
        try:
            self.conn.close()
        except OSError:
            pass
        self._drop_storers()
        self._drop_dot()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.nice(PAYLOAD_NICE)  # a student's run on the same cores goes first
        except OSError:
            pass
        set_limits(max(1, int(PAYLOAD_TIME_FACTOR * s.hard_kill_s)), s.memory_limit_mb)

    def _storers_ready(self, ready) -> None:
        """Forward what the payload processes in ``ready`` answered; stop those past their wall deadline."""
        for st in [st for st in self.storers if st[1] in ready]:
            self._forward_stored(st)
        now = time.monotonic()
        for st in [st for st in self.storers if now > st[3]]:  # its CPU time is bounded by its rlimit
            self._end_storer(st, stored=False)

    def _forward_stored(self, st: tuple) -> None:
        """The payload process answered (or ended): pass its ``RunStored`` to the server as it is (pickled
        bytes: the worker never unpickles the payloads), else say there are none."""
        pid, reader, _run_id, _deadline, shared = st
        try:
            data = reader.recv_bytes()
            if data.startswith(b"shared:"):
                data = shared[:int(data[7:])]
        except (EOFError, OSError, ValueError):
            self._end_storer(st, stored=False)
            return
        self.storers.remove(st)
        self._reap(pid, reader)
        shared.close()
        self.conn.send_bytes(data)

    def _end_storer(self, st: tuple, stored: bool) -> None:
        """Stop a payload process; unless it ``stored``, the server learns its run has no payloads."""
        pid, reader, run_id, _deadline, shared = st
        if st in self.storers:
            self.storers.remove(st)
        self._reap(pid, reader)
        shared.close()
        if not stored:
            self.conn.send(RunStored(run_id, None))

    def _finish_storer(self, st: tuple) -> None:
        """Wait for one payload process to finish (within its deadline) and forward its answer."""
        while st in self.storers:
            try:
                if mpc.wait([st[1]], timeout=CPU_POLL_S):
                    self._forward_stored(st)
                elif time.monotonic() > st[3]:
                    self._end_storer(st, stored=False)
            except (BrokenPipeError, EOFError, OSError):
                if st in self.storers:
                    self.storers.remove(st)
                    self._reap(st[0], st[1])
                    st[4].close()

    def _finish_storers(self) -> None:
        """Before this worker exits: let every payload process finish (within its deadline)."""
        while self.storers:
            self._finish_storer(self.storers[0])

    def _drop_storers(self) -> None:
        """In a child: the other payload processes' pipes and shared buffers are the worker's."""
        for st in self.storers:
            try:
                st[1].close()
                st[4].close()
            except (OSError, BufferError):
                pass

    def _drop_dot(self) -> None:
        proc, self.layout.dot.proc = self.layout.dot.proc, None  # dot belongs to the worker
        if proc is not None:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()  # our copies of its pipes only
                except (OSError, AttributeError):
                    pass

    @staticmethod
    def _stopped(msg, job_id: int) -> dict | None:
        """The error that ends the running job, when the server's message is its cancel or a stop."""
        if isinstance(msg, CancelJob) and msg.job_id == job_id:
            return problem("Cancelled", "the run was cancelled")
        if isinstance(msg, StopWorker):
            return problem("Cancelled", "the server is stopping")
        return None  # anything else while a run goes on (an older job's cancel) is dropped
