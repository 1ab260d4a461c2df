"""Engine speed, side by side in one run: flowgrad's engine vs PyTorch CPU vs micrograd.

    python bench/engine.py [--quick] [--cpu-time]

Prints median time per call (with --cpu-time: the least CPU time of the repeats, for a machine other jobs load)
and the ratios the engine issue sets as targets:
(a) z = (x + y) ** 2 forward+backward on scalars         target engine/torch <= 0.5
(b) one SGD step, MLP 2-16-16-1, batch 64, MSE           target <= 0.7
(c) one SGD step, MLP 784-128-10, batch 64, cross-entropy target <= 1.3
(d) (b) with the recorder on                               target <= 2 x (b)
and issue 10's layer cases, beside PyTorch in the same run:
(10d) one SGD step of LeNet-5 on 64x1x28x28, cross-entropy target <= 2.0
(10e) nn.LSTM(32, 64), 50 steps, batch 16, fwd+bwd         target <= 2.0
and, against micrograd, (a) and a scalar MLP step written the micrograd way.

The PyTorch reference runs in a process of its own (``--torch-only``, started by this one): the engine
tunes glibc's malloc when it is imported (engine/allocator.py), which would speed PyTorch up too if it ran
here; users run PyTorch with the defaults. ``--same-process`` measures it here instead, for comparison.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # numpy's BLAS on one thread, like torch below (set before numpy loads)

import json  # noqa: E402
import subprocess  # noqa: E402

import numpy as np  # noqa: E402
from timing import median_time as _median_wall_time  # noqa: E402  (bench/ is the script's folder)

CPU_TIME = "--cpu-time" in sys.argv  # set before any timing: the torch process gets the flag too


def median_time(fn, repeat=7, number=20):
    """The shared wall-clock median, or with --cpu-time the least CPU time of `repeat` runs: this process's
    own time, which other jobs on a loaded machine inflate far less than the wall clock."""
    if not CPU_TIME:
        return _median_wall_time(fn, repeat, number)
    fn()  # warm up
    best = float("inf")
    for _ in range(max(repeat, 15)):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t0) / number)
    return best

TORCH_ONLY = "--torch-only" in sys.argv  # the reference process: PyTorch as users run it, no engine imported
if not TORCH_ONLY:
    import engine
    from app.core.config import Settings
    from engine.recorder import Recorder

    SETTINGS = Settings()

try:
    import torch
    torch.set_num_threads(1)  # one thread each: numpy's BLAS is pinned to one below as well
except ImportError:
    torch = None
try:
    from micrograd.engine import Value
    from micrograd.nn import MLP as MicroMLP
except ImportError:
    Value = MicroMLP = None




def scalar_case(lib):
    x = lib.tensor(2.0, requires_grad=True)
    y = lib.tensor(3.0, requires_grad=True)

    def step():
        z = (x + y) ** 2
        z.backward()

    return step


def micrograd_scalar():
    x, y = Value(2.0), Value(3.0)

    def step():
        z = (x + y) ** 2
        z.backward()

    return step


def mlp_case(lib, sizes, batch, loss_kind, record=False):
    rng = np.random.default_rng(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(lib.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    X = lib.tensor(rng.normal(size=(batch, sizes[0])).astype(np.float32).tolist())
    if loss_kind == "mse":
        Y = lib.tensor(rng.normal(size=(batch, sizes[-1])).astype(np.float32).tolist())
        loss_fn = lib.nn.MSELoss()
    else:
        Y = lib.tensor(rng.integers(0, sizes[-1], batch).tolist())
        loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()

    if not record:
        return step

    state = {"rec": None, "steps": 0}

    def recorded_step():
        # One recorder per 100 steps, as one program run records a 100-step training loop.
        if state["steps"] % 100 == 0:
            state["rec"] = Recorder(value_limit=SETTINGS.value_limit, max_events=SETTINGS.max_events)
        state["steps"] += 1
        with state["rec"]:
            step()

    return recorded_step


def lenet_case(lib, batch=64):
    """(10d): conv 5x5 -> pool -> conv 5x5 -> pool -> 3 linear, one SGD step."""
    nn = lib.nn
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    X = lib.tensor(rng.normal(size=(batch, 1, 28, 28)).astype(np.float32))
    Y = lib.tensor(rng.integers(0, 10, batch))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(X), Y).backward()
        opt.step()

    return step


def lstm_case(lib, steps=50, batch=16):
    """(10e): nn.LSTM(32, 64) over 50 steps, forward + backward."""
    rng = np.random.default_rng(0)
    lstm = lib.nn.LSTM(32, 64)
    X = lib.tensor(rng.normal(size=(steps, batch, 32)).astype(np.float32))

    def step():
        lstm.zero_grad()
        out, _ = lstm(X)
        out.sum().backward()

    return step


LAYER_CASES = (("(10d) SGD step LeNet-5, 64x1x28x28, CE", lenet_case, 10, 2.0),
               ("(10e) LSTM(32, 64) 50 steps b16 fwd+bwd", lstm_case, 5, 2.0))


def layer_cases(rep, reference):
    """Issue 10's layer benchmarks; a case whose layer the engine lacks is reported, not fatal."""
    print(f"\n{'layers (issue 10)':44} {'flowgrad':>13} {'PyTorch CPU':>13} {'ratio':>7} {'target':>8}")
    for label, make, number, target in LAYER_CASES:
        try:
            te = median_time(make(engine), rep, number)
        except (AttributeError, NotImplementedError) as e:
            print(f"{label:44} not supported yet ({e})")
            continue
        tt = reference(label, make, number)
        ok = "" if tt is None else ("ok" if te / tt <= target else "MISSED")
        print(f"{label:44} {fmt(te):>13} {fmt(tt):>13} {ratio(te, tt):>7} {'≤ ' + str(target):>8} {ok}")


def scalar_mlp_engine(sizes, batch):
    """An MLP written the micrograd way on 0-d engine tensors: one node per scalar multiply-add."""
    rng = np.random.default_rng(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append([([engine.tensor(float(rng.uniform(-1, 1)), requires_grad=True) for _ in range(sizes[i])],
                         engine.tensor(0.0, requires_grad=True)) for _ in range(sizes[i + 1])])
    params = [p for layer in layers for ws, b in layer for p in ws + [b]]
    xs = [[float(v) for v in rng.normal(size=sizes[0])] for _ in range(batch)]
    ys = [float(v) for v in rng.normal(size=batch)]

    def step():
        loss = 0.0
        for x, y in zip(xs, ys):
            act = x
            for li, layer in enumerate(layers):
                out = []
                for ws, b in layer:
                    s = b
                    for w, a in zip(ws, act):
                        s = s + w * a
                    out.append(s.relu() if li < len(layers) - 1 else s)
                act = out
            loss = loss + (act[0] - y) ** 2
        for p in params:
            p.grad = None
        loss.backward()
        with engine.no_grad():
            for p in params:
                p -= 0.01 * p.grad

    return step


def scalar_mlp_micrograd(sizes, batch):
    rng = np.random.default_rng(0)
    model = MicroMLP(sizes[0], sizes[1:])
    xs = [[float(v) for v in rng.normal(size=sizes[0])] for _ in range(batch)]
    ys = [float(v) for v in rng.normal(size=batch)]

    def step():
        loss = Value(0.0)
        for x, y in zip(xs, ys):
            loss = loss + (model(x) - y) ** 2
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.01 * p.grad

    return step


def fmt(seconds):
    if seconds is None:
        return "—"
    return f"{seconds * 1e6:10.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:10.2f} ms"


def ratio(a, b):
    return f"{a / b:6.2f}" if a and b else "   —"


CASES = [
    ("(a) (x+y)**2 fwd+bwd, scalars", lambda lib: scalar_case(lib), 2000, 0.5),
    ("(b) SGD step MLP 2-16-16-1, batch 64", lambda lib: mlp_case(lib, [2, 16, 16, 1], 64, "mse"), 200, 0.7),
    ("(c) SGD step MLP 784-128-10, batch 64, CE", lambda lib: mlp_case(lib, [784, 128, 10], 64, "ce"), 50, 1.3),
]


def torch_reference(rep, same_process):
    """label -> PyTorch's median time: from a process of its own (default malloc), or measured here."""
    if torch is None:
        return lambda label, make, number: None
    if same_process:
        return lambda label, make, number: median_time(make(torch), rep, number)
    flags = ["--cpu-time"] if CPU_TIME else []
    out = subprocess.run([sys.executable, __file__, "--torch-only", f"--rep={rep}", *flags], capture_output=True,
                         text=True, check=True).stdout
    times = json.loads(out)
    return lambda label, make, number: times.get(label)


def torch_only(rep):
    times = {}
    for label, make, number, _ in CASES + list(LAYER_CASES):
        times[label] = median_time(make(torch), rep, number)
    print(json.dumps(times))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    parser.add_argument("--same-process", action="store_true",
                        help="time PyTorch in this process (after the engine's malloc tuning) instead of its own")
    parser.add_argument("--cpu-time", action="store_true",
                        help="least CPU time of the repeats instead of the wall-clock median (a machine shared with "
                             "other jobs)")
    parser.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rep", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    rep = args.rep or (5 if args.quick else 15)
    if args.torch_only:
        torch_only(rep)
        return
    gc.collect()
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'absent'}; "
          f"micrograd {'present' if Value else 'absent'}; PyTorch timed "
          f"{'in this process' if args.same_process else 'in a process of its own (glibc malloc defaults)'}; "
          f"{'least CPU time of the repeats' if CPU_TIME else 'wall-clock medians'}\n")
    reference = torch_reference(rep, args.same_process)
    rows = []
    results = {}
    for label, make, number, target in CASES:
        te = median_time(make(engine), rep, number)
        tt = reference(label, make, number)
        results[label[:3]] = (te, tt)
        rows.append((label, te, tt, target))
    td = median_time(mlp_case(engine, [2, 16, 16, 1], 64, "mse", record=True), rep, 200)
    tb = results["(b)"][0]
    print(f"{'case':44} {'flowgrad':>13} {'PyTorch CPU':>13} {'ratio':>7} {'target':>8}")
    for label, te, tt, target in rows:
        ok = "" if tt is None else ("ok" if te / tt <= target else "MISSED")
        print(f"{label:44} {fmt(te):>13} {fmt(tt):>13} {ratio(te, tt):>7} {'≤ ' + str(target):>8} {ok}")
    print(f"{'(d) (b) with the recorder on':44} {fmt(td):>13} {'(b) ' + fmt(tb).strip():>13} {ratio(td, tb):>7} "
          f"{'≤ 2 ×(b)':>8} {'ok' if td / tb <= 2 else 'MISSED'}")
    layer_cases(rep, reference)
    if Value is not None:
        print()
        print(f"{'against micrograd':44} {'flowgrad':>13} {'micrograd':>13} {'ratio':>7}")
        ta = results["(a)"][0]
        tm = median_time(micrograd_scalar(), rep, 2000)
        print(f"{'(a) (x+y)**2 fwd+bwd, scalars':44} {fmt(ta):>13} {fmt(tm):>13} {ratio(ta, tm):>7}")
        se = median_time(scalar_mlp_engine([2, 16, 16, 1], 8), max(3, rep // 3), 3)
        sm = median_time(scalar_mlp_micrograd([2, 16, 16, 1], 8), max(3, rep // 3), 3)
        print(f"{'scalar MLP 2-16-16-1 step, 8 samples':44} {fmt(se):>13} {fmt(sm):>13} {ratio(se, sm):>7}")
        gc.collect()
        t0 = time.perf_counter()
        step = scalar_mlp_micrograd([2, 16, 16, 1], 8)
        gc.disable()
        nogc = median_time(step, 3, 3)
        gc.enable()
        print(f"  micrograd with the garbage collector off: {fmt(nogc).strip()} "
              f"(its graphs are reference cycles; ours are freed by reference counting)")
        del t0


if __name__ == "__main__":
    main()
