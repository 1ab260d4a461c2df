# Product plus a log: x * y + log(x)
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(-3.0, requires_grad=True)
p = x * y
l = torch.log(x)
f = p + l
f.backward()
print(f"f = {f.item():.4f}")
print(f"df/dx = y + 1/x = {x.grad.item():.4f}")
print(f"df/dy = x = {y.grad.item():.4f}")
