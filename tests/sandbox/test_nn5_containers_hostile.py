"""Hostile programs against nn.ModuleDict, nn.ParameterList and nn.ParameterDict: a program using them prints
what PyTorch prints; names the engine would turn into attributes stay public; the containers count as module
links; their internals stay closed and nothing reaches the host."""
import pytest
from sandbox_testing import err, leaks, ok, same_as_cpython

pytest.importorskip("torch")

CONTAINERS = """import torch
import torch.nn as nn
from torch.nn import ModuleDict, ParameterList, ParameterDict

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(3, 2), "reg": nn.Linear(3, 1)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3)) for _ in range(2)])
        self.bias = nn.ParameterDict({"cls": nn.Parameter(torch.zeros(2)), "reg": nn.Parameter(torch.zeros(1))})

    def forward(self, x):
        for s in self.scales:
            x = x * s
        return {k: head(x) + self.bias[k] for k, head in self.heads.items()}

torch.manual_seed(0)
net = Net()
print(net)
for name, p in net.named_parameters():
    print(name, tuple(p.shape))
out = net(torch.ones(4, 3))
loss = sum(v.sum() for v in out.values())
loss.backward()
print(net.scales[0].grad, len(net.heads), "cls" in net.heads, "x" in net.bias, list(net.bias.keys()))
net.heads["extra"] = nn.Tanh()
del net.heads["extra"]
net.bias.setdefault("z", torch.ones(2))
print(net.bias.get("nope", 5), net.bias.popitem()[0], [k for k in net.bias], net.scales[-1].shape)
net.scales.append(torch.zeros(2))
net.scales.extend([torch.ones(1)])
net.scales += [torch.ones(2)]
print(net.scales, len(net.scales), net.scales[1:3])
pd = ParameterDict({"b": torch.ones(1), "a": torch.ones(2)})
print(pd, pd.copy(), list(reversed(pd)))
md = ModuleDict()
md.update([("a", nn.ReLU())])
print(md, md.pop("a"), len(md))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
opt.step()
print(sorted(net.state_dict()))
pd.clear(); md.clear()
print(len(pd), len(md), isinstance(pd, nn.Module), type(md).__name__)
"""


def test_a_program_with_the_containers_prints_what_pytorch_prints():
    same_as_cpython(CONTAINERS)


HEAD = "import torch\nimport torch.nn as nn\nmd = nn.ModuleDict({'a': nn.ReLU()})\n" \
       "pl = nn.ParameterList([torch.ones(2)])\npd = nn.ParameterDict({'w': torch.ones(1)})\n"


@pytest.mark.parametrize("line, kind, words", [
    ("nn.ModuleDict({'_modules': nn.ReLU()})", "ValueError", "names starting with '_'"),
    ("nn.ModuleDict({'__class__': nn.ReLU()})", "ValueError", "names starting with '_'"),
    ("md.update({'forward': nn.ReLU()})", "KeyError", "attribute 'forward' already exists"),
    ("md.update({'a.b': nn.ReLU()})", "KeyError", "contain"),
    ("md.update([('x', nn.ReLU(), 3)])", "ValueError", "has length 3; 2 is required"),
    ("md.update({'x': print})", "TypeError", "is not a Module subclass"),
    ("md['b'] = 3", "TypeError", "int is not a Module subclass"),
    ("md(torch.ones(1))", "NotImplementedError", "forward"),
    ("pd.update({'_parameters': torch.ones(1)})", "ValueError", "names starting with '_'"),
    ("pd.update({'keys': torch.ones(1)})", "KeyError", "attribute 'keys' already exists"),
    ("pd.update({1: torch.ones(1)})", "TypeError", "not a string"),
    ("pd(torch.ones(1))", "RuntimeError", "ParameterDict should not be called."),
    ("pl(torch.ones(1))", "RuntimeError", "ParameterList should not be called."),
    ("pl[5]", "IndexError", "index 5 is out of range"),
    ("pl['0']", "TypeError", "'str' object cannot be interpreted as an integer"),
    ("pl.extend(torch.ones(3))", "TypeError", "ParameterList.extend should be called with an iterable"),
    ("pd.popitem() and pd.popitem()", "KeyError", "dictionary is empty"),
    ("nn.ParameterList([torch.ones(1)] * 10 ** 7)", "LimitExceeded", "max_live_elements"),
    ("nn.ModuleDict({str(i): nn.ReLU() for i in range(2000)})", "LimitExceeded", "modules to other modules"),
])
def test_wrong_uses_raise_with_the_programs_line(line, kind, words):
    e = err(HEAD + f"y = {line}\n")
    assert e["line"] == 6, e
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line, kind", [
    ("md['x' * 10 ** 6] = nn.ReLU()", "LimitExceeded"), ("pd['y' * 10 ** 6] = torch.ones(1)", "LimitExceeded"),
    ("md['_hidden'] = nn.ReLU()", "ValueError"), ("pd['_keys'] = 3", "ValueError"),
])
def test_item_assignment_keys_are_checked_as_names(line, kind):
    e = err(HEAD + line + "\n")
    assert e["type"] == kind and e["line"] == 6 and not leaks(e["message"]), e


def test_module_links_through_item_assignment_are_counted():
    e = err(HEAD + "for i in range(2000):\n    md[str(i)] = nn.ReLU()\n")
    assert e["type"] == "LimitExceeded" and "modules to other modules" in e["message"] and e["line"] == 7, e


def test_a_plain_value_named_like_a_method_does_not_shadow_it():
    # (PyTorch sets it as an attribute, so that its own pd.items() fails: flowgrad keeps the method)
    out = ok(HEAD.replace("import torch\n", "import torch\nfrom collections import OrderedDict\n")
                          + "pd.update(OrderedDict([('items', 5), ('note', 'hi')]))\n"
                          "print(pd['items'], pd['note'], list(pd.keys()), pd)\n"
                          "del pd['items']\ndel md['a']\nprint(len(pd), len(md), 'items' in pd)\n")
    assert "5 hi ['w', 'items', 'note'] ParameterDict(" in out and "(items): Object of type: int" in out
    assert out.endswith("2 0 False\n")


@pytest.mark.parametrize("attribute", [
    "_modules", "_parameters", "_objects", "_keys", "_size", "_put", "_get", "_key_to_attr",
    "_get_abs_string_index", "__dict__", "__class__.__init__", "keys().mapping", "items.__self__",
    "values.__func__", "__iter__.__self__", "update.__globals__",
])
@pytest.mark.parametrize("owner", ["md", "pl", "pd"])
def test_the_containers_internals_stay_closed(owner, attribute):
    e = err(HEAD + f"y = {owner}.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert e["line"] == 6 and not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "del md[md]", "del pd[[1]]", "del md['zz']", "del pl[0]",
])
def test_item_deletion_raises_like_python(line):
    e = err(HEAD + line + "\n")
    assert e["line"] == 6 and e["type"] in ("KeyError", "TypeError", "AttributeError"), e
    assert not leaks(e["message"])
