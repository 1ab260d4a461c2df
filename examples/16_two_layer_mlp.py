# A two-layer MLP
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
target = torch.tensor([[1.0], [-1.0]])
pred = model(x)
loss = ((pred - target) ** 2).mean()
loss.backward()
print(f"loss = {loss.item():.4f}")
for name, p in model.named_parameters():
    print(f"{name}: grad norm {p.grad.norm().item():.4f}")
