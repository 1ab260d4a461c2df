# Gradient accumulation: .grad adds up until you zero it
import torch

w = torch.tensor(1.0, requires_grad=True)
for batch in [2.0, 3.0, 4.0]:
    loss = (w * batch - 1) ** 2
    loss.backward()
    print(f"batch {batch}: w.grad = {w.grad.item()}")
w.grad.zero_()
print(f"after zero_(): w.grad = {w.grad.item()}")
