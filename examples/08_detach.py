# detach: the value passes, the gradient stops
import torch

x = torch.tensor(2.0, requires_grad=True)
a = x * x
c = a.detach()  # same value as a, but cut from the graph
y = a + c * x
y.backward()
print(f"y = {y.item()}")
print(f"x.grad = {x.grad.item()}: 2x from a, plus c from c * x, nothing through c")
