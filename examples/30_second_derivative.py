# Second derivative: backward through the backward pass
import torch

x = torch.tensor(1.5, requires_grad=True)
y = x.sin() * x
# create_graph=True records the backward pass as ops: dy/dx is a tensor with its own graph
dydx, = torch.autograd.grad(y, x, create_graph=True)
dydx.backward()  # backward through the backward graph: x.grad is d²y/dx²
print(f"dy/dx = {dydx.item():.4f}")      # sin x + x cos x
print(f"d2y/dx2 = {x.grad.item():.4f}")  # 2 cos x - x sin x
