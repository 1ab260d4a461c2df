"""Fuzzing the whole server: hypothesis writes programs from a grammar of the allowed constructs (and
hostile fragments), each goes through `POST /api/run` of the real app with its real worker pool, and
every answer must be

* not a 5xx, and a JSON body a strict parser accepts (no NaN/Infinity tokens),
* within the answer budget (the `max_answer_bytes` setting when there is one, else 8 MB),
* free of real memory addresses (only the sandbox's stand-ins, `ALLOWED_ADDRESS`, may appear) and of internal names
  (`engine.`, `sandbox.`, `app.`, `numpy`, `/work`, `site-packages`, ...),
* a run that ended on its own: no `InternalError`, no crashed/replaced worker, no process-level
  `MemoryError` (that would mean a limit was missing and only RLIMIT_AS stopped the program),

and the server must still answer a trivial program afterwards.

The grammar: assignments of tensor expressions (factories, operators, methods, functions, indexing,
empty tensors), small loops, `if`, functions, classes subclassing `nn.Module`, layers (conv, pooling,
embedding, normalisation, recurrent) and a DataLoader, prints and f-strings, comprehensions,
backward / zero_grad / optimizer steps; mixed with hostile fragments: dunder and
private attribute attempts, forbidden names and imports, huge numbers and sizes (also through a
tensor's `__index__`), deep nesting, weird unicode, broken syntax.

Bounded by default (`make test`): `DEFAULT_EXAMPLES` derandomized examples, well under a minute. The
long run is behind an environment variable, with a fresh random seed each time:

    FLOWGRAD_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest tests/app/test_fuzz.py::test_fuzz_programs_long

(`--hypothesis-seed=N` replays a run; a failing program is printed by hypothesis, shrunk.)
"""

from __future__ import annotations

import os
import re
import warnings

import pytest
from flowgrad_testing import strict_json
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sandbox.formatting import FakeAddresses

DEFAULT_EXAMPLES = 25
LONG_EXAMPLES = int(os.environ.get("FLOWGRAD_FUZZ_EXAMPLES", "0") or 0)
ANSWER_BUDGET_BYTES = 8 * 1024 * 1024  # the answer budget when the settings have none
# The one form of address an answer may show: the sandbox's per-run stand-in for `<object at 0x...>`
# (`0x7f0000000010`, ...). Anything else that looks like an address is a real one.
ALLOWED_ADDRESS = FakeAddresses.PATTERN
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
# Internal names that must never reach an answer. `numpy` is a module programs import (`numpy.ndarray`,
# `numpy.random`), its internals are not (`numpy._core`, `numpy.lib`, `numpy/...`).
INTERNAL = re.compile(r"\bengine\.|\bsandbox\.|\bapp\.|\bnumpy(?:\.(?:_|core|lib)|/)|/work\b|site-packages|Traceback|"
                      r"File \"")
# Errors that mean the run did not end on its own terms (a guard is missing, or flowgrad itself failed).
CRASH_TYPES = frozenset({"InternalError", "WorkerError", "MemoryError"})
TRIVIAL = "print(6 * 7)\n"


def answer_budget(app_settings) -> tuple[int, bool]:
    """(bytes, enforced): the server's answer budget setting (a field like `max_answer_bytes`) when it has one,
    else 8 MB. Without the setting the server does not bound its answers yet: an answer over 8 MB is then
    a warning, not a failure (once the setting exists it is enforced)."""
    for name in type(app_settings).model_fields:
        if "answer" in name and name.endswith("bytes"):
            value = getattr(app_settings, name)
            if isinstance(value, int) and value > 0:
                return value, True
    return ANSWER_BUDGET_BYTES, False


# ================================================================ the grammar
NAMES = ("a", "b", "x", "y", "w", "h", "out", "loss")
SMALL = st.integers(min_value=0, max_value=4)
DIM = st.integers(min_value=1, max_value=4)
FLOAT = st.sampled_from(["0.5", "1.0", "-2.0", "3.0", "0.1", "1e-3", "2.5", "0.0", "-1.5", "1e3"])


def shape_args():
    return st.lists(DIM, min_size=1, max_size=3).map(lambda dims: ", ".join(map(str, dims)))


@st.composite
def nested_list(draw):
    rows = draw(st.integers(1, 3))
    cols = draw(st.integers(1, 3))
    vals = draw(st.lists(FLOAT, min_size=rows * cols, max_size=rows * cols))
    if draw(st.booleans()):
        return "[" + ", ".join(vals[:cols]) + "]"
    return "[" + ", ".join("[" + ", ".join(vals[r * cols:(r + 1) * cols]) + "]" for r in range(rows)) + "]"


def factory():
    grad = st.sampled_from(["", ", requires_grad=True"])
    return st.one_of(
        st.tuples(nested_list(), grad).map(lambda t: f"torch.tensor({t[0]}{t[1]})"),
        st.tuples(FLOAT, grad).map(lambda t: f"torch.tensor({t[0]}{t[1]})"),
        st.tuples(st.sampled_from(["randn", "rand", "zeros", "ones"]), shape_args(), grad)
        .map(lambda t: f"torch.{t[0]}({t[1]}{t[2]})"),
        st.tuples(SMALL, DIM).map(lambda t: f"torch.zeros({t[0]}, {t[1]})"),  # maybe empty
        DIM.map(lambda n: f"torch.arange({n})"),
        st.tuples(FLOAT, FLOAT, SMALL).map(lambda t: f"torch.linspace({t[0]}, {t[1]}, {t[2]})"),
        DIM.map(lambda n: f"torch.eye({n})"),
        st.tuples(shape_args(), FLOAT).map(lambda t: f"torch.full(({t[0]},), {t[1]})"),
        st.tuples(DIM, shape_args()).map(lambda t: f"torch.randint(0, {t[0]}, ({t[1]},))"),
        DIM.map(lambda n: f"nn.Parameter(torch.randn({n}))"),
    )


UNARY_METHODS = (".exp()", ".tanh()", ".relu()", ".sigmoid()", ".sum()", ".mean()", ".sum(0)", ".sum(-1)",
                 ".mean(0, keepdim=True)", ".max()", ".max(0)[0]", ".min(-1).values", ".argmax()", ".t()",
                 ".T", ".reshape(-1)", ".view(-1)", ".flatten()", ".unsqueeze(0)", ".squeeze()", ".abs()",
                 ".clamp(min=0)", ".softmax(-1)", ".log_softmax(0)", ".detach()", ".clone()", ".float()",
                 ".double()", ".long()", ".sqrt()", ".log()", ".neg()", ".norm()", ".square()", "[0]",
                 "[:, 0]", "[..., -1]", "[None]", "[1:]", "[::2]", ".expand(2, -1)", ".transpose(0, 1)",
                 ".permute(1, 0)", ".item()", ".tolist()", ".shape", ".grad", ".requires_grad_()",
                 ".data", ".numel()", ".size(0)", ".dim()", ".bool()", ".pow(2)", ".reciprocal()")
BINARY_OPS = ("+", "-", "*", "/", "@", "**", ">", "<", "==", "&", "|")
FUNCTIONS = ("torch.cat([{a}, {b}])", "torch.stack([{a}, {b}])", "torch.where({a} > 0, {a}, {b})",
             "torch.matmul({a}, {b})", "torch.maximum({a}, {b})", "F.mse_loss({a}, {b})", "F.relu({a})",
             "F.softmax({a}, dim=-1)", "F.cross_entropy({a}, {b}.long())", "F.one_hot({a}.long().abs())",
             "F.binary_cross_entropy({a}.sigmoid(), {b})", "torch.exp({a}) * {b}", "{a}.add_({b})",
             "{a}.mul_(2)", "{a}.zero_()", "{a}[{b}.long()]", "{a}[{a} > 0]", "{a}.expand_as({b})",
             "torch.tanh({a}).sum()", "{a}.view_as({b})", "torch.ones_like({a})", "torch.zeros_like({b})",
             "F.linear({a}, {b})", "torch.cat([{a}, {b}], dim=1)", "torch.clamp({a}, -1, 1)")


def tensor_expr(names=NAMES):
    leaf = st.one_of(st.sampled_from(names), factory(), FLOAT)

    def grow(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(UNARY_METHODS)).map(lambda t: f"({t[0]}){t[1]}"),
            st.tuples(inner, st.sampled_from(BINARY_OPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(FUNCTIONS), inner, inner).map(lambda t: t[0].format(a=t[1], b=t[2])),
        )

    return st.recursive(leaf, grow, max_leaves=5)


def indent(lines):
    return ["    " + line for line in lines]


@st.composite
def simple_statement(draw):
    name = draw(st.sampled_from(NAMES))
    expr = draw(tensor_expr())
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return [f"{name} = {expr}"]
    if kind == 4:
        return [f"{name} {draw(st.sampled_from(['+=', '-=', '*=']))} {expr}"]
    if kind == 5:
        return [f"print({expr})"]
    if kind == 6:
        return [f"print(f\"{name}={{{name}}} {{{expr}!r}} {{{name}.shape}}\")"]
    if kind == 7:
        return [f"{name} = ({expr}).sum()", f"{name}.backward()"]
    if kind == 8:
        return [f"print({name}.grad, {name}.requires_grad, {name}.grad_fn)"]
    return [f"print(f\"{{float(({expr}).sum()):.3f}}\")"]


LAYERS = (
    "nn.Conv2d({c}, {k}, 3, padding=1)(torch.randn({n}, {c}, {h}, {h}))",
    "nn.Conv1d({c}, {k}, 2)(torch.randn({n}, {c}, {h}))",
    "F.max_pool2d(torch.randn({n}, {c}, {h}, {h}), 2)",
    "F.avg_pool2d(torch.randn({n}, {c}, {h}, {h}), 1)",
    "F.adaptive_avg_pool2d(torch.randn({n}, {c}, {h}, {h}), ({k}, {k}))",
    "F.pad(torch.randn({n}, {h}), ({k}, {c}))",
    "nn.Embedding({h}, {k})(torch.randint(0, {h}, ({n}, {c})))",
    "nn.LayerNorm({h})(torch.randn({n}, {h}))",
    "nn.BatchNorm1d({c})(torch.randn({n}, {c}))",
    "nn.Dropout(0.5)(torch.randn({n}, {h}))",
    "nn.LSTM({c}, {k})(torch.randn({n}, 1, {c}))[0]",
    "nn.GRU({c}, {k}, batch_first=True)(torch.randn({n}, 2, {c}))[1]",
    "nn.Flatten()(torch.randn({n}, {c}, {h}))",
    "F.gelu(torch.randn({n}, {h}))",
    "F.l1_loss(torch.randn({n}), torch.randn({n}))",
)


@st.composite
def layer_statement(draw):
    sizes = {k: draw(st.integers(0 if k == "n" else 1, 4)) for k in "nckh"}
    layer = draw(st.sampled_from(LAYERS)).format(**sizes)
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return [f"{draw(st.sampled_from(NAMES))} = {layer}", f"print({layer}.shape)"]
    if kind == 1:
        return [f"out = {layer}", "out.sum().backward() if out.requires_grad else None", "print(out)"]
    return ["from torch.utils.data import TensorDataset, DataLoader",
            f"ds = TensorDataset(torch.randn({sizes['h'] + 2}, {sizes['c']}), torch.arange({sizes['h'] + 2}))",
            f"for xb, yb in DataLoader(ds, batch_size={sizes['k']}, shuffle=True):",
            "    print(xb.shape, yb.tolist())"]


@st.composite
def compound_statement(draw):
    kind = draw(st.integers(0, 6))
    body = draw(st.lists(simple_statement(), min_size=1, max_size=3))
    body = [line for stmt in body for line in stmt]
    if kind == 0:
        return [f"for i in range({draw(SMALL)}):"] + indent(body)
    if kind == 1:
        return [f"if {draw(tensor_expr())}.sum() > 0:"] + indent(body) + ["else:", "    pass"]
    if kind == 2:
        expr = draw(tensor_expr(("v", "a", "b")))
        return ["def f(v):", f"    return {expr}", f"{draw(st.sampled_from(NAMES))} = f({draw(tensor_expr())})"]
    if kind == 3:
        n_in, n_out = draw(DIM), draw(DIM)
        act = draw(st.sampled_from(["nn.ReLU()", "nn.Tanh()", "nn.Sigmoid()", "nn.Identity()"]))
        return ["class Net(nn.Module):",
                "    def __init__(self):",
                "        super().__init__()",
                f"        self.fc = nn.Linear({n_in}, {n_out})",
                f"        self.act = {act}",
                "    def forward(self, v):",
                "        return self.act(self.fc(v))",
                "model = Net()",
                f"opt = {draw(st.sampled_from(['torch.optim.SGD', 'optim.Adam']))}(model.parameters(), lr=0.1)",
                f"for step in range({draw(SMALL)}):",
                "    opt.zero_grad()",
                f"    loss = model(torch.randn({draw(DIM)}, {n_in})).pow(2).mean()",
                "    loss.backward()",
                "    opt.step()",
                "print(model, loss)"]
    if kind == 4:
        return [f"xs = [{draw(tensor_expr(('i', 'a')))} for i in range({draw(SMALL)})]",
                "print(len(xs), [str(v)[:30] for v in xs])"]
    if kind == 5:
        return ["model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))",
                "opt = optim.SGD(model.parameters(), lr=0.01)",
                "loss = F.mse_loss(model(torch.randn(5, 3)), torch.zeros(5, 1))",
                "loss.backward()",
                "opt.step()",
                "print({k: v.shape for k, v in model.named_parameters()})"]
    return ["with torch.no_grad():"] + indent(body)


HOSTILE = (
    # attributes and names the sandbox refuses
    "print(a.__class__)", "print(().__class__.__bases__[0].__subclasses__())", "print(a._data)",
    "print(type(a).__init__)", "print(getattr(a, '__dict__'))", "import os", "__import__('os')",
    "print(open('/etc/passwd').read())", "eval('1 + 1')", "exec('x = 1')", "print(torch._C)",
    "print(nn.Module.__dict__)", "print(F.np)", "print(torch.limits)", "print(torch.nn.functional.OPS)",
    "import sys", "from torch import *", "print(globals())", "print(a.grad_fn.next_functions)",
    "print(model.__dict__)", "print(x.__array_interface__)", "nn.ReLU.forward = lambda self, v: v",
    "print(vars(a))", "print(dir(torch))", "print(type(a).mro())", "print(F.one_hot.__globals__)",
    "print((lambda: 0).__code__)", "print(a.data.__class__.__module__)", "print(repr(torch))",
    "print(repr(F.relu), repr(nn.Linear), repr(torch.tensor), repr(nn.Module.parameters))",
    "print(repr(a.grad_fn), repr(range), repr(print), repr(len), str(optim.SGD))",
    # huge numbers and sizes
    "x = 10 ** 10 ** 10", "x = torch.zeros(10 ** 9)", "x = 'a' * 10 ** 9", "x = [0] * torch.tensor(10 ** 9)",
    "x = 'ab' * torch.tensor(10 ** 9)", "x = 'a'.center(torch.tensor(10 ** 9))", "x = torch.zeros(0, 10 ** 8).sum(0)",
    "x = torch.randn(100000, 100000)", "x = torch.ones(1).expand(10 ** 6, 10 ** 6)", "x = torch.tensor(1e308) * 10",
    "x = float('inf') - float('inf')", "print(torch.tensor([float('nan'), float('inf'), -float('inf')]))",
    "x = torch.linspace([0] * 100000, 1, 100000)", "x = F.one_hot(torch.zeros(0).long(), 10 ** 8)",
    "x = torch.zeros(3).shape * 10 ** 8", "x = torch.arange(0, 1, 1e-12)", "x = torch.eye(10 ** 6)",
    "x = torch.zeros(0).view(100000, 100000, 0)", "x = torch.full((10 ** 5, 10 ** 5), 1.0)",
    "x = list(range(10 ** 12))", "x = sum(range(10 ** 12))", "x = 2 ** 4000 * 2 ** 4000",
    "x = '{:>1000000}'.format(1)", "x = f'{1:>99999999}'", "x = '%999999999d' % 1", "x = round(1.5, 10 ** 9)",
    "x = [[0] * 1000] * 1000\nprint(torch.tensor(x).shape)", "x = torch.randn(300, 300) @ torch.randn(300, 300)",
    "x = torch.tensor([[1.0] * 400] * 400)\nfor i in range(50):\n    x = x @ x", "while True:\n    pass",
    "for i in range(10 ** 9):\n    pass", "x = torch.tensor(2.0, requires_grad=True)\nfor i in range(20000):\n    x = x * 1.0001",
    "x = 'x' * 100\nfor i in range(100000):\n    print(x)", "x = [1]\nfor i in range(40):\n    x = x + x",
    "x = torch.randint(0, 10 ** 18, (3,))\nprint(x, x.sum())", "print(torch.tensor(10 ** 30))",
    "x = torch.zeros(100000, 0)\nprint(x, x.tolist())", "x = 1e308 ** 2", "x = 10 ** 4000\nprint(x)",
    # deep nesting
    "x = " + "(" * 90 + "1" + ")" * 90, "x = " + "[" * 60 + "]" * 60, "x = " + "-" * 500 + "1",
    "def f(n):\n    return f(n + 1)\nf(0)", "t = ()\nfor i in range(5000):\n    t = (t,)\nprint(t)",
    "d = {}\nfor i in range(5000):\n    d = {'k': d}\nprint(d)", "x = []\nx.append(x)\nprint(x, repr(x), str(x))",
    "".join(" " * i + "if True:\n" for i in range(45)) + " " * 45 + "pass",
    # weird unicode and broken syntax
    "ñ = torch.ones(2)\nprint(ñ)", "变量 = torch.zeros(2)\nprint(变量 + 1)", "print('\\u202e' + 'abc' + '\\u200b')",
    "print('\\ud800')", "x = '\\x00' * 10\nprint(x)", "print('e\\u0301' * 3, '\\N{SNOWMAN}')", "ｘ = 1\nprint(x)",
    "print(\"\U0001F600\" * 100)", "x = (", "def f(:\n  pass", "x = 1 +", "\t\tx = 1", "x = 1\n  y = 2", "@@@",
    "print(f'{x!z}')", "class A(nn.Module, metaclass=type): pass", "x = lambda: (yield)", "try:\n    pass\nexcept:\n    pass",
    "print(1_000_000_000_000_000_000_000_000)", "print(0x7fffffffffffffff)",
)
# autograd (issue 9 §2): hooks and custom Functions that loop, raise, return junk or recurse
_AUTOGRAD_FN = ("class Fz(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, v):\n        {f}\n"
                "        return v * 2\n    @staticmethod\n    def backward(ctx, g):\n        {b}\n"
                "y = Fz.apply(a.detach().requires_grad_())\ny.sum().backward()\nprint(y.grad_fn)")
HOSTILE = HOSTILE + (
    "h = x.requires_grad_().register_hook(lambda g: g.nothing)\n(x * 2).sum().backward()",
    "def hk(g):\n    while True:\n        pass\nx.requires_grad_().register_hook(hk)\n(x * 2).sum().backward()",
    "x.requires_grad_().register_hook(lambda g: torch.ones(10 ** 9))\n(x * 2).sum().backward()",
    "x.requires_grad_().register_hook(lambda g: [g] * 10 ** 6)\n(x * 2).sum().backward()",
    "for i in range(5000):\n    x.requires_grad_().register_hook(lambda g: g * 2)\n(x * 2).sum().backward()\nprint(x.grad)",
    _AUTOGRAD_FN.format(f="ctx.save_for_backward(v)", b="return {'junk': g}"),
    _AUTOGRAD_FN.format(f="ctx.k = [ctx] * 1000", b="return Fz.apply(g)"),
    _AUTOGRAD_FN.format(f="ctx.saved_tensors = 1", b="return g"),
    _AUTOGRAD_FN.format(f="return Fz.apply(v)", b="return g"),
    _AUTOGRAD_FN.format(f="pass", b="return g.expand(10 ** 6, 10 ** 6)"),
    "m = nn.Linear(2, 2)\nm.register_forward_hook(lambda mod, i, o: mod(o))\nm(torch.ones(2))",
    "m = nn.Linear(2, 2)\nm.register_full_backward_hook(lambda mod, gi, go: (1, 2, 3))\n"
    "m(torch.ones(2, requires_grad=True)).sum().backward()",
)

WEIRD_STRINGS = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="x\\'\"\r\n"),
                        max_size=12)


@st.composite
def programs(draw):
    lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", "import torch.optim as optim"]
    for name in NAMES:  # every name is bound: statements reach the engine rather than stop at a NameError
        lines.append(f"{name} = {draw(factory())}")
    for _ in range(draw(st.integers(1, 6))):
        choice = draw(st.integers(0, 10))
        if choice <= 3:
            lines += draw(simple_statement())
        elif choice == 10:
            lines += draw(layer_statement())
        elif choice <= 6:
            lines += draw(compound_statement())
        elif choice == 7:
            lines += draw(st.sampled_from(HOSTILE)).split("\n")
        elif choice == 8:
            lines.append(f"print('{draw(WEIRD_STRINGS)}', {draw(st.sampled_from(NAMES))})")
        else:
            lines.append(f"s = '{draw(WEIRD_STRINGS)}'\nprint(s * 3, s.upper(), len(s), f'{{s:>10}}', s.split())")
    return "\n".join(lines) + "\n"


# ================================================================ the checks
def check_answer(response, source, budget):
    what = f"program:\n{source}\nanswer: {response.text[:500]}"
    assert response.status_code < 500, what
    size, (limit, enforced) = len(response.content), budget
    if enforced:
        assert size <= limit, f"answer of {size:,} bytes > {limit:,}\n{what}"
    elif size > limit:
        warnings.warn(f"answer of {size:,} bytes > {limit:,} and the server has no answer budget setting yet:\n"
                      f"{source}", stacklevel=2)
    data = strict_json(response.text)
    text = response.text
    addresses = [m for m in ADDRESS.findall(text) if not ALLOWED_ADDRESS.fullmatch(m)]
    assert not addresses, f"real addresses {addresses[:3]}\n{what}"
    internal = INTERNAL.search(text)
    assert internal is None, f"internal name {internal.group(0)!r} in ...{text[max(0, internal.start() - 80):internal.end() + 80]}...\n{what}"
    if response.status_code == 200:
        error = data.get("error")
        if error is not None:
            assert isinstance(error.get("type"), str) and isinstance(error.get("message"), str), what
            assert error["type"] not in CRASH_TYPES, what
    return data


def check_alive(client):
    r = client.post("/api/run", json={"source": TRIVIAL})
    assert r.status_code == 200 and strict_json(r.text)["stdout"] == "42\n", r.text[:300]


def run_one(client, app_settings, source):
    r = client.post("/api/run", json={"source": source})
    check_answer(r, source, answer_budget(app_settings))
    check_alive(client)


_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large,
           HealthCheck.large_base_example]


@hsettings(max_examples=DEFAULT_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=_HEALTH,
          database=None)
@given(source=programs())
def test_fuzz_programs(client, settings, source):
    run_one(client, settings, source)


@pytest.mark.slow
@pytest.mark.skipif(LONG_EXAMPLES <= 0, reason="the long fuzz run needs FLOWGRAD_FUZZ_EXAMPLES=N")
@hsettings(max_examples=max(LONG_EXAMPLES, 1), deadline=None, suppress_health_check=_HEALTH)
@given(source=programs())
def test_fuzz_programs_long(client, settings, source):
    run_one(client, settings, source)


@pytest.mark.parametrize("source", HOSTILE)
def test_every_hostile_fragment(client, settings, source):
    """Each hostile fragment once, alone after a few tensors (the random runs mix them in by chance)."""
    run_one(client, settings, "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
            "a = torch.randn(3, requires_grad=True)\nmodel = nn.Linear(3, 2)\n" + source + "\n")
