# A branch on a value: only the path taken is in the graph
import torch

x = torch.tensor(-1.5, requires_grad=True)
if x.item() > 0:
    y = x ** 2
else:
    y = -3 * x
y.backward()
print(f"x = {x.item()}: took the {'x ** 2' if x.item() > 0 else '-3 * x'} branch")
print(f"y = {y.item()}, dy/dx = {x.grad.item()}")
