"""The compiled interpreter's fast paths for method calls (`x.pow(2)`, `xs.append(i)`), tensor indexing with
numbers (`P[i, j]`, `N[i, j] += 1`) and augmented assignment on tensors (`a -= lr * g`): the same values,
errors (type, message, line) and limits as the general paths they skip."""
from __future__ import annotations

import pytest
from sandbox_testing import CLASSIC_LIMITS, err, make_limits, ok, same_as_cpython


def test_tensor_method_calls_give_what_torch_gives():
    pytest.importorskip("torch")
    src = ("import torch\nx = torch.arange(6.0).reshape(2, 3)\nprint(x.pow(2).sum().item(), x.sum(1), x.mean().item(),"
           " x.max(1), x.tolist(), x.numel(), x.view(3, 2).t().shape)\n")
    ns = {}
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "<program>", "exec"), ns)  # noqa: S102 - the test's own text, under real torch
    assert ok(src) == buf.getvalue()


def test_plain_value_methods_keep_their_checks():
    same_as_cpython("xs = []\nfor i in range(5):\n    xs.append(i * i)\nd = {'a': 1}\nprint(xs, d.get('a'), d.get('b', 7),"
                    " 'a b c'.split(), ','.join(['x', 'y']), xs.index(9), xs.count(4))\n")
    # an iterator handed to a plain method is still taken (bounded) before C sees it, as the general path does
    out = ok("xs = []\nxs.append(x for x in range(3))\nprint(type(xs[0]).__name__, len(xs))\n")
    assert out == "list 1\n"
    # the copies a plain method returns are still counted among the run's items
    e = err("s = 'ab' * 100000\nfor i in range(100):\n    parts = s.split('a')\n",
            limits=make_limits(max_live_elements=400_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 3


def test_method_call_errors_keep_their_line_and_words():
    e = err("import torch\nx = torch.ones(3)\ny = 1\ny = x.nosuch(2)\n")
    assert e["type"] == "AttributeError" and e["line"] == 4 and "nosuch" in e["message"]
    e = err("import torch\nx = torch.ones(3)\nz = x.view(2, 2)\n")
    assert e["type"] == "RuntimeError" and e["line"] == 3 and "invalid for input of size 3" in e["message"]
    e = err("xs = [1]\nxs.pop(5)\n")
    assert e == {"type": "IndexError", "message": "pop index out of range", "line": 2, "column": 0} | \
        {k: e[k] for k in e if k not in ("type", "message", "line", "column")}
    same_as_cpython("class A:\n    def f(self, a, b):\n        return a - b\nprint(A().f(5, 2))\n")


def test_tensor_method_given_data_is_bounded():
    e = err("import torch\nx = torch.ones(3)\ny = x.new_tensor([0.5] * 1_200_000)\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 3


def test_tensor_indexing_with_numbers():
    out = ok("import torch\nP = torch.arange(12).reshape(3, 4)\nprint(P[1, 2].item(), P[2].tolist(), P[-1, -1].item(),"
             " P[1:, 0].tolist(), P[..., 1].tolist(), P[None, 0].shape)\n")
    assert out == "6 [8, 9, 10, 11] 11 [4, 8] [1, 5, 9] torch.Size([1, 4])\n"
    e = err("import torch\nP = torch.zeros(3, 4)\nv = P[1, 9]\n")
    assert e["type"] == "IndexError" and e["line"] == 3 and "out of bounds" in e["message"]
    e = err("import torch\nP = torch.zeros(3, 4)\nv = P[1, 2, 3]\n")
    assert e["type"] == "IndexError" and e["line"] == 3 and "too many indices" in e["message"]


def test_augmented_tensor_item():
    out = ok("import torch\nN = torch.zeros((3, 3), dtype=torch.int32)\nfor i in range(3):\n    for j in range(3):\n"
             "        N[i, j] += i * 3 + j\n        N[i, j] *= 2\nN[0] -= 1\nprint(N.tolist())\n")
    assert out == "[[-1, 1, 3], [6, 8, 10], [12, 14, 16]]\n"
    out = ok("import torch\nt = torch.ones(2, 2)\nt[0, 1] += torch.tensor(2.5)\nt[1] /= torch.tensor([2.0, 4.0])\n"
             "print(t.tolist())\n")
    assert out == "[[1.0, 3.5], [0.5, 0.25]]\n"
    e = err("import torch\nN = torch.zeros(2, dtype=torch.int64)\nN[0] += 'a'\n")
    assert e["type"] == "TypeError" and e["line"] == 3
    e = err("import torch\nw = torch.ones(2, requires_grad=True)\nw[0] += 1\n")
    assert e["type"] == "RuntimeError" and e["line"] == 3 and "leaf Variable" in e["message"]


def test_augmented_tensor_name():
    out = ok("import torch\na = torch.tensor(1.0)\ng = torch.tensor(4.0)\na -= 0.5 * g\nb = a\nb += 1\ns = 0.0\n"
             "s += a\nprint(a.item(), b is a, s.item(), type(s).__name__)\n")
    assert out == "0.0 True 0.0 Tensor\n"
    e = err("import torch\na = torch.ones(2)\na += torch.ones(3)\n")
    assert e["type"] == "RuntimeError" and e["line"] == 3 and "must match" in e["message"]
    e = err("import torch\na = torch.ones(2, dtype=torch.int64)\na += 0.5\n")
    assert e["type"] == "RuntimeError" and e["line"] == 3


def test_augmented_assignment_on_big_operands_still_refused():
    # the engine's limits still bound what an in-place op makes; the fast path hands numpy nothing bigger
    e = err("import torch\na = torch.ones(1000, 1)\na = a + torch.ones(1, 1000)\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 3
    e = err("import torch\na = torch.ones(1000, 1)\nb = torch.ones(1, 1000)\nb += a\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4


def test_engine_function_called_again_keeps_its_checks():
    # the second call of torch.log takes `call`'s fast path only for numbers and tensors; data is still measured
    src = "import torch\nx = torch.ones(3)\nfor i in range(2):\n    y = torch.log(x)\nz = torch.log([0.5] * 1_200_000)\n"
    e = err(src, limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 5
    e = err("import torch\nx = torch.ones(3)\ny = torch.log(x)\ny = torch.log('_x')\n")  # (a name the engine refuses)
    assert e["type"] == "ValueError" and e["line"] == 4 and "not allowed" in e["message"]


def test_container_items_read_inline():
    same_as_cpython("d = {'a': 1, 2: 'b'}\nxs = [5, 6, 7]\nt = (8, 9)\nk = 'a'\ni = -1\n"
                    "print(d[k], d[2], xs[i], xs[0], t[1], xs[True])\nprint(xs[5])\n")
    same_as_cpython("d = {'a': 1}\nk = 'b'\nprint(d[k])\n")


def test_keyword_calls_count_what_check_data_counts():
    out = ok("import torch\ng = torch.Generator().manual_seed(1)\np = torch.tensor([[0.2, 0.8], [0.5, 0.5]])\n"
             "for i in range(3):\n    s = p.sum(1, keepdim=True)\n    k = torch.multinomial(p[0], num_samples=1, generator=g)\n"
             "print(s.tolist(), k.shape, torch.add(p, other=p, alpha=2).tolist())\n")
    assert out == "[[1.0], [1.0]] torch.Size([1]) [[0.6000000238418579, 2.4000000953674316], [1.5, 1.5]]\n"
    # one tensor handed twice is counted twice, by name as by position through check_data
    src = ("import torch\na = torch.ones(600_000)\nw = torch.ones(2)\nfor i in range(2):\n    b = torch.add(w, other=w)\n"
           "d = torch.add(a, other=a)\n")
    e = err(src, limits=make_limits(max_tensor_elements=600_000, max_live_elements=1_100_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 6 and "data handed to the engine" in e["message"]
    # a method's own tensor is not an argument: the engine's live-element limit refuses its output instead
    e = err(src.replace("d = torch.add(a, other=a)", "d = a.add(other=a)"),
            limits=make_limits(max_tensor_elements=600_000, max_live_elements=1_100_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 6 and "max_live_elements" in e["message"]


def test_keyword_names_the_engine_refuses_still_refused():
    long_name = "k" * 201
    e = err(f"import torch\nx = torch.ones(2)\ny = x.sum(0)\ny = x.sum(0, {long_name}=1)\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    e = err("import torch\nx = torch.ones(2)\ny = torch.add(x, x)\ny = torch.add(x, other='_private')\n")
    assert e["type"] == "ValueError" and e["line"] == 4 and "not allowed" in e["message"]


def test_methods_of_collections_and_wrapped_methods_keep_their_rules():
    out = ok("import collections\nimport torch\nimport torch.nn as nn\nd = collections.deque()\nd.append(1)\n"
             "d.appendleft(0)\nsd = nn.Linear(2, 1).state_dict()\nprint(list(d), list(sd.keys()), 'a,b'.split(','))\n")
    assert out == "[0, 1] ['weight', 'bias'] ['a', 'b']\n"
    # str.replace is the table's wrapped (bounded) version, not the C method
    e = err("s = 'a' * 1000\nfor i in range(2):\n    t = s.replace('a', 'a' * 1000)\n",
            limits=make_limits(max_live_elements=500_000))
    assert e["type"] == "LimitExceeded" and e["line"] == 3
    e = err("xs = [1, 2]\nxs.nosuch(1)\n")
    assert e["type"] == "AttributeError" and e["line"] == 2 and "nosuch" in e["message"]
