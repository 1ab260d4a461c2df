# One layer with BCE-with-logits
import torch
import torch.nn as nn

x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, -2.0]])
y = torch.tensor([[1.0], [0.0], [0.0]])
layer = nn.Linear(2, 1)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[0.3, -0.2]]))
    layer.bias.fill_(0.1)
logits = layer(x)
loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
loss.backward()
print(f"loss = {loss.item():.4f}")
print(f"weight.grad = {layer.weight.grad}")
print(f"bias.grad = {layer.bias.grad}")
