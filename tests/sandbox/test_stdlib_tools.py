"""`copy`, `typing`, `__future__`, `warnings`, `sys`, `json` and `tqdm` (sandbox/copy_module.py, sandbox/stdlib_tools.py):
what programs import at the top. A program using them prints what CPython with PyTorch prints (tqdm: its bar goes to
stderr, so stdout is the program's own); what they are handed is bounded, and nothing they return reaches outside."""
import sys

import pytest
from sandbox_testing import err, leaks, make_limits, ok, same_as_cpython

PROGRAM = """from __future__ import annotations
import copy
import sys
import json
import warnings
from typing import List, Dict, Optional, Tuple
import torch
import torch.nn as nn

warnings.filterwarnings("ignore")
torch.manual_seed(0)
Vector = List[float]
print(Vector, Optional[int], Dict[str, Tuple[int, ...]])


def mean(xs: List[float]) -> Optional[float]:
    return sum(xs) / len(xs) if xs else None


print(mean([1.0, 2.0]), mean([]))
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
x = torch.randn(8, 3)
y = torch.randn(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
best, best_loss = None, float("inf")
for step in range(5):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() < best_loss:
        best_loss = loss.item()
        best = copy.deepcopy(model)
print(best is model, best[0].weight.grad, torch.equal(best[0].weight, model[0].weight))
print(best)
print(best(x)[:2])
w = torch.ones(2, requires_grad=True)
w.grad = torch.full((2,), 3.0)
w2 = copy.deepcopy(w)
print(w2, w2.grad, w2.is_leaf)
try:
    copy.deepcopy(w * 2)
except RuntimeError as e:
    print("RuntimeError", str(e)[:40])
cfg = {"lr": 0.1, "layers": [3, 4, 1], "name": "mlp", "nested": {"a": [1, 2, {"b": None}]}}
c2 = copy.deepcopy(cfg)
c2["nested"]["a"][2]["b"] = 5
print(cfg, c2)
s = json.dumps(cfg, indent=2, sort_keys=True)
print(s)
print(json.loads(s) == cfg, json.dumps([1, 2.5, True, None, "x"]))
try:
    json.dumps({"t": torch.ones(1)})
except TypeError as e:
    print("TypeError", e)
sys.stdout.write("written\\n")
print("to stderr", file=sys.stderr)
print("to stdout", file=sys.stdout)
print(len(sys.argv) >= 1, sys.platform, sys.maxsize > 2 ** 32, sys.getrecursionlimit() > 0)
sh = copy.copy([1, [2, 3]])
print(sh)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


p = Point(1, [2])
q = copy.deepcopy(p)
q.y.append(3)
print(p.y, q.y, type(q).__name__)
"""


def test_a_program_using_them_prints_what_python_and_pytorch_print():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("source", [
    "import copy\na = [1]\na.append(a)\nb = copy.deepcopy(a)\nprint(b[1] is b, b is a, len(b))",
    "import copy\nf = lambda x: x\nprint(copy.deepcopy(f) is f, copy.copy(len) is len, copy.deepcopy((1, 'a')))",
    "import copy\nfrom collections import OrderedDict, defaultdict, deque, Counter\n"
    "d = defaultdict(list)\nd['a'].append(1)\ne = copy.deepcopy(d)\ne['b'].append(2)\n"
    "print(d, e, copy.deepcopy(OrderedDict(x=[1])), copy.deepcopy(deque([1, [2]], maxlen=3)), copy.copy(Counter('aab')))",
    "import copy\nclass P:\n    def __init__(self):\n        self.items = [1, 2]\n"
    "p = P()\nq = copy.copy(p)\nq.items.append(3)\nr = copy.deepcopy(p)\nr.items.append(4)\nprint(p.items, q.items, r.items)",
    "from typing import Any, Callable, Union, TYPE_CHECKING, cast\nT = Union[int, str]\n"
    "print(T, Callable[[int], float], TYPE_CHECKING, cast(int, 'x'), Any)",
    "import json\nprint(json.loads('{\"a\": [1, 2.5, null, true]}'), json.dumps({'b': 1, 'a': [1]}, sort_keys=True), "
    "json.dumps('é'), json.dumps('é', ensure_ascii=False), json.dumps(float('nan')))",
    "import json\ntry:\n    json.loads('{bad')\nexcept json.JSONDecodeError as e:\n    print(type(e).__name__, e)",
    "import sys\nprint(type(sys.argv).__name__, sys.stdout.write('abc'), sys.stderr.write('hidden'))",
])
def test_they_behave_as_in_cpython(source):
    same_as_cpython(source + "\n")


def test_a_tqdm_bar_iterates_what_it_wraps_and_prints_nothing_to_stdout():
    out = ok("""from tqdm import tqdm, trange
from tqdm.auto import tqdm as auto_tqdm
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(10.).view(5, 2)), batch_size=2)
loop = tqdm(loader, desc="train", leave=False)
total = 0
for i, (xb,) in enumerate(loop):
    total += xb.sum().item()
    loop.set_description(f"Epoch {i}")
    loop.set_postfix(loss=total, acc=0.5)
print(total, loop.n, loop.total, len(loop))
for j in trange(2, desc="x"):
    print(j)
with tqdm(total=4) as bar:
    for k in range(4):
        bar.update(1)
print(bar.n, list(auto_tqdm([1, 2, 3])), sum(tqdm(x * x for x in range(4))))
""")
    assert out == "45.0 3 3 3\n0\n1\n4 [1, 2, 3] 14\n"


@pytest.mark.parametrize("source, kind", [
    ("import copy\nx = []\nfor _ in range(500):\n    x = [x]\ny = copy.deepcopy(x)", "RecursionError"),
    ("import copy, torch\nt = torch.ones(10_000_000)\nu = copy.deepcopy(t)\ny = copy.deepcopy([t, t.clone()])",
     "LimitExceeded"),
    ("import copy, torch\nx = torch.ones(2, requires_grad=True)\ny = copy.deepcopy(x * 2)", "RuntimeError"),
    ("import copy, torch\nopt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\ny = copy.deepcopy(opt)",
     "TypeError"),
    ("import copy\ndef g():\n    yield 1\ny = copy.deepcopy(g())", "TypeError"),
    ("import copy\nf = open('a.txt', 'w')\ny = copy.deepcopy(f)", "TypeError"),
    ("import copy\ny = copy.deepcopy([1], {})", "TypeError"),
    ("import json\nx = []\nfor _ in range(200):\n    x = [x]\ny = json.dumps(x)", "RecursionError"),
    ("import json\ny = json.loads('[' * 100000 + ']' * 100000)", "RecursionError"),
    ("import json\ny = json.dumps([1], default=print)", "TypeError"),
    ("import json\ny = json.loads('[1]', object_hook=print)", "TypeError"),
    ("import json\ny = json.dumps(list(range(10)), indent=10**9)", "TypeError"),
    ("import json\ny = json.dumps('x' * 9_000_000 + 'é' * 9_000_000)", "LimitExceeded"),
    ("import sys\ny = sys.stdout.write(5)", "TypeError"),
    ("import sys\ny = sys.modules", "AttributeError"),
    ("from tqdm import tqdm\nfor x in tqdm(None):\n    pass", "TypeError"),
    ("from tqdm import tqdm\ny = tqdm(range(3)).update('a')", "TypeError"),
])
def test_what_they_are_handed_is_bounded(source, kind):
    e = err(source + "\n")
    assert e["type"] == kind, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "copy.deepcopy.__self__", "copy.__dict__", "copy.deepcopy.fn", "sys.stdout.interp", "sys.stdout.__class__.__init__",
    "sys.stdout.buffer", "sys.stderr.write.__self__", "json.__loader__", "typing.List.text",
    "typing.List.__class__.__mro__", "typing.List[int].__getitem__.__globals__", "tqdm(range(3)).iterable",
    "tqdm(range(3)).interp", "tqdm(range(3)).update.__self__", "tqdm.__wrapped__", "warnings.warn.__closure__",
    "getattr(sys.stdout, '_' + '_class__')",
])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import copy, sys, json, typing, warnings\nfrom tqdm import tqdm\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])


ARGPARSE_PROGRAM = """import argparse
import torch
parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
parser.add_argument('--batch-size', type=int, default=64, metavar='N', help='input batch size for training (default: 64)')
parser.add_argument('--epochs', type=int, default=14, metavar='N')
parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
parser.add_argument('--gamma', type=float, default=0.7)
parser.add_argument('--no-cuda', action='store_true', default=False)
parser.add_argument('--dry-run', action='store_true')
parser.add_argument('--seed', type=int, default=1)
parser.add_argument('--save-model', action='store_true', default=False)
parser.add_argument('--opt', choices=['sgd', 'adam'], default='sgd')
args = parser.parse_args()
use_cuda = not args.no_cuda and torch.cuda.is_available()
torch.manual_seed(args.seed)
print(args.batch_size, args.epochs, args.lr, args.dry_run, use_cuda, args.opt)
print(args)
a2 = parser.parse_args(['--lr', '0.5', '--dry-run', '--epochs=3', '--opt', 'adam'])
print(a2.lr, a2.dry_run, a2.epochs, a2.opt)
args.lr = 0.1
print(args.lr, vars(args) if False else 'ok')
p2 = argparse.ArgumentParser()
p2.add_argument('data')
p2.add_argument('--layers', nargs='+', type=int, default=[1])
print(p2.parse_args(['d.txt', '--layers', '3', '4']))
"""


def test_a_script_s_argparse_options_take_their_defaults_as_under_python(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setattr(sys, "argv", ["program.py"])  # CPython's command line as a run's: `python program.py`
    same_as_cpython(ARGPARSE_PROGRAM)


@pytest.mark.parametrize("line, kind", [
    ("p.parse_args(['--n', 'x'])", "ValueError"),
    ("p.parse_args(['--n'])", "ValueError"),
    ("p.parse_args(['--other'])", "ValueError"),
    ("p.parse_args([1])", "TypeError"),
    ("p.add_argument('--m', action='version')", "ValueError"),
    ("p.add_argument(5)", "TypeError"),
    ("[p.add_argument(f'--a{i}') for i in range(2000)]", "LimitExceeded"),
    ("p.parse_args(['--n', '1'] * 10**7)", "LimitExceeded"),
    ("p.specs", "AttributeError"), ("p.interp", "AttributeError"), ("p.parse_args().__dict__", "AttributeError"),
    ("p.parse_args.__self__", "AttributeError"), ("argparse.Namespace(a=1).__class__.__init__", "AttributeError"),
])
def test_argparse_refuses_what_it_must(line, kind):
    e = err(f"import argparse\np = argparse.ArgumentParser()\np.add_argument('--n', type=int, default=1)\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])


def test_copies_count_against_the_runs_budget():
    # each deep copy of 5,000 list items counts: the run's total of list items (10 x max_live_elements) runs out
    e = err("import copy\nx = [list(range(100)) for _ in range(50)]\nys = []\nfor _ in range(40):\n"
            "    ys.append(copy.deepcopy(x))\n", limits=make_limits(max_live_elements=2000))
    assert e["type"] == "LimitExceeded" and e["line"] == 5, e


def test_from_future_import_annotations_changes_nothing():
    assert same_as_cpython("from __future__ import annotations, division\ndef f(x: 'Undefined') -> 'Nope':\n"
                           "    return x / 2\nprint(f(3))\n") == "1.5\n"


def test_id_is_the_address_every_repr_shows():
    assert same_as_cpython("a = [1]\nb = a\nclass C:\n    pass\nc = C()\n"
                           "print(id(a) == id(b), id(a) == id([1]), hex(id(c)) in repr(c), type(id(a)).__name__)\n"
                           "seen = {id(a): 'a'}\nprint(seen.get(id(b)), id(c) == id(c))\n") == "True False True int\na True\n"
    out = ok("x = [1]\nprint(hex(id(x)), x.__class__.__name__)\n")
    assert out.startswith("0x7f0000") and not leaks(out.replace("0x7f0000", ""))


@pytest.mark.parametrize("source, kind", [
    ("y = id()", "TypeError"),
    ("xs = [[] for _ in range(70000)]\ny = [id(x) for x in xs]", "LimitExceeded"),
    ("y = id.__self__", "AttributeError"),
])
def test_id_is_bounded(source, kind):
    e = err(source + "\n")
    assert e["type"] in (kind, "SandboxViolation"), e
