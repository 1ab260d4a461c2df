# An MNIST-sized MLP on a random batch of 64 (issue 9): run by tests/app and tests/browser as a user program.
import torch
import torch.nn as nn
torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 784, device=device)
y = torch.randint(0, 10, (64,), device=device)
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
