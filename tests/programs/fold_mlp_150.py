import torch
from torch import nn
torch.manual_seed(0)
layers = []
for i in range(150):
    layers.append(nn.Linear(8, 8))
    layers.append(nn.Tanh())
model = nn.Sequential(*layers)
loss = model(torch.randn(4, 8)).pow(2).mean()
loss.backward()
print(loss)
