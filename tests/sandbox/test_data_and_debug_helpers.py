"""What programs people bring combine datasets and sample with, and debug with: torch.utils.data's ConcatDataset
(and `ds1 + ds2`), WeightedRandomSampler, SubsetRandomSampler (engine/utils/data.py); torch.finfo / torch.iinfo
(engine/type_info.py), torch.atleast_1d / 2d / 3d; anomaly mode (torch.autograd.set_detect_anomaly / detect_anomaly: backward names the node
whose gradient holds a nan). A program using them prints PyTorch's stdout; what they are handed is bounded."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader, Subset, ConcatDataset, WeightedRandomSampler
from torch.utils.data import SubsetRandomSampler
torch.manual_seed(0)
print(torch.finfo(torch.float32).eps, torch.iinfo(torch.int8).max, torch.finfo(torch.float16), torch.finfo())
print(torch.iinfo(torch.int64), torch.finfo(torch.float64).tiny, torch.finfo(torch.float32).dtype)
ds = TensorDataset(torch.arange(10.).view(10, 1), torch.arange(10) % 2)
sub = Subset(ds, [0, 2, 4])
both = ConcatDataset([sub, sub])
print(len(both), both[4], both[-1], len(sub + ds))
sampler = WeightedRandomSampler([0.1] * 5 + [0.9] * 5, num_samples=6, replacement=True)
print(list(sampler), len(sampler))
for xb, yb in DataLoader(ds, batch_size=4, sampler=sampler):
    print(xb.view(-1), yb)
print(list(SubsetRandomSampler([3, 5, 7, 9])))
for (xb, yb) in DataLoader(ds, batch_size=2, sampler=SubsetRandomSampler(range(4))):
    print(xb.view(-1))
x = torch.tensor([0.0, 1.0], requires_grad=True)
with torch.autograd.set_detect_anomaly(True):
    print(torch.is_anomaly_enabled())
    try:
        (x / x).sum().backward()
    except RuntimeError as e:
        print("RuntimeError:", e)
print(torch.is_anomaly_enabled())
(x * 2).sum().backward()
print(x.grad)
s = torch.tensor(2.0, requires_grad=True)
print(torch.atleast_1d(s), torch.atleast_2d(torch.ones(2), s), torch.atleast_3d([torch.ones(2, 2)])[0].shape)
print(torch.atleast_3d(s).grad_fn.name(), torch.atleast_2d(x).grad_fn.name(), torch.atleast_1d(x) is x)
"""


def test_a_program_using_them_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind", [
    ("torch.utils.data.WeightedRandomSampler([1.0, 2.0], num_samples=10 ** 12)", None),
    ("list(torch.utils.data.WeightedRandomSampler([1.0, 2.0], num_samples=10 ** 9))", "LimitExceeded"),
    ("torch.utils.data.WeightedRandomSampler([[1.0]], num_samples=2)", "ValueError"),
    ("torch.utils.data.WeightedRandomSampler([1.0], num_samples=0)", "ValueError"),
    ("torch.utils.data.ConcatDataset([])", "AssertionError"),
    ("list(torch.utils.data.SubsetRandomSampler(range(10 ** 9)))", "LimitExceeded"),
    ("torch.finfo(torch.int32)", "TypeError"),
    ("torch.iinfo(print)", "TypeError"),
])
def test_what_they_are_handed_is_bounded(line, kind):
    source = f"import torch\ny = {line}\n"
    if kind is None:  # made lazily, as torch's: nothing is drawn until it is iterated
        assert same_as_cpython(source) == ""
        return
    e = err(source)
    assert e["type"] == kind, e
    assert e["line"] == 2 and not leaks(e["message"])


@pytest.mark.parametrize("line", ["torch.finfo().__class__.__bases__", "torch.finfo()._asdict", "torch.iinfo.__new__",
                                  "torch.autograd.set_detect_anomaly(True)._prev",
                                  "torch.utils.data.ConcatDataset([torch.utils.data.TensorDataset(torch.ones(2))])"
                                  ".datasets.__class__.__init__"])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import torch\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError", "NameError"), e
    assert not leaks(e["message"])
