# An nn.Module trained with SGD on a small generated data set
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(2, 8)
        self.layer2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.layer2(torch.tanh(self.layer1(x)))


torch.manual_seed(0)
x = torch.randn(32, 2)
y = (x[:, 0:1] * x[:, 1:2] > 0).float()  # label: same sign
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
loss_fn = nn.BCEWithLogitsLoss()
for epoch in range(60):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch % 20 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")
print(f"final loss {loss.item():.4f}")
