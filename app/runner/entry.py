"""Where a worker process starts (``multiprocessing`` target of the pool and of the notebook's worker): the
process's own settings first, then the worker (``app.runner.worker``), which loads the engine.

Kept apart from the worker so that the server process, which only names this function, loads no engine.
"""

from __future__ import annotations

import os
import signal
import sys
from types import SimpleNamespace

from app.runner.protocol import WorkerFailed


def one_blas_thread() -> None:
    """One BLAS thread: the worker forks, and a run gets one core's worth of time anyway."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"


# NOTE: also here, in the process that starts workers, before it starts them: the fork server they come from
# inherits this environment, and it may load numpy (it imports the main script) before a worker's own setup runs
one_blas_thread()


def setup_process() -> None:
    """Settings of a worker process, made before numpy and the engine load in it: one BLAS thread, and malloc
    tuned for the engine's arrays (its run processes inherit both)."""
    one_blas_thread()
    from engine.allocator import tune_malloc

    tune_malloc()


def worker_main(conn, settings_dict: dict, dot: str) -> None:
    """Entry point of a pool process (started with the 'forkserver' or 'spawn' context); ``dot`` is
    the Graphviz binary found by the app's startup check."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops us; Ctrl-C goes to it
    try:
        setup_process()
        from app.runner.runproc import RunImage  # the engine loads here, in this process, after the settings above

        # the values the server validated: pydantic, like the trace and the layout, loads after the zygote forks
        image = RunImage(SimpleNamespace(**settings_dict))
        zygote = image.start_zygote(conn.close)  # a smaller image: every run process's fork and exit cost less
        plots_zygote = None
        if image.settings.preload_matplotlib:  # the runs of programs that plot come from a zygote with matplotlib
            image.preload_plots()
            plots_zygote = image.start_zygote(lambda: (conn.close(), zygote.sock.close()))
        from app.runner.worker import Worker

        w = Worker(conn, settings_dict, dot, image=image, zygote=zygote, plots_zygote=plots_zygote)
    except Exception as e:  # noqa: BLE001
        try:
            conn.send(WorkerFailed(os.getpid(), f"{type(e).__name__}: {e}"))
        finally:
            sys.exit(1)
    w.serve()
