"""A seeded DataLoader training loop run in the sandbox prints what the same program prints under the
installed PyTorch: the losses printed as tensors (4 decimals), epoch means to 4 decimals (the values
agree to float32 rounding, ~1e-7 relative, so full-precision sums may differ in the last digits) (Linear + MSE, SGD with momentum / Adam / AdamW / RMSprop / Adagrad, a scheduler,
shuffle=True drawing from the seeded global generator, 3 epochs)."""
import contextlib
import io

import pytest
from sandbox_testing import ok

torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, Dataset, random_split

torch.manual_seed({seed})
x = torch.randn(40, 3)
y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * torch.randn(40, 1)


class Pairs(Dataset):
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


data = {dataset}
train, val = random_split(data, [0.8, 0.2])
loader = DataLoader(train, batch_size=6, shuffle=True, drop_last={drop_last})
model = nn.Linear(3, 1)
opt = {optimizer}
sched = torch.optim.lr_scheduler.{scheduler}
loss_fn = nn.MSELoss()
print(len(train), len(val), len(loader))
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
        print(loss)
    {sched_step}
    print(epoch, f"{{total / len(loader):.4f}}", sched.get_last_lr())
print([round(v, 3) for v in model.weight[0].tolist()])
print([round(v, 3) for v in opt.state[model.weight]{state_key}.flatten().tolist()])
"""

# one row a case: seed, dataset, drop_last, optimizer, scheduler, sched_step, state_key
_ROWS = [
    (0, "TensorDataset(x, y)", False, "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)",
     "StepLR(opt, step_size=1, gamma=0.5)", "sched.step()", "['momentum_buffer']"),
    (1, "Pairs(x, y)", True, "torch.optim.Adam(model.parameters(), lr=0.05)",
     "CosineAnnealingLR(opt, T_max=3)", "sched.step()", "['exp_avg_sq']"),
    (2, "TensorDataset(x, y)", False, "torch.optim.AdamW(model.parameters(), lr=0.05, amsgrad=True)",
     "ExponentialLR(opt, gamma=0.9)", "sched.step()", "['max_exp_avg_sq']"),
    (3, "Pairs(x, y)", False, "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5, centered=True)",
     "ReduceLROnPlateau(opt, patience=0)", "sched.step(total)", "['square_avg']"),
    (4, "TensorDataset(x, y)", True, "torch.optim.Adagrad(model.parameters(), lr=0.3, lr_decay=0.01)",
     "LambdaLR(opt, lambda e: 1 / (e + 1))", "sched.step()", "['sum']"),
]
CASES = [dict(zip(("seed", "dataset", "drop_last", "optimizer", "scheduler", "sched_step", "state_key"), row))
         for row in _ROWS]


def _torch_stdout(src):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "<program>", "exec"), {"__name__": "__main__"})  # noqa: S102 — our own test program
    return buf.getvalue()


@pytest.mark.parametrize("case", CASES, ids=[c["optimizer"].split("(")[0].split(".")[-1] for c in CASES])
def test_training_loop_prints_what_torch_prints(case):
    src = PROGRAM.format(**case)
    ours = ok(src)
    theirs = _torch_stdout(src)
    assert ours == theirs
    assert ours.count("tensor(") > 10
