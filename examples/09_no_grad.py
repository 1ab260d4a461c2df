# no_grad: operations not recorded for backward
import torch

w = torch.tensor(1.5, requires_grad=True)
x = torch.tensor(4.0)
y = w * x
with torch.no_grad():
    scale = w * 10  # computed, but no grad_fn
print(f"scale.requires_grad = {scale.requires_grad}, grad_fn = {scale.grad_fn}")
loss = y * scale
loss.backward()
print(f"w.grad = {w.grad.item()} (x * scale; scale counts as a constant)")
