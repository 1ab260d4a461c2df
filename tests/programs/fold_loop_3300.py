import torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for i in range(3300):
    y = y + torch.sin(y) * 0.001
y.backward()
print(x.grad)
