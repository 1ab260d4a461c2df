# Sum times a sine: (x + y) * sin(x)
import torch

x = torch.tensor(1.0, requires_grad=True)
y = torch.tensor(2.0, requires_grad=True)
a = x + y
b = torch.sin(x)
f = a * b
f.backward()
print(f"f = {f.item():.4f}")
print(f"df/dx = sin(x) + (x + y) cos(x) = {x.grad.item():.4f}")
print(f"df/dy = sin(x) = {y.grad.item():.4f}")
