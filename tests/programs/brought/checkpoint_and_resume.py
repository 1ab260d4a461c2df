# A program as people bring it (issue 21, twelfth session): checkpoint_and_resume — prints PyTorch's stdout in the sandbox.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = optim.Adam(model.parameters(), lr=0.01)
sched = optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
x = torch.randn(16, 3); y = torch.randn(16, 1)
for epoch in range(8):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    print(epoch, round(loss.item(), 5), sched.get_last_lr())
ckpt = {"epoch": 8, "model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict()}
torch.save(ckpt, "ckpt.pt")
print(sorted(sched.state_dict().keys()))
loaded = torch.load("ckpt.pt")
model2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt2 = optim.Adam(model2.parameters(), lr=0.01)
sched2 = optim.lr_scheduler.StepLR(opt2, step_size=5, gamma=0.5)
model2.load_state_dict(loaded["model"])
opt2.load_state_dict(loaded["optimizer"])
sched2.load_state_dict(loaded["scheduler"])
print(sched2.get_last_lr(), sched2.last_epoch, opt2.param_groups[0]["lr"])
for epoch in range(8, 12):
    opt2.zero_grad()
    loss = nn.functional.mse_loss(model2(x), y)
    loss.backward()
    opt2.step()
    sched2.step()
    print(epoch, round(loss.item(), 5), sched2.get_last_lr())
print(opt2.state_dict()["state"][0]["step"])
