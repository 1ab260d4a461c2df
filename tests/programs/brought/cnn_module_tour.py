# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(4 * 4 * 4, 10)
    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        x = self.drop(x)
        return self.fc(x.flatten(1))
torch.manual_seed(0)
net = Net()
x = torch.randn(2, 1, 8, 8)
out = net(x)
print(out.shape)
loss = out.logsumexp(1).mean()
loss.backward()
print(net.conv.weight.grad.shape, round(net.fc.bias.grad.sum().item(), 5))
for name, p in net.named_parameters():
    print(name, tuple(p.shape))
print(net.state_dict().keys())
net.eval(); print(net.training, net.bn.training)
emb = nn.Embedding(10, 3); print(emb(torch.tensor([1, 2])).shape)
lstm = nn.LSTM(3, 5, batch_first=True); o, (h, c) = lstm(torch.randn(2, 4, 3)); print(o.shape, h.shape, c.shape)
gru = nn.GRU(3, 5); o, h = gru(torch.randn(4, 2, 3)); print(o.shape, h.shape)
print(nn.MSELoss()(torch.tensor([1., 2.]), torch.tensor([1.5, 2.5])))
print(nn.BCEWithLogitsLoss()(torch.tensor([0.3, -1.]), torch.tensor([1., 0.])))
print(nn.functional.cross_entropy(torch.tensor([[1., 2., 3.]]), torch.tensor([2])))
