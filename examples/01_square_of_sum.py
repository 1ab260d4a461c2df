# Square of a sum: (x + y) ** 2
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
s = x + y
z = s ** 2
z.backward()
print(f"z = {z.item()}")
print(f"dz/dx = {x.grad.item()}, dz/dy = {y.grad.item()}")  # both 2 * (x + y) = 10
