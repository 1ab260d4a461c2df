# A training loop that prints its loss at every one of its 1,000 steps.
import torch

torch.manual_seed(0)
x = torch.randn(64, 3)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
y = x @ true_w + 0.3

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(1000):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step:4d}  loss {loss.item():.6f}")
