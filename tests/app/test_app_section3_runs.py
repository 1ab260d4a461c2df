"""Issue 21 section 3 through /api/run, recorded: index assignment under autograd (IndexPut, CopySlices on the
page's graph), the new optimizers' steps, and checkpoint code that checks os.path.exists before loading."""
from __future__ import annotations

import pytest

PROGRAM = """import torch
import os
torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
opt = torch.optim.{opt}([W], lr=0.1, weight_decay=0.01)
Yb = torch.tensor([0, 3, 1])
for step in range(3):
    logits = torch.ones(3, 3) @ W
    probs = logits.softmax(1) * 1
    probs[range(3), Yb] -= 1
    probs[0] = probs[0] * 2
    loss = (probs ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.save(opt.state_dict(), 'opt.pt')
if os.path.exists('opt.pt'):
    opt.load_state_dict(torch.load('opt.pt'))
print(round(loss.item(), 4) > 0, type(probs.grad_fn).__name__)
"""


@pytest.mark.parametrize("opt", ["Adadelta", "Adamax", "NAdam", "RAdam"])
def test_section3_program_runs_recorded(run, opt):
    body = run(PROGRAM.format(opt=opt))
    assert body.get("error") is None, body.get("error")
    assert body["stdout"] == "True CopySlices\n"
