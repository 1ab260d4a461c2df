# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)
X = torch.randn(64, 3); y = (X.sum(1) > 0).long()
ds = TensorDataset(X, y)
dl = DataLoader(ds, batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
lossf = nn.CrossEntropyLoss()
for epoch in range(4):
    total = 0.0
    for i, (xb, yb) in enumerate(dl):
        opt.zero_grad()
        out = model(xb)
        loss = lossf(out, yb)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        total += loss.item()
    sched.step()
    print(epoch, round(total, 4), sched.get_last_lr())
model.eval()
with torch.no_grad():
    pred = model(X).argmax(dim=1)
    acc = (pred == y).float().mean()
print(f"accuracy: {acc:.3f}", acc.item())
print(model)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
