"""Engine speed, side by side in one run: flowgrad's engine vs PyTorch CPU vs micrograd.

    python bench/engine.py [--quick] [--cpu-time] [--without MECHANISM,...]
    python bench/engine.py --ablate [--rounds N] [--pairs K]   # every speed mechanism's win -> bench/RESULTS.md

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

`--without` turns speed mechanisms off for this run (MECHANISMS below: each one a module-level flag, or for the
allocator the malloc tuning the worker's process setup does). `--ablate` measures them on every case in rounds of
fresh processes: in one, each flag switched off and on in alternating blocks (load that comes and goes hits both
sides alike); the allocator from processes with and without it; PyTorch beside them. It writes the figures
(CPU time, medians and ranges over the rounds) to bench/RESULTS.md, which is generated, never edited.

The PyTorch reference runs in a process of its own (``--torch-only``, started by this one): the engine's malloc
tuning (engine/allocator.py) would speed PyTorch up too if it ran here; users run PyTorch with the defaults.
``--same-process`` measures it here instead, for comparison.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # numpy's BLAS on one thread, as in the workers (set before numpy loads)

import importlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
from timing import median_time as _median_wall_time  # noqa: E402  (bench/ is the script's folder)

CPU_TIME = "--cpu-time" in sys.argv  # set before any timing: the torch process gets the flag too

# The engine's speed mechanisms: switch name -> (module, its flag, what the mechanism does). The allocator has no
# flag: it is a call (allocator.tune_malloc) the process makes once, or not.
MECHANISMS = {
    "blas_axpy": ("engine.optim.blas_axpy", "ENABLED", "big in-place float32 SGD updates through OpenBLAS saxpy"),
    "fused": ("engine.optim.fused", "ENABLED", "plain SGD: small parameters in one multiply-add"),
    "group_cache": ("engine.optim.group_cache", "ENABLED", "checked param_groups reused while unchanged"),
    "allocator": ("engine.allocator", None, "glibc malloc keeps freed step temporaries as heap"),
    "linear_fast_path": ("engine.nn.functional", "LINEAR_FAST_PATH", "F.linear skips its checks when all pass"),
    "nll_fast_path": ("engine.ops_loss", "NLL_FAST_PATH", "NLL without weights or ignored targets: one gather"),
}


def _switched_off():
    """The mechanisms named by --without (read before the engine is imported: the allocator acts at import)."""
    names = []
    for i, arg in enumerate(sys.argv):
        if arg == "--without" and i + 1 < len(sys.argv):
            names += sys.argv[i + 1].split(",")
        elif arg.startswith("--without="):
            names += arg.split("=", 1)[1].split(",")
    unknown = [n for n in names if n and n not in MECHANISMS]
    if unknown:
        sys.exit(f"--without: unknown mechanism(s) {', '.join(unknown)}; known: {', '.join(MECHANISMS)}")
    return {n for n in names if n}


WITHOUT = _switched_off()


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
ABLATE = "--ablate" in sys.argv  # the driver only starts processes: it imports neither engine nor torch
if not (TORCH_ONLY or ABLATE):
    if "allocator" in WITHOUT and "engine" not in sys.modules:
        # NOTE: engine/__init__ still tunes malloc at import until the worker's process setup does it (issue 20
        # section 2); a module of the allocator's name whose tune_malloc does nothing stands in for this run.
        _untuned = types.ModuleType("engine.allocator")
        _untuned.tune_malloc = lambda: False
        sys.modules["engine.allocator"] = _untuned
    import engine
    from app.core.config import Settings
    from engine.recorder import Recorder

    if "allocator" not in WITHOUT:
        importlib.import_module("engine.allocator").tune_malloc()  # as the worker's process setup does
    for _name in WITHOUT:
        _module, _flag, _ = MECHANISMS[_name]
        if _flag is not None:
            setattr(importlib.import_module(_module), _flag, False)

    SETTINGS = Settings()

try:
    if ABLATE:
        raise ImportError  # the driver's processes import it
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
    times["__version__"] = torch.__version__
    print(json.dumps(times))


RECORDED = "(d) (b) with the recorder on"
# (label, make(lib), calls per timing): every case the ablation measures, the recorder's (d) included
ALL_CASES = [(label, make, number) for label, make, number, _ in CASES] + [
    (RECORDED, lambda lib: mlp_case(lib, [2, 16, 16, 1], 64, "mse", record=True), 200)] + [
    (label, make, number) for label, make, number, _ in LAYER_CASES]


def engine_times(rep):
    """Every case's engine time under this process's switches, as JSON (the --ablate driver's processes)."""
    times = {}
    for label, make, number in ALL_CASES:
        times[label] = median_time(make(engine), rep, number)
    print(json.dumps(times))


def paired_times(pairs):
    """Per flag mechanism and case: CPU time per call of `pairs` blocks with the flag on and as many with it off,
    alternating (on-off, off-on, ...) so load that comes and goes hits both alike; JSON {name: {case: [on, off]}}.
    A call runs untimed after each switch: plans and snapshots made again are not counted."""
    flags = {name: (importlib.import_module(module), flag) for name, (module, flag, _) in MECHANISMS.items() if flag}
    out = {name: {} for name in flags}
    for label, make, number in ALL_CASES:
        fn = make(engine)
        fn()
        for name, (module, flag) in flags.items():
            on, off = [], []
            for i in range(pairs):
                for state in ((True, False) if i % 2 == 0 else (False, True)):
                    setattr(module, flag, state)
                    fn()
                    t0 = time.process_time()
                    for _ in range(number):
                        fn()
                    (on if state else off).append((time.process_time() - t0) / number)
            setattr(module, flag, True)
            out[name][label] = [on, off]
    print(json.dumps(out))


# ---------------------------------------------------------------- --ablate: bench/RESULTS.md

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
KEEP_FROM = 0.03  # a mechanism stays where it wins at least 3 % on one product benchmark (issue 20)


def _child(args):
    """One measuring process's JSON (always CPU time)."""
    cmd = [sys.executable, os.path.abspath(__file__), *args, "--cpu-time"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def _median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def ablate(rounds, rep, pairs):
    """Rounds of fresh processes, in an order that rotates each round: the engine with every mechanism on, without
    the allocator (a process-wide setting), the flag mechanisms switched off and on in one process, PyTorch.
    Returns {"on": [...], "allocator": [...], "paired": [...], "torch": [...]}, one entry per round."""
    jobs = {"on": ["--times", f"--rep={rep}"], "allocator": ["--times", f"--rep={rep}", "--without", "allocator"],
            "paired": ["--paired", f"--pairs={pairs}"], "torch": ["--torch-only", f"--rep={rep}"]}
    runs = {name: [] for name in jobs}
    order = list(jobs)
    for r in range(rounds):
        k = r % len(order)
        for name in order[k:] + order[:k]:
            runs[name].append(_child(jobs[name]))
            print(f"round {r + 1}/{rounds}: {name}", file=sys.stderr, flush=True)
    return runs


def _machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    blas = "unknown BLAS"
    try:
        dep = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{dep.get('name')} {dep.get('version')}"
    except Exception:  # noqa: BLE001  (older numpy: no dict mode; the line says unknown)
        pass
    return model, os.cpu_count(), blas


def _span(values):
    return f"{fmt(_median(values)).strip()} [{fmt(min(values)).strip()}–{fmt(max(values)).strip()}]"


def _pct(values):
    return f"{_median(values) * 100:+.1f} % [{min(values) * 100:+.1f} – {max(values) * 100:+.1f}]"


def ablation_figures(runs):
    """{mechanism: {case: (with per round, without per round, win per round)}}: each round's least CPU time with
    and without, and its win (without / with - 1: how much longer the case takes without the mechanism; for a flag,
    the median of that ratio over the round's pairs of neighbouring blocks)."""
    figures = {}
    for name, (_, flag, _) in MECHANISMS.items():
        figures[name] = {}
        for label, _, _ in ALL_CASES:
            if flag is None:  # the allocator: the same round's processes with and without it
                with_ = [r[label] for r in runs["on"]]
                without = [r[label] for r in runs[name]]
                wins = [b / a - 1 for a, b in zip(with_, without)]
            else:  # each round's median over its pairs of neighbouring blocks (the same load on both sides)
                with_ = [min(r[name][label][0]) for r in runs["paired"]]
                without = [min(r[name][label][1]) for r in runs["paired"]]
                wins = [_median([b / a - 1 for a, b in zip(*r[name][label])]) for r in runs["paired"]]
            figures[name][label] = (with_, without, wins)
    return figures


def write_results(runs, rounds, rep, pairs, started, load_before):
    model, cores, blas = _machine()
    labels = [label for label, _, _ in ALL_CASES]
    targets = {label: target for label, _, _, target in CASES + list(LAYER_CASES)}
    short = {label: label.split(")")[0] + ")" for label in labels}
    figures = ablation_figures(runs)
    load_after = os.getloadavg()
    lines = [
        "## Engine (`bench/engine.py --ablate`)",
        "",
        f"Generated by `python bench/engine.py --ablate --rounds {rounds} --pairs {pairs}` on {started} UTC; do not "
        "edit by hand, run it again. The cases are described in `bench/engine.py`'s docstring.",
        "",
        "### Machine and method",
        "",
        f"- {model}, {cores} cores; load average {load_before[0]:.2f} at the start, {load_after[0]:.2f} at the end "
        "(a machine shared with other developers' jobs).",
        f"- Python {sys.version.split()[0]}, numpy {np.__version__} ({blas}), OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}; PyTorch {runs['torch'][0].get('__version__', '?')} CPU, one "
        "thread, in processes of its own (glibc malloc defaults).",
        f"- CPU time of this process, not the wall clock (the workers' measure). {rounds} rounds; each round starts "
        "its processes in a rotating order. Case figures: one process's least time per call over "
        f"{max(rep, 15)} repeats. Flag mechanisms: in one process per round, {pairs} blocks with the flag on "
        "alternating with as many with it off (on-off, off-on, ...): figures are the least time of each side, "
        "the win the median over the pairs of neighbouring blocks; the allocator (process-wide) from the same "
        "round's processes with and without it. Median over the rounds [min–max].",
        "",
        "### Cases against PyTorch (every mechanism on)",
        "",
        "| case | flowgrad | PyTorch CPU | ratio (median of rounds) | target |",
        "|---|---|---|---|---|",
    ]
    base = runs["on"]
    for label in labels:
        mine = [r[label] for r in base]
        if label == RECORDED:
            b = labels[1]
            ratios = [r[label] / r[b] for r in base]
            lines.append(f"| {label} | {_span(mine)} | (b) {_span([r[b] for r in base])} | "
                         f"{_median(ratios):.2f} ×(b) [{min(ratios):.2f}–{max(ratios):.2f}] | ≤ 2 ×(b) |")
            continue
        ref = [r[label] for r in runs["torch"]]
        ratios = [m / t for m, t in zip(mine, ref)]
        lines.append(f"| {label} | {_span(mine)} | {_span(ref)} | {_median(ratios):.2f} "
                     f"[{min(ratios):.2f}–{max(ratios):.2f}] | ≤ {targets[label]} |")
    lines += ["", "### Ablation: each speed mechanism switched off alone (`--without NAME`)", "",
              "Win: how much longer a case takes without the mechanism, median over the rounds. A mechanism stays "
              f"where it wins at least {KEEP_FROM:.0%} on a product benchmark. Case (a) has no optimizer, loss or "
              "linear layer: its column shows the noise floor.", "",
              "| mechanism | what it does | " + " | ".join(short[label] for label in labels) + " | best |",
              "|---|---|" + "---|" * (len(labels) + 1)]
    for name, (_, _, what) in MECHANISMS.items():
        medians = [_median(figures[name][label][2]) for label in labels]
        cells = [f"{m * 100:+.1f} %" for m in medians]
        lines.append(f"| `{name}` | {what} | " + " | ".join(cells) + f" | {max(medians) * 100:+.1f} % |")
    lines += ["", "With and without each mechanism (median [min–max] over the rounds):", "",
              "| mechanism | case | with | without | win |", "|---|---|---|---|---|"]
    for name in MECHANISMS:
        for label in labels:
            with_, without, wins = figures[name][label]
            lines.append(f"| `{name}` | {short[label]} | {_span(with_)} | {_span(without)} | {_pct(wins)} |")
    write_section(RESULTS, "engine", "\n".join(lines) + "\n")
    print("\n".join(lines))


def write_section(path: str, name: str, text: str) -> None:
    """Replace one generated section of RESULTS.md (between its markers), keeping the others' figures."""
    begin, end = f"<!-- {name}: generated, do not edit -->\n", f"<!-- /{name} -->\n"
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = "# Benchmark results\n\n"
    block = begin + text + end
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(new)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    parser.add_argument("--same-process", action="store_true",
                        help="time PyTorch in this process (after the engine's malloc tuning) instead of its own")
    parser.add_argument("--cpu-time", action="store_true",
                        help="least CPU time of the repeats instead of the wall-clock median (a machine shared with "
                             "other jobs)")
    parser.add_argument("--without", action="append", default=[], metavar="NAME,...",
                        help="speed mechanisms switched off for this run: " + ", ".join(MECHANISMS))
    parser.add_argument("--ablate", action="store_true",
                        help="every mechanism on and each one off, in interleaved fresh processes; writes bench/RESULTS.md")
    parser.add_argument("--rounds", type=int, default=5, help="--ablate: rounds of processes (default 5)")
    parser.add_argument("--runs-json", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--times", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--paired", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pairs", type=int, default=8, help="--ablate: blocks with and without each flag per round")
    parser.add_argument("--rep", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    rep = args.rep or (5 if args.quick else 15)
    if args.torch_only:
        torch_only(rep)
        return
    if args.times:
        engine_times(rep)
        return
    if args.paired:
        paired_times(args.pairs)
        return
    if args.ablate:
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        load_before = os.getloadavg()
        if args.runs_json:  # the figures of an earlier --ablate, written again
            with open(args.runs_json) as f:
                saved = json.load(f)
            write_results(saved["runs"], saved["rounds"], saved["rep"], saved["pairs"], saved["started"],
                          saved["load_before"])
            return
        runs = ablate(args.rounds, rep, args.pairs)
        raw = os.path.join(tempfile.gettempdir(), f"flowgrad-ablation-{os.getpid()}.json")
        with open(raw, "w") as f:
            json.dump({"runs": runs, "rounds": args.rounds, "rep": rep, "pairs": args.pairs, "started": started,
                       "load_before": load_before}, f)
        print(f"raw figures: {raw} (--ablate --runs-json {raw} writes RESULTS.md from them again)", file=sys.stderr)
        write_results(runs, args.rounds, rep, args.pairs, started, load_before)
        return
    gc.collect()
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'absent'}; "
          f"micrograd {'present' if Value else 'absent'}; PyTorch timed "
          f"{'in this process' if args.same_process else 'in a process of its own (glibc malloc defaults)'}; "
          f"{'least CPU time of the repeats' if CPU_TIME else 'wall-clock medians'}"
          f"{'; without ' + ', '.join(sorted(WITHOUT)) if WITHOUT else ''}\n")
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
