# An RNN unrolled through time: predict the next point of a wave
import torch
import torch.nn as nn

torch.manual_seed(0)
steps = 8
t = torch.linspace(0, 3.5, steps + 1)
wave = torch.sin(2 * t).view(steps + 1, 1, 1)  # (time, batch, feature)
inputs, targets = wave[:-1], wave[1:]

cell = nn.RNNCell(1, 6)
readout = nn.Linear(6, 1)
optimizer = torch.optim.Adam(list(cell.parameters()) + list(readout.parameters()), lr=0.05)
for epoch in range(3):
    optimizer.zero_grad()
    h = torch.zeros(1, 6)
    loss = 0
    for k in range(steps):  # one RNNCell call per time step: the graph is the network unrolled
        h = cell(inputs[k], h)
        loss = loss + (readout(h) - targets[k]).pow(2).mean()
    loss = loss / steps
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
print("last hidden state:", h)
