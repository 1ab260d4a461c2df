# Softmax cross-entropy written out by hand
import torch

logits = torch.tensor([2.0, 1.0, -1.0], requires_grad=True)
target = 0
e = torch.exp(logits)
p = e / e.sum()
loss = -torch.log(p[target])
loss.backward()
print(f"p = {p}")
print(f"loss = {loss.item():.4f}")
print(f"dloss/dlogits = {logits.grad} (= p - onehot)")
