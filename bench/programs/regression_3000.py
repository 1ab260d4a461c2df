# A 3,000-step linear regression on 2 parameters (weight and bias) with torch.optim.SGD.
import torch

torch.manual_seed(0)
x = torch.linspace(0, 1, 100).unsqueeze(1)
y = 3 * x + 2 + 0.1 * torch.randn(100, 1)

w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.1)
for step in range(3000):
    pred = x * w + b
    loss = ((pred - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 300 == 0:
        print(step, round(loss.item(), 6))
print(f"w = {w.item():.4f}, b = {b.item():.4f}")
