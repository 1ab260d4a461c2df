"""Issue 21 §3 ("every line PyTorch accepts"), item by item, each cross-checked against real PyTorch.

Where an item already has its cross-check, this file names it instead of repeating it; the programs below then
check the items together, as a student pastes them: each runs in the sandbox and in CPython with PyTorch 2.13,
and must print the same text.

Python as students write it
- classes with `__call__`, `__getitem__`/`__len__` (a Dataset), `__iter__`: tests/sandbox/test_sandbox_dunders.py,
  test_sandbox_training_vs_torch.py; here PYTHON_IDIOMS.
- `hasattr`: tests/sandbox/test_sandbox_getattr.py; here PYTHON_IDIOMS.
- `import os` (read-only os.path / environ), `string`, `unicodedata`, `statistics`:
  tests/sandbox/test_sandbox_stdlib_text.py, test_sandbox_os_path_files.py (exists/isfile/getsize on the run's
  files); here PYTHON_IDIOMS and FILES.
- `f'{t}'` / `format()` of a 0-d tensor: tests/sandbox/test_format_tensor.py; here PYTHON_IDIOMS.
- `torch.backends.cudnn.enabled/.deterministic` and the other flags: tests/sandbox/test_sandbox_torch_switches.py,
  tests/engine/test_device_vs_torch.py; here PYTHON_IDIOMS.
- in-place index assignment (`dlogits[range(n), Yb] -= 1`): tests/sandbox/test_sandbox_index_assign.py (no grad),
  tests/engine/test_index_put_vs_torch.py (IndexPutBackward0 / CopySlices, gradients, versions, errors); here
  INDEX_ASSIGNMENT.
Semantics
- `torch.Tensor(X.shape)`, `torch.linspace` bit for bit: tests/engine/test_surface_vs_torch.py; here SURFACE.
More of the surface
- `argmax(axis=)`, `keepdims=`, `torch.all`/`Tensor.all`, `torch.histogram`, `torch.meshgrid`:
  tests/engine/test_surface_vs_torch.py, test_value_tests_vs_torch.py, tests/sandbox/test_sandbox_funcs_vs_torch.py;
  here SURFACE.
- `Axes.matshow`, `set_xticklabels`, `Axes.cla`, `legend(list)`, `matplotlib.colors`, `savefig(dpi=…)`,
  `matplotlib.ticker`, `plt.imshow(tensor)` (no PyTorch to compare with: matplotlib's own behaviour is the
  reference): tests/sandbox/test_plots_surface.py, test_plots.py; here PLOTS checks that every one of them runs
  on tensors within the budgets.
Operators and methods
- `%` / `//` (in-place, reflected), `Tensor.type()` forms, `log10`/`log2`/`log1p`…, numpy-style aliases,
  `torch.Tensor(2, 3)` and the legacy typed constructors, keyword forms (`matmul(input=, other=)`,
  `add(out=)`), `torch.__version__`: tests/engine/test_surface_vs_torch.py, test_ops_vs_torch.py; here SURFACE.
Autograd
- `gradcheck`/`gradgradcheck`, `torch.autograd.functional`: tests/engine/test_autograd_functional_vs_torch.py,
  test_gradcheck.py, test_gradgradcheck.py; `torch.func`: tests/engine/test_func_vs_torch.py,
  test_func_signs_names_vs_torch.py (jacfwd's signed zeros, vmap's grad_fn names); `FunctionCtx` and module paths:
  test_surface_vs_torch.py; `Module.register_backward_hook`: test_module_backward_hook_vs_torch.py;
  `TransposeBackward1`: test_transpose_names_vs_torch.py; here AUTOGRAD.
Files
- `torch.save`/`torch.load` of tensors, state dicts and optimizer state, `open()`:
  tests/sandbox/test_sandbox_files_vs_torch.py; here FILES (with os.path on the saved names).
Numbers
- every optimizer bit for bit: tests/engine/test_optim_bits_vs_torch.py (SGD, Adam, AdamW, RMSprop, Adagrad),
  test_optim_more_bits_vs_torch.py (Adadelta, Adamax, NAdam, RAdam); batch norm's batch statistics:
  test_batch_norm_bits_vs_torch.py; here NUMBERS (abs() at 0, batch norm's zero means, every optimizer).
In-process (`import engine as torch`)
- `from torch.autograd import Variable`, a DataLoader over a Dataset of tensors, `torch.autograd.function`:
  tests/engine/test_surface_vs_torch.py (test_dataloader_over_a_dataset_of_tensors_matches_pytorch,
  test_out_and_version_and_autograd_module_paths); here test_in_process_imports.
"""
from __future__ import annotations

import pytest
from sandbox_testing import ok, same_as_cpython

torch = pytest.importorskip("torch")

PYTHON_IDIOMS = """import torch
import os
import string
import unicodedata
import statistics
torch.backends.cudnn.enabled = True
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False

class Layer:
    def __init__(self, fan_in, fan_out):
        self.weight = torch.arange(fan_in * fan_out, dtype=torch.float32).reshape(fan_in, fan_out) / 10
    def __call__(self, x):
        self.out = x @ self.weight
        return self.out
    def parameters(self):
        return [self.weight]

class Squares(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        return torch.tensor([float(i)]), torch.tensor(float(i * i))

class Countdown:
    def __init__(self, n):
        self.n = n
    def __iter__(self):
        return iter(range(self.n, 0, -1))

layer = Layer(3, 2)
print(hasattr(layer, 'weight'), hasattr(layer, 'bias'), hasattr(torch, 'nn'), hasattr(torch.Tensor, 'nope'))
y = layer(torch.ones(1, 3))
print(y, layer.out.shape)
ds = Squares(5)
print(len(ds), ds[3])
for xb, yb in torch.utils.data.DataLoader(ds, batch_size=2):
    print(xb.shape, yb)
print(list(Countdown(3)), sum(Countdown(4)))
print(os.path.join('data', 'names.txt'), os.path.basename('a/b.txt'), os.path.splitext('m.pt'))
print(string.ascii_lowercase[:5], unicodedata.category('a'), statistics.mean([1, 2, 4]), statistics.median([3, 1, 2]))
loss = (y ** 2).sum() / 7
print(f'{loss}', format(loss, '.4f'), f'{loss.item():.3f}', '{}'.format(loss), f'{loss:>12.5f}')
"""

INDEX_ASSIGNMENT = """import torch
n = 4
logits = (torch.arange(20.).reshape(n, 5) / 7).sin().requires_grad_()
Yb = torch.tensor([1, 4, 1, 0])
dlogits = torch.softmax(logits, 1)
dlogits[range(n), Yb] -= 1
dlogits /= n
print(type(dlogits.grad_fn).__name__, dlogits.sum(1).abs().max().item() < 1e-6)
h = logits * 2
h[h > 1] += 1
h[0] = torch.zeros(5)
h[:, 1:3] *= 3
(h * torch.arange(20.).reshape(4, 5)).sum().backward()
print(type(h.grad_fn).__name__, logits.grad)
w = torch.ones(3, requires_grad=True)
try:
    w[0] = 5.0
except RuntimeError as e:
    print(e)
try:
    w[[0, 1]] = 5.0
except RuntimeError as e:
    print(e)
with torch.no_grad():
    w[1] = 2.0
print(w)
out = torch.zeros(3)
out[1] = w.sum()
print(out, type(out.grad_fn).__name__)
"""

SURFACE = """import torch
X = torch.zeros(4, 5)
T = torch.Tensor(X.shape)
print(T.shape, T.dtype, torch.Tensor(2, 3).shape, torch.FloatTensor([1, 2]), torch.LongTensor([1, 2]).dtype)
print(torch.linspace(-1, 1, 7).tolist(), torch.linspace(0, 2, 5, dtype=torch.float64).tolist())
a = torch.arange(12.).reshape(3, 4) - 5
print(a.argmax(axis=1), a.sum(axis=0, keepdims=True), a.mean(axis=1, keepdim=True))
print(torch.all(a > -6), (a > 0).all(dim=1), a.all(), torch.all(a > 0, dim=0))
hist = torch.histogram(a.flatten(), bins=4)
print(hist.hist, hist.bin_edges)
gx, gy = torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij')
print(gx, gy)
print(a % 3, a // 4, 7 % (a.abs() + 1), 9 // (a.abs() + 1))
b = a.clone()
b %= 2.5
b //= 0.5
print(b, torch.remainder(a, -3), torch.floor_divide(a, 3))
print(a.type(), a.type(torch.LongTensor).dtype, a.type('torch.IntTensor').dtype)
print(torch.log10(a.abs() + 1), torch.log2(a.abs() + 1), torch.log1p(a.abs()), torch.expm1(a / 10))
c = torch.empty(3, 4)
torch.add(a, 1, out=c)
print(c, torch.matmul(input=a, other=torch.ones(4)))
print(torch.__version__ >= '2.0', isinstance(torch.__version__, str))
"""

AUTOGRAD = """import torch
from torch.autograd import Variable, gradcheck, gradgradcheck
from torch.autograd.function import FunctionCtx
from torch.func import grad, grad_and_value, vmap, jacrev, jacfwd, hessian, functional_call
x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
f = lambda t: (t.sin() * t).sum()
print(gradcheck(f, (x,)), gradgradcheck(lambda t: (t ** 3).sum(), (x,)))
print(torch.autograd.functional.jacobian(f, x))
print(torch.autograd.functional.hessian(f, x))
print(torch.autograd.functional.vjp(f, x)[1])
print(torch.autograd.functional.jvp(torch.exp, x, torch.ones(3, dtype=torch.float64))[1])
print(torch.autograd.functional.hvp(f, x, torch.ones(3, dtype=torch.float64))[1])
print(grad(f)(x), grad_and_value(f)(x)[1])
print(jacrev(torch.sin)(x), jacfwd(torch.sin)(x))
print(hessian(f)(x))
print(vmap(torch.sin)(x.detach().reshape(3, 1)))
lin = torch.nn.Linear(3, 1)
params = {'weight': torch.ones(1, 3), 'bias': torch.zeros(1)}
print(functional_call(lin, params, (torch.ones(2, 3),)))

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx: FunctionCtx, t):
        ctx.save_for_backward(t)
        return t * t
    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 2 * t * g

s = Square.apply(x).sum()
s.backward()
print(s, x.grad)
v = Variable(torch.ones(2), requires_grad=True)
print(v, v.requires_grad)
m = (torch.ones(2, 3, requires_grad=True) * 2)
m.transpose_(0, 1)
print(type(m.grad_fn).__name__, m.shape)
"""

NUMBERS = """import torch
torch.manual_seed(0)
z = torch.tensor([0.0, -1.5, 2.0], requires_grad=True)
z.abs().sum().backward()
print(z.grad)
bn = torch.nn.BatchNorm1d(3)
xb = torch.arange(12.).reshape(4, 3) ** 1.5
out = bn(xb)
print(out.mean(0), out.var(0, unbiased=False), bn.running_mean, bn.running_var)
for name in ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam', 'RAdam']:
    w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = getattr(torch.optim, name)([w], lr=0.1, weight_decay=0.01)
    for step in range(5):
        opt.zero_grad()
        ((w - torch.tensor([0.3, 0.2, -0.1])) ** 2).sum().backward()
        opt.step()
    print(name, w.detach())
"""

FILES = """import os
import torch
m = torch.nn.Linear(3, 2)
opt = torch.optim.Adam(m.parameters(), lr=0.1)
m(torch.ones(3)).sum().backward()
opt.step()
print(os.path.exists('ckpt.pt'), os.path.isfile('ckpt.pt'))
torch.save({'model': m.state_dict(), 'opt': opt.state_dict(), 't': torch.arange(3)}, 'ckpt.pt')
print(os.path.exists('ckpt.pt'), os.path.isfile('ckpt.pt'), os.path.isdir('ckpt.pt'), os.path.getsize('ckpt.pt') > 0)
ckpt = torch.load('ckpt.pt')
m2 = torch.nn.Linear(3, 2)
m2.load_state_dict(ckpt['model'])
opt2 = torch.optim.Adam(m2.parameters(), lr=0.1)
opt2.load_state_dict(ckpt['opt'])
print(torch.equal(m2.weight, m.weight), sorted(opt2.state_dict()['state'][0]), ckpt['t'])
with open('notes.txt', 'w') as f:
    f.write('epoch 1')
print(open('notes.txt').read(), os.path.exists('notes.txt'))
"""


@pytest.mark.parametrize("program", ["PYTHON_IDIOMS", "INDEX_ASSIGNMENT", "SURFACE", "AUTOGRAD", "NUMBERS"])
def test_section3_programs_print_what_pytorch_prints(program):
    same_as_cpython(globals()[program])


def test_files_and_os_path_as_pytorch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # CPython's run writes real files: into a folder of the test's own
    same_as_cpython(FILES)


PLOTS = """import torch
import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import matplotlib.colors as colors
fig, ax = plt.subplots()
ax.matshow(torch.arange(12.).reshape(3, 4), cmap='viridis', norm=colors.Normalize(0, 11))
ax.set_xticks([0, 1, 2, 3])
ax.set_xticklabels(['a', 'b', 'c', 'd'])
ax.yaxis.set_major_locator(ticker.MultipleLocator(1))
ax.cla()
line, = ax.plot(torch.linspace(0, 1, 5), torch.linspace(0, 1, 5) ** 2)
ax.legend(['square'])
plt.imshow(torch.rand(4, 4))
plt.savefig('fig.png', dpi=150)
print('plotted')
"""


def test_plotting_calls_take_tensors():
    assert ok(PLOTS) == "plotted\n"


def test_in_process_imports():
    import engine

    assert engine.autograd.Variable is not None
    assert engine.autograd.function.FunctionCtx is not None
    assert set(dir(torch.optim)) >= {"Adadelta", "Adamax", "NAdam", "RAdam"}
    assert all(hasattr(engine.optim, n) for n in ("Adadelta", "Adamax", "NAdam", "RAdam"))
