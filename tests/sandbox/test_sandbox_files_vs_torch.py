"""A run's files (sandbox/files.py, engine/serialization.py): checkpoint-and-reload programs print what they print
under PyTorch (run in a temporary directory), open() reads back what the program wrote, and nothing reaches a real
file; hostile sizes, names and objects end with Python's and PyTorch's errors or the run's file limits."""
from __future__ import annotations

import pytest
from sandbox_testing import cpython, err, make_limits, ok, run

CHECKPOINT = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(16, 4)
y = torch.randn(16, 1)
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
torch.save({'model': model.state_dict(), 'optimizer': opt.state_dict(), 'step': 5, 'loss': loss.item()}, 'ckpt.pt')
torch.save(model.state_dict(), 'model.pt')
restored = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
print(restored.load_state_dict(torch.load('model.pt', weights_only=True)))
ckpt = torch.load('ckpt.pt', map_location='cpu')
restored.load_state_dict(ckpt['model'])
opt2 = torch.optim.Adam(restored.parameters(), lr=0.01)
opt2.load_state_dict(ckpt['optimizer'])
print(ckpt['step'], ckpt['loss'] == loss.item(), sorted(ckpt))
print(ckpt['optimizer']['param_groups'][0]['lr'], ckpt['optimizer']['state'][0]['step'])
for step in range(5):
    for m, o in ((model, opt), (restored, opt2)):
        o.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        o.step()
    print(step, all(torch.equal(a, b) for a, b in zip(model.parameters(), restored.parameters())))
print(list(torch.load('model.pt').keys()))
print(torch.load('model.pt')['0.bias'])
"""

TENSORS_AND_CONTAINERS = """
import torch
a = torch.arange(6.).reshape(2, 3)
p = torch.nn.Parameter(torch.ones(2))
g = torch.ones(3, requires_grad=True)
h = g * 2
torch.save([a, a, (1, 2.5, 'x', None, True), {'k': [a]}, {3, 4}, b'raw', torch.float64, torch.Size([2, 3])], 'mix.pt')
torch.save(p, 'p.pt')
torch.save(h, 'h.pt')
torch.save(torch.tensor([1, 2], dtype=torch.int32), 'i.pt')
mix = torch.load('mix.pt')
print(mix)
print(mix[0] is mix[1], mix[0] is a)
mix[0][0, 0] = 100.0
print(a[0, 0].item(), mix[1][0, 0].item())
q = torch.load('p.pt')
print(type(q).__name__, q.requires_grad, q.is_leaf)
hl = torch.load('h.pt')
print(hl, hl.requires_grad, hl.is_leaf, hl.grad_fn)
print(torch.load('i.pt').dtype)
print(torch.load('p.pt') is torch.load('p.pt'))
"""

TEXT_FILES = """
with open('log.txt', 'w') as f:
    f.write('epoch 1 loss 0.5\\n')
    n = f.write('epoch 2 loss 0.25\\n')
    print(n, f.closed)
print(f.closed)
with open('log.txt', 'a') as f:
    f.writelines(['epoch 3\\n', 'end'])
with open('log.txt') as f:
    for line in f:
        print(repr(line))
f = open('log.txt', 'r')
print(f.read(5), f.readline(), f.readlines())
f.close()
print(open('log.txt').read().split())
with open('data.bin', 'wb') as f:
    f.write(b'\\x00\\x01abc')
with open('data.bin', 'rb') as f:
    print(list(f.read()), f.read())
with open('crlf.txt', 'w', newline='') as f:
    f.write('a\\r\\nb\\rc\\n')
print(repr(open('crlf.txt').read()), repr(open('crlf.txt', newline='').read()), open('crlf.txt').readlines())
print(open('crlf.txt').read(2), list(open('crlf.txt', 'rb').read()))
with open('u.txt', 'w', encoding='utf-8') as f:
    f.write('\\u00e9t\\u00e9 \\u2192 ok')
print(open('u.txt', encoding='utf-8').read(), len(open('u.txt', 'rb').read()))
with open('x.txt', 'x') as f:
    f.write('first')
try:
    open('x.txt', 'x')
except FileExistsError as e:
    print('exists:', e)
f = open('rw.txt', 'w+')
f.write('hello world')
f.seek(0)
print(f.read(5), f.tell())
f.close()
try:
    f.read()
except ValueError as e:
    print(e)
"""

BUFFERS = """
import io
import torch
buf = io.BytesIO()
torch.save({'w': torch.ones(2)}, buf)
buf.seek(0)
print(torch.load(buf))
s = io.StringIO()
s.write('a\\nb\\n')
print(repr(s.getvalue()))
s.seek(0)
print(s.readlines())
"""


@pytest.mark.parametrize("source", [CHECKPOINT, TENSORS_AND_CONTAINERS, TEXT_FILES, BUFFERS],
                         ids=["checkpoint", "tensors", "text", "buffers"])
def test_files_print_what_python_and_pytorch_print(source, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    expected, error = cpython(source)
    assert error is None, error
    assert ok(source) == expected


def test_files_are_gone_after_the_run():
    ok("import torch\ntorch.save(torch.ones(2), 'w.pt')\nopen('a.txt', 'w').write('x')")
    e = err("import torch\ntorch.load('w.pt')")
    assert e["type"] == "FileNotFoundError" and "no disk" in e["message"] and e["line"] == 2
    assert err("open('a.txt')")["type"] == "FileNotFoundError"


@pytest.mark.parametrize("name", ["/etc/passwd", "../../etc/passwd", "/proc/self/environ", "~/.ssh/id_rsa",
                                  "sandbox/files.py", "README.md", "/dev/zero", "C:\\\\Windows\\\\win.ini"])
def test_no_real_file_is_readable(name):
    for source in (f"open({name!r}).read()", f"open({name!r}, 'rb').read()", f"import torch\ntorch.load({name!r})",
                   f"open({name!r}, 'a').read()", f"open({name!r}, 'r+').read()"):
        e = err(source)
        expected = "UnsupportedOperation" if "'a'" in source else "FileNotFoundError"
        assert e["type"] == expected, (source, e)
        if expected == "FileNotFoundError":
            assert "flowgrad programs have no disk: only files the program wrote itself" in e["message"]


def test_writing_a_system_path_writes_only_the_runs_file():
    out = ok("with open('/etc/passwd', 'w') as f:\n    f.write('mine')\nprint(open('/etc/passwd').read())\n"
             "print(open('/etc/../etc/passwd').read())")
    assert out == "mine\nmine\n"
    with open("/etc/passwd") as f:
        assert "mine" != f.read()


def test_huge_writes_stop_at_the_file_budget():
    limits = make_limits(max_file_bytes=100_000)
    e = err("f = open('big.txt', 'w')\nfor i in range(1000):\n    f.write('x' * 1000)", limits=limits)
    assert e["type"] == "LimitExceeded" and "max_file_bytes = 100,000" in e["message"] and e["line"] == 3
    e = err("import torch\ntorch.save(torch.zeros(100_000), 'big.pt')", limits=limits)
    assert e["type"] == "LimitExceeded" and "max_file_bytes" in e["message"]
    # overwriting a file frees what it held
    ok("import torch\nfor i in range(50):\n    torch.save(torch.zeros(10_000), 'same.pt')", limits=limits)
    e = err("import torch\nx = torch.zeros(1000)\ntorch.save([x] * 1 + [[0] * 100_000], 'l.pt')", limits=limits)
    assert e["type"] == "LimitExceeded"
    e = err("import io\nb = io.BytesIO(b'x' * 200_000)", limits=limits)
    assert e["type"] == "LimitExceeded"


def test_many_files_stop_at_the_file_count():
    e = err("for i in range(1000):\n    open(f'f{i}.txt', 'w')", limits=make_limits(max_files=10))
    assert e["type"] == "LimitExceeded" and "max_files = 10" in e["message"]
    ok("for i in range(1000):\n    open('same.txt', 'w').write(str(i))", limits=make_limits(max_files=10))


@pytest.mark.parametrize("value,what", [
    ("lambda x: x", "cannot save a function"),
    ("print", "cannot save a function"),
    ("torch.nn.Linear(2, 2)", "save its state_dict() instead"),
    ("Net()", "save its state_dict() instead"),
    ("torch.nn.Linear", "cannot save a class"),
    ("C", "cannot save"),
    ("C()", "cannot save"),
    ("(i for i in range(3))", "cannot save"),
    ("[1, {'a': open}]", "cannot save a function"),
    ("torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)", "cannot save"),
    ("torch", "cannot save"),
    ("range(10)", "cannot save"),
])
def test_saving_what_cannot_be_copied_is_refused(value, what):
    src = ("import torch\nclass C:\n    pass\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
           f"        return x\ntorch.save({value}, 'x.pt')")
    e = err(src)
    assert e["type"] == "TypeError" and what in e["message"] and e["line"] == 7, e
    assert err(src + "\ntorch.load('x.pt')")["line"] == 7  # nothing was written


def test_loading_a_text_file_says_why():
    e = err("import torch\nopen('t.txt', 'w').write('hello')\ntorch.load('t.txt')")
    assert e["type"] == "UnpicklingError" and "invalid load key, 'h'" in e["message"]
    assert "written with open(), not torch.save" in e["message"]
    out = ok("import torch\nopen('e.txt', 'w')\ntry:\n    torch.load('e.txt')\nexcept RuntimeError as e:\n"
             "    print(e)")
    assert out.startswith("Ran out of input")
    e = err("import torch\ntorch.save(torch.ones(1), 'w.pt')\nopen('w.pt', 'rb').read()")
    assert e["type"] == "OSError" and "torch.load" in e["message"]


@pytest.mark.parametrize("source,kind,message", [
    ("open(None)", "TypeError", "expected str, bytes or os.PathLike object, not NoneType"),
    ("open(3)", "OSError", "Bad file descriptor"),
    ("open('a\\0b', 'w')", "ValueError", "embedded null byte"),
    ("open('a' * 100_000, 'w')", "OSError", "File name too long"),
    ("open('x', 'rw')", "ValueError", "must have exactly one of create"),
    ("open('x', 'wz')", "ValueError", "invalid mode: 'wz'"),
    ("open('x', 'wbt')", "ValueError", "can't have text and binary mode at once"),
    ("open('x', 5)", "TypeError", "open() argument 'mode' must be str, not int"),
    ("open('x', 'wb', encoding='utf-8')", "ValueError", "binary mode doesn't take an encoding argument"),
    ("open('x', 'w', encoding='nope')", "LookupError", "unknown encoding: nope"),
    ("open('x', 'w', newline='x')", "ValueError", "illegal newline value: x"),
    ("open('x', 'w', opener=print)", "TypeError", "opener"),
    ("open('', 'w')", "FileNotFoundError", "No such file or directory"),
    ("open('.', 'w')", "IsADirectoryError", "Is a directory"),
    ("open('x', 'w').read()", "UnsupportedOperation", "not readable"),
    ("open('x', 'w').write(b'1')", "TypeError", "write() argument must be str, not bytes"),
    ("open('x', 'wb').write('1')", "TypeError", "a bytes-like object is required, not 'str'"),
    ("import torch\ntorch.save(torch.ones(1), None)", "AttributeError", "expected 'f' to be string"),
    ("import torch\ntorch.save(torch.ones(1), open('t', 'w'))", "TypeError", "write() argument must be str"),
    ("import torch\ntorch.load(None)", "AttributeError", "You can only torch.load from a file that is seekable"),
    ("import torch\ntorch.save(1, 'a')\ntorch.load('a', map_location='cuda')", "RuntimeError",
     "Attempting to deserialize object on a CUDA device"),
    ("import torch\ntorch.save(1, 'a')\ntorch.load('a', map_location=lambda s, l: s)", "TypeError", "map_location"),
    ("import torch\ntorch.save(1, 'a')\ntorch.load('a', weights_only='yes')", "TypeError", "weights_only"),
    ("import torch\nx = []\nfor i in range(2000):\n    x = [x]\ntorch.save(x, 'deep.pt')", "RecursionError",
     "maximum recursion depth exceeded"),
])
def test_file_errors_are_pythons(source, kind, message):
    e = err(source)
    assert e["type"] == kind and message in e["message"], e
    assert isinstance(e["line"], int)


def test_loaded_tensors_count_against_the_tensor_limits():
    e = err("import torch\ntorch.save(torch.zeros(1000), 'a.pt')\nxs = []\nfor i in range(100):\n"
            "    xs.append(torch.load('a.pt'))", limits=make_limits(max_live_elements=20_000))
    assert e["type"] == "LimitExceeded" and "max_live_elements" in e["message"]


def test_a_list_that_holds_itself_saves_and_loads():
    assert ok("import torch\nx = [1]\nx.append(x)\ntorch.save(x, 'x.pt')\ny = torch.load('x.pt')\n"
              "print(y, y[1] is y, y is x)") == "[1, [...]] True False\n"


def test_files_print_as_python_prints_them():
    out = ok("f = open('a.txt', 'w')\nprint(f)\ng = open('b.bin', 'wb')\nprint(g)\nprint(open('b.bin', 'rb'))")
    assert out == ("<_io.TextIOWrapper name='a.txt' mode='w' encoding='UTF-8'>\n<_io.BufferedWriter name='b.bin'>\n"
                   "<_io.BufferedReader name='b.bin'>\n")


def test_file_attributes_are_an_allowlist():
    for attr in ("content", "files", "buffer", "fileno", "__dict__", "_open", "pos"):
        e = err(f"f = open('a.txt', 'w')\nf.{attr}")
        assert e["type"] in ("AttributeError", "SyntaxError", "NotImplementedError"), (attr, e)
    out = run("f = open('a.txt', 'w')\nf.fileno()")
    assert out.error is not None


def test_print_to_an_open_file():
    src = ("with open('log.txt', 'w') as f:\n    print('loss', 0.5, sep='=', file=f)\n    print([1, 2], file=f)\n"
           "print(open('log.txt').read(), end='')")
    assert ok(src) == "loss=0.5\n[1, 2]\n"
    assert err("f = open('r.txt', 'w')\nf.close()\nprint(1, file=f)")["message"] == "I/O operation on closed file."
    assert err("print(1, file=open('w.txt', 'w').write)")["type"] == "TypeError"
    e = err("f = open('big.txt', 'w')\nfor i in range(1000):\n    print('x' * 1000, file=f)",
            limits=make_limits(max_file_bytes=10_000))
    assert e["type"] == "LimitExceeded" and "max_file_bytes" in e["message"]
    big = ok("f = open('b.txt', 'w')\nprint('x' * 100_000, file=f)\nf.close()\nprint(len(open('b.txt').read()))",
             limits=make_limits(max_output_bytes=1_000))
    assert big == "100001\n"  # the printed-output limit is for stdout; the file budget bounds files


def test_saving_and_loading_long_lists_stays_within_the_time_limit():
    e = err("import torch\nx = [0.5] * 8_000_000\nfor i in range(100):\n    torch.save(x, 'x.pt')",
            limits=make_limits(time_limit_s=0.5))
    assert e["type"] == "LimitExceeded" and "time_limit_s" in e["message"]
    e = err("import torch\ntorch.save([0.5] * 4_000_000, 'x.pt')\nfor i in range(100):\n    y = torch.load('x.pt')",
            limits=make_limits(time_limit_s=1.0))
    assert e["type"] == "LimitExceeded" and "time_limit_s" in e["message"]


def test_dropped_buffers_leave_the_file_budget_and_endless_writelines_stop():
    ok("import io\nimport torch\nfor i in range(200):\n    buf = io.BytesIO()\n    torch.save(torch.zeros(1000), buf)",
       limits=make_limits(max_file_bytes=50_000))
    e = err("import itertools\nf = open('a.txt', 'w')\nf.writelines(itertools.repeat(''))",
            limits=make_limits(time_limit_s=0.5))
    assert e["type"] == "LimitExceeded" and "time_limit_s" in e["message"]


def test_a_seek_past_the_end_leaves_zero_bytes():
    assert ok("f = open('a.bin', 'wb')\nf.seek(3)\nf.write(b'x')\nf.close()\nprint(list(open('a.bin', 'rb').read()))") \
        == "[0, 0, 0, 120]\n"


def test_map_location_forms_torch_accepts():
    src = ("import torch\ntorch.save(torch.ones(2), 'a.pt')\nfor where in ('cpu', torch.device('cpu'), {'cpu': 'cpu'}, "
           "{'cuda:0': 'cpu'}, None):\n    print(torch.load('a.pt', map_location=where, weights_only=False))")
    assert ok(src) == "tensor([1., 1.])\n" * 5
