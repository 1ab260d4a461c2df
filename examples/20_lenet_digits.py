# LeNet-5 on a batch of synthetic digits
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
# seven-segment digits: which strokes (top, upper left, upper right, middle, lower left, lower right, bottom) each lights
SEGMENTS = torch.tensor([[1, 1, 1, 0, 1, 1, 1], [0, 0, 1, 0, 0, 1, 0], [1, 0, 1, 1, 1, 0, 1], [1, 0, 1, 1, 0, 1, 1],
                         [0, 1, 1, 1, 0, 1, 0], [1, 1, 0, 1, 0, 1, 1], [1, 1, 0, 1, 1, 1, 1], [1, 0, 1, 0, 0, 1, 0],
                         [1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1, 1]], dtype=torch.float32)
# each stroke's box: top, bottom, left, right rows and columns
BOXES = torch.tensor([[4, 6, 9, 18], [4, 14, 8, 10], [4, 14, 17, 19], [13, 15, 9, 18], [13, 23, 8, 10],
                      [13, 23, 17, 19], [21, 23, 9, 18]], dtype=torch.float32)
top, bottom, left, right = BOXES.T.reshape(4, 7, 1, 1)
rows = torch.arange(28.0).view(28, 1)
cols = torch.arange(28.0).view(1, 28)
strokes = ((rows >= top) & (rows <= bottom) & (cols >= left) & (cols <= right)).float()  # (7, 28, 28)
images = (SEGMENTS @ strokes.view(7, -1)).clamp(max=1).view(10, 1, 28, 28)
images = images + 0.2 * torch.randn(10, 1, 28, 28)  # pen noise
labels = torch.arange(10)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.conv1(x)), 2)  # 6 feature maps, 14×14
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)  # 16 feature maps, 5×5
        x = torch.relu(self.fc1(x.flatten(1)))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


model = LeNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
for step in range(12):
    first = 5 * (step % 2)  # two mini-batches of five digits, in turn
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images[first:first + 5]), labels[first:first + 5])
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
print("predicted:", model(images[:5]).argmax(1).tolist(), model(images[5:]).argmax(1).tolist())
