# A seeded training loop: the same losses as PyTorch
import torch
import torch.nn as nn

torch.manual_seed(42)
x = torch.rand(64, 2) * 4 - 2
y = (x ** 2).sum(1, keepdim=True) + 0.1 * torch.randn(64, 1)  # a bowl, with noise
model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
for epoch in range(40):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d}: loss {loss.item():.5f}")
print(f"final loss {loss.item():.5f}")
