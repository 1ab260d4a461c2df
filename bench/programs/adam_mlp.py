# A small MLP trained for 1,000 epochs with Adam on a synthetic 2-D regression task.
import torch
from torch import nn

torch.manual_seed(0)
X = torch.rand(256, 2) * 4 - 2
y = torch.sin(X[:, :1]) * torch.cos(X[:, 1:])

model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()
for epoch in range(1000):
    optimizer.zero_grad()
    loss = loss_fn(model(X), y)
    loss.backward()
    optimizer.step()
    if epoch % 100 == 0 or epoch == 999:
        print(f"epoch {epoch:4d}  loss {loss.item():.6f}")
