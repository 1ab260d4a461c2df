# Linear regression trained by hand
import torch

x = torch.linspace(-1, 1, 8)
y = 3 * x + 0.5  # the line to recover
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
lr = 0.2
for step in range(30):
    pred = w * x + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}")
print(f"w = {w.item():.3f}, b = {b.item():.3f}")
