# A program people bring (issue 21): the transfer-learning tutorial's moves on a small net: freeze a backbone, swap the
# head, optimise filter(lambda p: p.requires_grad, ...) with StepLR; checked against PyTorch's stdout
import torch
import torch.nn as nn
import torch.optim as optim
torch.manual_seed(5)
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.classifier = nn.Linear(16, 10)
    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))
model = Backbone()
for name, p in model.named_parameters():
    print(name, tuple(p.shape), p.requires_grad)
for param in model.features.parameters():
    param.requires_grad = False
model.classifier = nn.Linear(16, 3)
params_to_update = [p for p in model.parameters() if p.requires_grad]
print("to update:", len(params_to_update), sum(p.numel() for p in params_to_update))
optimizer = optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01, momentum=0.9)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.1)
x = torch.randn(24, 1, 8, 8)
y = torch.randint(0, 3, (24,))
crit = nn.CrossEntropyLoss()
for epoch in range(12):
    model.train()
    optimizer.zero_grad()
    out = model(x)
    loss = crit(out, y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    if epoch % 3 == 0:
        _, preds = torch.max(out, 1)
        print(epoch, f"{loss.item():.4f}", torch.sum(preds == y.data).item(), scheduler.get_last_lr())
print(model.features[0].weight.grad is None, model.classifier.weight.grad.shape)
print(model.features[1].running_mean)
