# Broadcasting a bias: backward sums the gradient back to the bias shape
import torch

x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x + b  # b (3,) is broadcast to (2, 3)
loss = (y * y).sum()
loss.backward()
print(f"y =\n{y}")
print(f"b.grad = {b.grad} (each column of 2*y summed over the 2 rows)")
