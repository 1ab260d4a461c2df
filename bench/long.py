"""Long programs, run whole: flowgrad's sandbox against the engine in-process and PyTorch (issue 21).

    python bench/long.py [--repeat N] [--only name,name] [--no-torch]

Every program of bench/programs/ (PyTorch's "Learning PyTorch with Examples" at full length, a 3,000-step
regression, a 1,000-epoch Adam MLP, a loop printing every step, a 20,000-line printer, a makemore bigram model)
runs three ways, and the table shows the CPU time of each (the least of --repeat runs; wall time beside it):

  sandbox  `sandbox.run_program` with the recorder the worker uses (`app.runner.capture.StreamingRecorder`,
           built as `run_capture` builds it from the server's Settings), under generous limits (`GENEROUS`:
           the server's defaults are the config's business, not this benchmark's), pickling what it ships
  build    the worker's side of the same run: unpickling what it shipped and the trace builder (no layout)
  engine   the same source as plain Python with `import torch` bound to the engine, the same recorder around it
           (whose middle passes never run quietly: only the interpreter tells it how long a loop is)
  torch    PyTorch, in a process of its own (`--torch-only`; one thread, as numpy's BLAS here): the engine tunes
           glibc's malloc when it is imported, which would speed PyTorch up too if it ran in this process

The targets (issue 21): sandbox <= 2x engine, sandbox <= 3x torch. `=eng` and `=torch` say whether the sandbox
printed exactly what the engine in-process and PyTorch printed. No number here is asserted anywhere:
tests/sandbox/test_long_programs.py checks that each program finishes with PyTorch's stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import pickle
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # numpy's BLAS on one thread, like torch (set before numpy loads)

PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
# the order of the table: the tutorial's five first
PROGRAMS = ("polynomial_tensor", "polynomial_autograd", "polynomial_custom_function", "polynomial_nn",
            "polynomial_module", "regression_3000", "adam_mlp", "print_every_step", "printer_20000", "bigram")
# what the generous limits raise above the server's defaults (everything else stays as configured)
GENEROUS = {"time_limit_s": 600.0, "max_wall_s": 3600.0, "max_steps": 10 ** 9, "max_loop_iterations": 10 ** 6,
            "max_graph_nodes": 10 ** 8, "max_output_bytes": 10 ** 7, "max_source_chars": 10 ** 6,
            "max_ast_nodes": 10 ** 6}


def program_source(name: str) -> str:
    with open(os.path.join(PROGRAMS_DIR, f"{name}.py"), encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------------------------------------- PyTorch
def run_torch(name: str, repeat: int) -> dict:
    """The program under PyTorch in this process: best CPU and wall time of `repeat` runs, its stdout."""
    import torch

    torch.set_num_threads(1)
    code = compile(program_source(name), f"{name}.py", "exec")
    best_cpu = best_wall = float("inf")
    stdout = ""
    for _ in range(repeat):
        buf = io.StringIO()
        c0, w0 = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(buf):
            exec(code, {"__name__": "__main__"})  # noqa: S102 - our own benchmark programs, not user input
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
        stdout = buf.getvalue()
    return {"cpu": best_cpu, "wall": best_wall, "stdout": stdout}


def torch_results(names, repeat: int) -> dict:
    """Each program under PyTorch, in a child process (`--torch-only`); {} when torch is not installed."""
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            return {}
    except ImportError:
        return {}
    out = subprocess.run([sys.executable, __file__, "--torch-only", "--repeat", str(repeat), "--only", ",".join(names)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return {}
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------------------------- flowgrad
def worker_recorder(send=lambda message: None):
    """The recorder a non-streaming /api/run gets (app.runner.capture.run_capture), from the server's Settings;
    ``send`` takes what it ships."""
    from app.core.config import Settings
    from app.runner.capture import StreamingRecorder
    from app.runner.worker import capture_budgets
    from app.trace.policy import RunPolicy

    s = Settings()
    b = capture_budgets(s)
    return StreamingRecorder(send, policy=RunPolicy.from_settings(s), stream=False,
                             value_limit=s.value_limit, max_events=s.max_events,
                             max_string_chars=b["max_string_chars"], max_path_chars=b["max_path_chars"],
                             value_budget=b["value_budget"], max_pass_nodes=b["max_pass_nodes"],
                             quiet_passes=b["quiet_passes"], quiet_cpu_s=GENEROUS["time_limit_s"] / 2)


def bench_limits():
    from app.core.config import Settings
    from app.runner.worker import sandbox_limits

    return dataclasses.replace(sandbox_limits(Settings()), **GENEROUS)


def run_sandbox(name: str, repeat: int) -> dict:
    import engine
    from sandbox import backend_for, run_program

    source, limits, backend = program_source(name), bench_limits(), backend_for(engine)
    best_cpu = best_wall = best_build = float("inf")
    outcome = None
    for _ in range(repeat):
        shipped: list[bytes] = []
        rec = worker_recorder(pickling(shipped))
        c0, w0 = time.process_time(), time.perf_counter()
        with rec:
            outcome = run_program(source, limits, backend, recorder=rec, on_print=rec.on_print)
            rec.flush(final=True)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_build = min(best_build, build_cpu(shipped))
    return {"cpu": best_cpu, "wall": best_wall, "build": best_build, "stdout": outcome.stdout, "error": outcome.error}


def pickling(shipped: list[bytes]):
    """A recorder's ``send`` that pickles each message as the run process's pipe does (its CPU is the run's)."""
    return lambda message: shipped.append(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))


def build_cpu(shipped: list[bytes]) -> float:
    """CPU seconds the worker spends on what a run shipped: unpickling it and the trace builder (without dot's
    layout, which its cache makes a matter of the program's shape, not its length)."""
    from app.core.config import Settings
    from app.runner.protocol import Events
    from app.trace.build import TraceBuilder
    from app.trace.policy import RunPolicy

    s = Settings()
    c0 = time.process_time()
    builder = TraceBuilder(None, policy=RunPolicy.from_settings(s), max_nodes=s.max_drawn_nodes)
    for blob in shipped:
        message = pickle.loads(blob)  # noqa: S301 - our own run's messages
        if isinstance(message, Events):
            builder.feed_all(message.events)
    builder.finish()
    return time.process_time() - c0


@contextlib.contextmanager
def engine_as_torch():
    """`import torch` (and torch.nn, torch.nn.functional, torch.optim and its lr_scheduler, torch.utils.data) gives
    the engine."""
    import engine
    import engine.nn
    import engine.nn.functional
    import engine.nn.init
    import engine.optim
    import engine.optim.lr_scheduler
    import engine.utils.data

    aliases = {"torch": engine, "torch.nn": engine.nn, "torch.nn.functional": engine.nn.functional,
               "torch.nn.init": engine.nn.init, "torch.optim": engine.optim,
               "torch.optim.lr_scheduler": engine.optim.lr_scheduler, "torch.utils": engine.utils,
               "torch.utils.data": engine.utils.data}
    saved = {k: sys.modules.get(k) for k in aliases}
    sys.modules.update(aliases)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def run_engine(name: str, repeat: int) -> dict:
    import engine

    code = compile(program_source(name), f"{name}.py", "exec")
    best_cpu = best_wall = float("inf")
    stdout, error = "", None
    for _ in range(repeat):
        rec = worker_recorder(pickling([]))  # the same recording, shipped the same way
        buf = io.StringIO()
        engine.reset_run_state()
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            with engine_as_torch(), contextlib.redirect_stdout(buf), rec:
                exec(code, {"__name__": "__main__"})  # noqa: S102 - our own benchmark programs, not user input
        except Exception as e:  # noqa: BLE001 - a missing engine feature: reported in the table
            error = f"{type(e).__name__}: {e}"[:200]
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
        stdout = buf.getvalue()
    return {"cpu": best_cpu, "wall": best_wall, "stdout": stdout, "error": error}


# ---------------------------------------------------------------------------------------------- table
def ratio(a, b) -> str:
    return f"{a / b:5.2f}x" if a is not None and b else "    - "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each program per side (the least time counts)")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    if args.torch_only:
        print(json.dumps({n: run_torch(n, args.repeat) for n in names}))
        return
    ref = {} if args.no_torch else torch_results(names, args.repeat)
    head = (f"{'program':28} {'sandbox cpu':>11} {'(wall)':>7} {'build':>6} {'engine cpu':>10} {'(wall)':>7} {'torch cpu':>9} "
            f"{'(wall)':>7} {'sb/eng':>6} {'sb/torch':>8}  =eng  =torch  notes")
    print(head)
    print("-" * len(head))
    for n in names:
        sb = run_sandbox(n, args.repeat)
        en = run_engine(n, args.repeat)
        t = ref.get(n)
        notes = []
        if sb["error"]:
            notes.append(f"sandbox: {sb['error']['type']}: {sb['error']['message'][:90]} (line {sb['error']['line']})")
        if en["error"]:
            notes.append(f"engine: {en['error']}")
        same = "    - " if t is None else ("   yes" if sb["stdout"] == t["stdout"] else "    NO")
        same_engine = " yes" if sb["stdout"] == en["stdout"] else "  NO"
        if t is not None and sb["stdout"] != t["stdout"]:
            ours, theirs = sb["stdout"].splitlines(), t["stdout"].splitlines()
            k = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            notes.append(f"first difference at line {k + 1}: {ours[k] if k < len(ours) else '<end>'!r} vs "
                         f"{theirs[k] if k < len(theirs) else '<end>'!r}")
        tc = f"{t['cpu']:9.2f} {t['wall']:7.2f}" if t else f"{'-':>9} {'-':>7}"
        print(f"{n:28} {sb['cpu']:11.2f} {sb['wall']:7.2f} {sb['build']:6.2f} {en['cpu']:10.2f} {en['wall']:7.2f} {tc} "
              f"{ratio(sb['cpu'], en['cpu']):>6} {ratio(sb['cpu'], t['cpu'] if t else None):>8}  {same_engine}  {same}  "
              + "; ".join(notes), flush=True)


if __name__ == "__main__":
    main()
