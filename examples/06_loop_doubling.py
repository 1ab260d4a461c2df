# A loop: y = y * 2, four times
import torch

x = torch.tensor(0.5, requires_grad=True)
y = x
for i in range(4):
    y = y * 2
y.backward()
print(f"y = {y.item()} (x * 2**4)")
print(f"dy/dx = {x.grad.item()} (one factor of 2 per step)")
