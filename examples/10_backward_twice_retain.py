# Backward twice with retain_graph=True: gradients add up
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward(retain_graph=True)
print(f"after the first backward:  x.grad = {x.grad.item()}")
y.backward()
print(f"after the second backward: x.grad = {x.grad.item()} (3x^2 twice)")
