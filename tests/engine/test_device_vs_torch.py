"""The lines every tutorial starts with, against real CPU-only torch: devices, .to(), keyword forms of the
factories (size=, dtype=, device=, requires_grad=, out=, generator=), Variable, and the beginner's error messages.
Skipped when torch (the test-only extra) is absent."""
import pytest

import engine

torch = pytest.importorskip("torch")

if torch.cuda.is_available():  # pragma: no cover - the cross-check is with the CPU wheel
    pytest.skip("these tests compare with a CPU-only torch", allow_module_level=True)


def outcome(expr, lib):
    """(kind, text): the repr of what `expr` gives, or the error's type and message."""
    try:
        value = eval(expr, {"torch": lib, "nn": lib.nn})  # test expressions written here, never user input
    except Exception as e:  # noqa: BLE001 — the error itself is compared
        return type(e).__name__, str(e)
    return "value", repr(value)


def same(expr):
    mine, theirs = outcome(expr, engine), outcome(expr, torch)
    assert mine == theirs, expr


DEVICES = [
    'torch.cuda.is_available()', 'torch.cuda.device_count()', 'torch.backends.mps.is_available()',
    'torch.backends.mps.is_built()', 'torch.backends.cudnn.is_available()', 'torch.accelerator.is_available()',
    'torch.accelerator.device_count()', 'torch.accelerator.current_accelerator()', 'torch.cuda.is_initialized()',
    'torch.cuda.current_device()', 'torch.cuda.synchronize()', 'torch.cuda.manual_seed(0)',
    'torch.cuda.manual_seed_all(3)', 'torch.cuda.empty_cache()', 'torch.cuda.get_device_name()',
    'torch.device("cpu")', 'str(torch.device("cpu"))', 'torch.device("cuda")', 'torch.device("cuda:1")',
    'str(torch.device("cuda:1"))', 'torch.device("cuda", 0)', 'torch.device("cpu", 1)', 'torch.device("cpu").type',
    'torch.device("cpu").index', 'torch.device("cuda:2").index', 'torch.device("cpu") == torch.device("cpu")',
    'torch.device("cpu") == "cpu"', 'torch.device("cpu:0") == torch.device("cpu")',
    'torch.device("cpu") != torch.device("cuda")', 'hash(torch.device("cpu")) == hash(torch.device("cpu"))',
    'torch.device(torch.device("cuda:1"))', 'torch.device("gpu")', 'torch.device("")', 'torch.device("CPU")',
    'torch.device(1)', 'torch.device("cuda", -1)', 'torch.device("cpu:01")', 'torch.device("cuda:0", 1)',
    'torch.device("cpu", 1.5)', 'torch.device("cpu", True)', 'torch.device(None)', 'torch.device("cuda:")',
    'torch.device("cpu :0")', 'torch.device(torch.device("cpu"), 1)', 'torch.device("meta")',
    'torch.get_default_device()', 'torch.set_default_device("cpu")', 'torch.set_default_device(None)',
]
TENSORS = [
    'torch.ones(2).device', 'torch.ones(2).is_cuda', 'torch.ones(2).is_cpu', 'torch.ones(2).get_device()',
    'torch.ones(2).cpu()', 'torch.ones(2).cuda()', 'torch.ones(2).cuda(0)', 'torch.ones(2).to("cuda")',
    'torch.ones(2).to("cuda:0")', 'torch.ones(2).to(torch.device("cuda"))', 'torch.ones(2).to("mps")',
    'torch.ones(2).to("xla")', 'torch.ones(2).to(1)', 'torch.ones(2).to("cpu")', 'torch.ones(2).to("cpu:0")',
    'torch.ones(2).to(torch.device("cpu"))', 'torch.ones(2).to(torch.float64)', 'torch.ones(2).to("cpu", torch.int64)',
    'torch.ones(2).to(device="cpu", dtype=torch.int32)', 'torch.ones(2).to(dtype=torch.float16)',
    'torch.ones(2).to(torch.tensor([1], dtype=torch.int32))', 'torch.ones(2).to(torch.float64, False, True)',
    'torch.ones(2).to(None)', 'torch.ones(2).to(dtype=None)', 'torch.ones(2).to()',
    'torch.ones(2).to(torch.float64, device="cpu")', 'torch.ones(2).to("cpu", "float")', 'torch.ones(2).to([1])',
    'torch.ones(2).to(device=[1])', 'torch.ones(2).to(dtype="float")', 'torch.ones(2).to(torch.float64, torch.float32)',
    'torch.ones(2).to("cpu", device="cpu")', 'torch.ones(2).to(torch.tensor([1]), torch.float64)',
    'torch.ones(2).to("cpu", torch.float64, True, True, 3)', 'torch.ones(2, requires_grad=True).to(torch.float64)',
    'torch.ones(2, requires_grad=True).to("cpu")',
]
FACTORIES = [
    'torch.zeros(2, device="cuda")', 'torch.zeros(2, device=torch.device("cuda"))', 'torch.zeros(2, device=0)',
    'torch.zeros(2, device="cpu")', 'torch.zeros(2, device=torch.device("cpu"))', 'torch.zeros(2, device="cpu:0")',
    'torch.zeros(2, device=[1])', 'torch.tensor([1.0], device="cuda")', 'torch.tensor([1.0], device="cpu")',
    'torch.ones(2, 3, device="cpu", dtype=torch.float64, requires_grad=True)', 'torch.full((2,), 1.0, device="cuda")',
    'torch.randn(2, device="cuda")', 'torch.rand(2, device="cuda")', 'torch.arange(3, device="cuda")',
    'torch.eye(2, device="cuda")', 'torch.linspace(0, 1, 3, device="cuda")', 'torch.randint(0, 3, (2,), device="cuda")',
    'torch.randperm(3, device="cuda")', 'torch.empty(2, device="cuda")', 'torch.zeros_like(torch.ones(2), device="cuda")',
    'torch.randn(size=(2, 3)).shape', 'torch.ones(size=[2])', 'torch.zeros(size=(2,), dtype=torch.int64)',
    'torch.rand(size=(1, 2)).shape', 'torch.empty(size=(2, 1)).shape', 'torch.zeros(2, size=(2,))', 'torch.randn(2, 3, size=(2,))',
    'torch.randn()', 'torch.rand()', 'torch.zeros()', 'torch.ones()', 'torch.empty()', 'torch.randn(0)',
    'torch.tensor([1, 2], requires_grad=True)', 'torch.zeros(2, dtype=torch.long, requires_grad=True)',
    'torch.arange(3, requires_grad=True)', 'torch.full((2,), 1, requires_grad=True)',
    'torch.randint(3, (2,), requires_grad=True)', 'torch.ones(2, dtype=torch.long).requires_grad_()',
    'torch.zeros(2, 3, out=torch.empty(1))', 'torch.zeros(2, out=torch.empty(2, dtype=torch.int64))',
    'torch.zeros(2, out=torch.empty(2, dtype=torch.int64), dtype=torch.float32)',
    'torch.zeros(2, out=torch.empty(2, requires_grad=True))', 'torch.zeros(2, out=[1])',
    'torch.ones(size=(2,), out=torch.empty(2))', 'torch.arange(4, out=torch.zeros(1))',
    'torch.full((2, 2), 7, out=torch.zeros(4))', 'torch.eye(2, out=torch.zeros(2, 2))',
    'torch.linspace(0, 1, 5, out=torch.zeros(5))',
    'torch.autograd.Variable(torch.ones(2), requires_grad=True)', 'torch.autograd.Variable(torch.ones(2))',
    'torch.autograd.Variable(torch.ones(2, requires_grad=True) * 2)', 'torch.autograd.Variable([1.0, 2.0])',
    'torch.autograd.Variable()', 'type(torch.autograd.Variable(torch.ones(1))) is torch.Tensor',
    'torch.autograd.Variable(torch.ones(2), requires_grad=True).is_leaf',
]
FUNCTIONS_OUT = [
    'torch.add(torch.ones(2), torch.ones(2), out=torch.zeros(2))', 'torch.add(torch.ones(2, 3), torch.ones(3), out=torch.zeros(0))',
    'torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=torch.zeros(2, 2))',
    'torch.mul(torch.ones(2), 3, out=torch.zeros(2))', 'torch.sub(torch.ones(2), 3, out=torch.zeros(2, dtype=torch.float64))',
    'torch.add(torch.ones(2), torch.ones(2), out=torch.zeros(2, requires_grad=True))',
    'torch.add(torch.ones(2, requires_grad=True), torch.ones(2), out=torch.zeros(2))',
    'torch.matmul(torch.ones(2, 2, requires_grad=True), torch.ones(2, 2), out=torch.zeros(2, 2))',
    'torch.add(torch.ones(2), 1, out=torch.empty(2, dtype=torch.int64))', 'torch.exp(torch.zeros(2), out=torch.ones(2))',
    'torch.cat([torch.ones(2), torch.zeros(1)], out=torch.zeros(3))', 'torch.add(torch.ones(2), 1, out=[1])',
]
ERRORS = [
    'nn.Linear(3, 2)(torch.zeros(4, 5))', 'torch.zeros(4, 5) @ torch.zeros(3, 2)', 'torch.mm(torch.zeros(4, 5), torch.zeros(3, 2))',
    'torch.zeros(4, 5).mm(torch.zeros(3, 2))', 'torch.matmul(torch.zeros(5), torch.zeros(3, 2))',
    'torch.matmul(torch.zeros(4, 5), torch.zeros(3))', 'torch.dot(torch.zeros(4), torch.zeros(3))',
    'torch.zeros(2, 3) + torch.zeros(2, 4)', 'torch.zeros(2, 3) * torch.zeros(3, 2)', 'torch.zeros(3) - torch.zeros(4)',
    'torch.zeros(2, 3).view(4)', 'torch.zeros(2, 3).t().view(6)', 'torch.zeros(2, 3).view(-1, 4)',
    'torch.zeros(6).view(-1, -1)', 'torch.zeros(2, 3, 4) @ torch.zeros(5, 6)', 'torch.zeros(2, 3, 4) @ torch.zeros(2, 5, 6)',
    'torch.zeros(7, 3, 4) @ torch.zeros(2, 4, 6)', 'torch.zeros(2, 3, 4) @ torch.zeros(5)', 'torch.zeros(4) @ torch.zeros(2, 5, 6)',
    'torch.zeros(3, 4) @ torch.zeros(2, 5, 6)', 'torch.zeros(2, 2, 3, 4) @ torch.zeros(5, 5, 6)',
    'torch.zeros(1, 3, 4) @ torch.zeros(2, 5, 6)', 'torch.mm(torch.zeros(3), torch.zeros(3, 2))',
    'torch.mm(torch.zeros(3, 2), torch.zeros(2))', 'torch.dot(torch.zeros(2, 2), torch.zeros(2))',
    'torch.zeros(3).view(2, 2)', 'torch.zeros(2, 3).reshape(4)', 'torch.zeros(2, 2, 2).view(3, -1)',
    'nn.functional.linear(torch.zeros(4, 5), torch.zeros(2, 3))', 'nn.Linear(3, 2)(torch.zeros(5))',
    'torch.zeros(2, 3) @ torch.zeros(2, 3)', 'torch.zeros(()) @ torch.zeros(3)',
]


@pytest.mark.parametrize("expr", DEVICES + TENSORS + FACTORIES + FUNCTIONS_OUT + ERRORS)
def test_same_as_cpu_torch(expr):
    same(expr)
    torch.set_default_device(None)
    engine.set_default_device(None)


MODULES = [
    'nn.Linear(2, 2).to("cpu")', 'nn.Linear(2, 2).to(torch.device("cpu"))', 'nn.Linear(2, 2).to("cuda")',
    'nn.Linear(2, 2).cuda()', 'nn.Linear(2, 2).to(1)', 'nn.Linear(2, 2).to(torch.int64)',
    'nn.Linear(2, 2).to("cpu", torch.int32)', 'nn.Linear(2, 2).to(torch.zeros(1, dtype=torch.int64))',
    'nn.Linear(2, 2).to("cpu", "x")', 'nn.Linear(2, 2).to(foo=1)', 'nn.Linear(2, 2).to()', 'nn.Linear(2, 2, device="cuda")',
    'nn.Linear(2, 2).cpu()',
]


@pytest.mark.parametrize("expr", MODULES)
def test_modules_same_as_cpu_torch(expr):
    same(expr)


@pytest.mark.parametrize("args", ['torch.float64', '"cpu", torch.float64', 'torch.zeros(1, dtype=torch.float64)',
                                  'dtype=torch.float16', 'device="cpu", dtype=torch.float64'])
def test_module_to_casts_parameters_in_place(args):
    seen = []
    for lib in (engine, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        weight = model[0].weight
        model(lib.ones(1, 3)).sum().backward()
        returned = eval(f"model.to({args})", {"torch": lib, "model": model})
        assert returned is model
        assert model[0].weight is weight  # the same Parameter: an optimizer made before .to() still holds it
        assert type(weight).__name__ == "Parameter" and weight.requires_grad and weight.is_leaf
        seen.append({str(p.dtype) for p in model.parameters()} | {str(p.grad.dtype) for p in model.parameters()})
    assert seen[0] == seen[1]


def test_module_float_double_half():
    for method in ("double", "half", "float"):
        for lib in (engine, torch):
            model = lib.nn.Linear(2, 2)
            assert getattr(model, method)() is model
            if lib is engine:
                mine = str(model.weight.dtype)
        assert mine == str(model.weight.dtype)


def test_out_writes_in_place_and_returns_out():
    for lib in (engine, torch):
        c = lib.zeros(2, 2)
        view = c[0]
        r = lib.matmul(lib.ones(2, 3), lib.ones(3, 2), out=c)
        assert r is c
        assert view.tolist() == [3.0, 3.0]  # written in place: views of out see the result
        z = lib.empty(5)
        assert lib.zeros(2, 3, out=z) is z and tuple(z.shape) == (2, 3)


def test_generator_keyword_on_the_factories():
    for name, call in [("randn", "torch.randn(3, 2, generator=g)"), ("rand", "torch.rand(size=(4,), generator=g)"),
                       ("randint", "torch.randint(0, 10, (5,), generator=g)"), ("randperm", "torch.randperm(6, generator=g)"),
                       ("normal", "torch.normal(0.0, 1.0, (3,), generator=g)"),
                       ("out", "torch.randn(3, generator=g, out=torch.empty(3))")]:
        texts = []
        for lib in (engine, torch):
            g = lib.Generator().manual_seed(1234)
            texts.append(repr(eval(call, {"torch": lib, "g": g})))
        assert texts[0] == texts[1], name


def test_tutorial_opening_lines_run_unchanged():
    src = '''
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")
torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
x = torch.randn(5, 2, 2).to(device)
y = torch.randint(0, 2, (5,), device=device)
loss = nn.CrossEntropyLoss()(model(x), y)
loss.backward()
print(x.device, y.device, loss.device, model[1].weight.device, model[1].weight.grad.device)
print(torch.device(device), x.is_cuda, x.cpu().device)
'''
    import contextlib
    import io

    outs = []
    for lib in (engine, torch):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(src, {"torch": lib, "nn": lib.nn})  # a test program written here, never user input
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]
    assert outs[0].startswith("Using cpu device\ncpu cpu cpu cpu cpu\ncpu False cpu\n")
