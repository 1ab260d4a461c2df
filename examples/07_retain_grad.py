# retain_grad: keep the gradient of a non-leaf
import torch

x = torch.tensor(3.0, requires_grad=True)
h = x * 2
h.retain_grad()  # without this, h.grad is None after backward
u = h * h
v = h + 1
out = u + v
out.backward()
print(f"h.grad = {h.grad.item()} (2h + 1)")
print(f"x.grad = {x.grad.item()} (2 * h.grad)")
print(f"u.grad = {u.grad}")  # a non-leaf without retain_grad: None
