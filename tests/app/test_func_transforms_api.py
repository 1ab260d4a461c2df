"""torch.func, torch.autograd.functional, gradcheck, the deprecated Module.register_backward_hook and the in-place
transposes through POST /api/run: the run succeeds with PyTorch's stdout and its passes are built and drawn."""
from __future__ import annotations

PROGRAM = """import torch
import torch.nn as nn
from torch.func import grad, vmap, jacrev, functional_call
import torch.autograd.functional as AF
w = torch.tensor([1.0, 2.0], requires_grad=True)
g = grad(lambda t: (t * w).sum())(torch.ones(2))
J = AF.jacobian(lambda t: t * w, torch.ones(2))
v = vmap(lambda r: r * w)(torch.ones(3, 2))
torch.manual_seed(0)
lin = nn.Linear(2, 1)
p = {k: t.detach() for k, t in lin.named_parameters()}
print(jacrev(lambda q: functional_call(lin, q, (torch.ones(2),)))(p)['weight'].shape)
lin.register_backward_hook(lambda m, gi, go: print('hook', len(gi)))
y = (w * 1).reshape(1, 2)
y.t_()
loss = (g * w).sum() + v.sum() + lin(w).sum() + y.sum()
loss.backward()
print(w.grad, J.sum().item(), y.grad_fn.name())
print(torch.autograd.gradcheck(lambda t: t.sin(), (torch.ones(2, dtype=torch.float64, requires_grad=True),)))
"""

PYTORCH_STDOUT = """torch.Size([1, 1, 2])
hook 1
tensor([5.9947, 8.3793]) 3.0 TBackward1
True
"""  # PyTorch 2.13's


def test_transforms_run_and_are_drawn(run):
    trace = run(PROGRAM)
    assert trace["error"] is None, trace["error"]
    lines = trace["stdout"].splitlines()
    assert lines == PYTORCH_STDOUT.splitlines()
    drawn = [p for p in trace["passes"] if p.get("graph")]
    assert drawn
    names = {n.get("grad_fn") for p in drawn for n in p["graph"]["nodes"]}
    assert "TBackward1" in names or "TBackward0" in names, names
