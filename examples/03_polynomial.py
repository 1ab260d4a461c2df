# A polynomial: x*x + 3*x + 1 (x used three times, gradients add up)
import torch

x = torch.tensor(1.5, requires_grad=True)
y = x * x + 3 * x + 1
y.backward()
print(f"y = {y.item()}")
print(f"dy/dx = 2x + 3 = {x.grad.item()}")
