import torch
torch.manual_seed(0)
xs = torch.randn(200, 1, 4)
U = torch.randn(4, 8, requires_grad=True)
W = torch.randn(8, 8, requires_grad=True)
h = torch.zeros(1, 8)
for t in range(200):
    h = torch.tanh(xs[t] @ U + h @ W)
loss = h.pow(2).sum()
loss.backward()
print(loss, W.grad.norm())
