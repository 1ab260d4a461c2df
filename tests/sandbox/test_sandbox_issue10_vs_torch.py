"""Issue 10's additions run in the sandbox print what the same programs print under the installed PyTorch:
generators (seeding, state round trips, generator= on draws, loaders, splits, samplers), torch.multinomial,
nn.init.trunc_normal_, nn.utils clipping, padded convolutions and a segmentation-style loss."""
import contextlib
import io

import pytest
from sandbox_testing import ok

torch = pytest.importorskip("torch")

PROGRAMS = {
    "generators": """
import torch
from torch.utils.data import DataLoader, TensorDataset, RandomSampler, random_split
torch.manual_seed(0)
g = torch.Generator().manual_seed(3)
print(torch.rand(3, generator=g), torch.randn(2, generator=g), torch.randint(0, 10, (3,), generator=g))
print(torch.randperm(6, generator=g), torch.empty(3).normal_(generator=g), torch.empty(2).uniform_(generator=g))
s = torch.get_rng_state()
a = torch.rand(2)
torch.set_rng_state(s)
print(a, torch.rand(2), s.shape, s.dtype, g.initial_seed())
state = g.get_state()
b = torch.rand(3, generator=g)
g.set_state(state)
print(b, torch.rand(3, generator=g))
ds = TensorDataset(torch.arange(10.0))
print([b[0].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))])
print([list(s) for s in random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))])
print(list(RandomSampler(range(5), replacement=True, num_samples=40, generator=torch.Generator().manual_seed(2))))
torch.manual_seed(4)
print(list(RandomSampler(range(7), replacement=True)), torch.rand(1))
""",
    "multinomial_and_init": """
import torch
import torch.nn as nn
torch.manual_seed(0)
p = torch.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 3.0, 2.0]])
print(torch.multinomial(p, 2), torch.multinomial(p, 6, replacement=True), torch.multinomial(p[0], 1))
w = torch.empty(3, 8)
nn.init.trunc_normal_(w, std=0.5, a=-0.4, b=0.6)
print(w)
nn.init.trunc_normal_(w, mean=0.0, std=1.0, a=2.0, b=3.0)
print(w)
m = nn.Linear(4, 3)
m(torch.ones(2, 4)).pow(2).sum().backward()
print(nn.utils.clip_grad_norm_(m.parameters(), 1.0), m.weight.grad)
nn.utils.clip_grad_value_(m.parameters(), 0.05)
print(m.bias.grad, nn.utils.parameters_to_vector(m.parameters()).shape)
""",
    "padding_and_segmentation": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 3, 6, 6, requires_grad=True)
for mode in ['reflect', 'replicate', 'circular']:
    conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode=mode)
    y = conv(x)
    print(conv, y.shape, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), f"{y.sum().item():.4f}")
print(F.pad(torch.arange(5.0).view(1, 1, 5), (2, 3), mode='reflect'))
logits = torch.randn(2, 4, 3, 3, requires_grad=True)
target = torch.randint(0, 4, (2, 3, 3))
target[0, 0, 0] = -100
loss = F.cross_entropy(logits, target, weight=torch.tensor([1.0, 2.0, 0.5, 1.0]), label_smoothing=0.1)
loss.backward()
print(loss, logits.grad[0, :, 0, 1])
print(nn.NLLLoss(reduction='none')(logits.log_softmax(1), target.clamp(min=0))[0])
""",
}


def _torch_stdout(src):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102 — our own test program
    return buf.getvalue()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_issue10_programs_print_what_torch_prints(name):
    src = PROGRAMS[name]
    ours = ok(src)
    theirs = _torch_stdout(src)
    assert ours == theirs
