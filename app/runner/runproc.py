"""What a run process is a copy of: the engine, the sandbox and the capture loaded and warmed, the rlimits a run
gets, and the zygote every run process is forked from (``app.runner.zygote``).

Kept apart from ``app.runner.worker``, which also loads the trace builder, the layout and pydantic (the settings'
validation): the worker's entry (``app.runner.entry``) builds this image from the already validated settings
values and forks the zygote *before* those load, so every per-run fork and exit copies and tears down a smaller
image (fewer memory mappings and pages), and run processes do not carry the trace code or the layout cache.
Settings here are any object with the ``Settings`` attribute names (``Settings`` itself, or the values the
server validated, as ``SimpleNamespace``).
"""

from __future__ import annotations

import gc
import multiprocessing.connection as mpc
import os
import resource
import signal
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.runner.capture import run_capture
from app.runner.protocol import Program, RunOptions
from app.runner.zygote import ZygoteClient, serve_runs
from app.trace.policy import RunPolicy

if TYPE_CHECKING:
    from app.core.config import Settings

WARM_SOURCE = (
    "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
    "model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(4, 2)\n"
    "for i in range(2):\n    opt.zero_grad()\n    loss = ((model(x) - 1) ** 2).mean()\n"
    "    loss.backward()\n    opt.step()\nprint(loss, x.grad)\n"
)

# what a spare run process executes before it waits for its program: it touches (copies from the
# zygote) the pages a typical run needs, so the run itself starts hot; kept tiny because for
# back-to-back requests it is on the critical path
# a run process's young-generation GC threshold: it lives for one run, so a collection every 50,000 allocations
# (instead of capture's 10,000) bounds its cyclic garbage as well, and a small run never collects at all (~1 ms)
RUN_GC_YOUNG = 50_000

SPARE_WARM_SOURCE = "import torch\nx = torch.tensor(1.0, requires_grad=True)\n(x * 2).backward()\nprint(x)\n"


def vm_bytes() -> int:
    """This process's address space in bytes (/proc/self/statm, read raw: in a fresh run process a text file
    object's buffers alone page-faulted ~110 copy-on-write pages), 0 when unknown."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 128).split()[0]) * os.sysconf("SC_PAGE_SIZE")
        finally:
            os.close(fd)
    except (OSError, IndexError, ValueError):
        return 0


def capture_budgets(settings: Settings) -> dict:
    """The keyword budgets ``run_capture`` takes, every one from ``settings`` (the passes kept in full are the
    run's ``RunPolicy``)."""
    s = settings
    return {"max_string_chars": s.max_string_chars, "max_path_chars": s.max_path_chars,
            "value_budget": s.max_answer_bytes,
            # past this many graph nodes the trace builder draws no graph of a pass (folded or not)
            "max_pass_nodes": max(s.max_drawn_nodes, s.max_folded_nodes),
            "quiet_passes": s.quiet_passes}


def sandbox_limits(settings: Settings):
    """The interpreter's limits (the sandbox's ``SandboxLimits``), every one from ``settings`` (the fields of
    ``app.core.config.LIMIT_FIELDS``: a test pins that both ways give the same limits)."""
    from sandbox import SandboxLimits

    return SandboxLimits(**{name: getattr(settings, name) for name in SandboxLimits.__dataclass_fields__
                            if hasattr(settings, name)})


def set_limits(cpu_s: int, memory_mb: int) -> None:
    """This process's rlimits: ``cpu_s`` CPU seconds (SIGXCPU), no file writes, no core dumps, and its address
    space now plus ``memory_mb``."""
    limits = [
        (resource.RLIMIT_CPU, (cpu_s, cpu_s + 1)),
        (resource.RLIMIT_FSIZE, (0, 0)),
        (resource.RLIMIT_CORE, (0, 0)),
    ]
    vm = vm_bytes()
    if vm:
        cap = vm + memory_mb * 1024 * 1024
        limits.append((resource.RLIMIT_AS, (cap, cap)))
    for which, value in limits:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass


class RunImage:
    """The warm state every run process starts from, built once per worker process."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.limits = sandbox_limits(settings)
        self.warm_messages: list = []  # what the warm-up program sent: the worker warms its trace builder on it
        try:
            self.capture(WARM_SOURCE, self.warm_messages.append)
        except Exception:  # noqa: BLE001 - warming is best effort
            self.warm_messages = []

    def preload_plots(self) -> None:
        """Load matplotlib (for the plotting zygote, forked after this): ~1 s once per worker instead of in every
        run that plots. The other zygote is forked before it: matplotlib is ~27 MB and ~120 mappings that every
        other run's fork and exit would copy and tear down (~2.5 ms a run)."""
        try:
            from sandbox.plots import preload

            preload()
        except Exception:  # noqa: BLE001 - best effort: without it, the first plot of each run imports it
            pass

    def capture(self, source: str, send, options: RunOptions | None = None) -> None:
        """Run ``source`` in this process (the run process's side), shipping through ``send``."""
        s = self.settings
        passes, stream, values = (options.passes, options.stream, options.values) if options else ((), True, "full")
        run_capture(source, self.limits, s.value_limit, s.max_events, send, stream=stream,
                    policy=RunPolicy.from_settings(s, passes), values=values, **capture_budgets(s))

    def start_zygote(self, drop: Callable[[], None]) -> ZygoteClient:
        """Fork the zygote from this process now; in it, ``drop`` first closes what the caller holds open (the
        server's connection, …) so that no run process inherits it."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        gc.collect()
        gc.freeze()  # keep the forked children from touching (copying) this image's objects
        pid = os.fork()
        if pid == 0:  # ---------------- the zygote
            code = 0
            try:
                ours.close()
                drop()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                serve_runs(theirs, self.run_child)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        return ZygoteClient(pid, ours)

    def run_child(self, job_r: mpc.Connection, writer: mpc.Connection, warm: bool) -> None:
        """A run process (forked by the zygote): set rlimits, warm up (``warm``), wait for the program, run it,
        ship the capture."""
        s = self.settings
        set_limits(int(s.hard_kill_s) + 2, s.memory_limit_mb)
        gc.set_threshold(RUN_GC_YOUNG, *gc.get_threshold()[1:])
        if warm:
            try:
                self.capture(SPARE_WARM_SOURCE, lambda m: None)
            except Exception:  # noqa: BLE001
                pass
        try:
            program: Program = job_r.recv()
        except (EOFError, OSError):
            os._exit(0)
        self.capture(program.source, writer.send, program.options)
        writer.close()
