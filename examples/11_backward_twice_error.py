# Backward twice without retain_graph: PyTorch refuses
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.exp(x) * x
y.backward()  # frees the graph's saved tensors
print(f"x.grad = {x.grad.item():.4f}")
y.backward()  # RuntimeError: Trying to backward through the graph a second time
print("never printed")
