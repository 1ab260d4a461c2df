# A program as people bring it (issue 21, fourteenth session): lazy layers (LazyLinear / LazyConv1d / LazyConv2d /
# LazyBatchNorm1d / 2d) before and after their first call, their errors, state dicts, deep copies, an optimizer
# made before the first forward, and d2l's LeNet and batch-norm nets on a few steps: prints PyTorch's stdout.
import copy

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
lin = nn.LazyLinear(3)
print(lin, lin.weight, lin.bias)
print(type(lin.weight))
print(lin.state_dict())
print([(n, p) for n, p in lin.named_parameters()])
print(lin.weight.requires_grad, lin.weight.grad, lin.weight.dtype, lin.weight.size(), lin.weight.is_leaf)
print(lin.has_uninitialized_params(), lin.in_features)
for attempt in ("shape", "sum", "add", "numel"):
    try:
        if attempt == "shape":
            lin.weight.shape
        elif attempt == "sum":
            lin.weight.sum()
        elif attempt == "add":
            lin.weight + 1
        else:
            lin.weight.numel()
    except (RuntimeError, ValueError) as e:
        print(attempt, type(e).__name__, str(e)[:60])
twin = copy.deepcopy(lin)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
y = lin(torch.ones(2, 5))
print(type(lin), lin, y)
print(type(twin), twin, twin.weight)
loss = y.pow(2).sum()
loss.backward()
opt.step()
print(lin.weight)
try:
    lin(torch.ones(2, 4))
except RuntimeError as e:
    print("RuntimeError", e)
print(nn.LazyLinear(2, bias=False), nn.LazyLinear(2, bias=False).bias)

conv = nn.LazyConv2d(6, kernel_size=5, padding=2)
print(conv, conv.in_channels)
out = conv(torch.randn(2, 3, 8, 8))
print(conv, conv.weight.shape, out.shape, out.sum())
bad = nn.LazyConv2d(6, 3, groups=2)
try:
    bad(torch.ones(1, 3, 8, 8))
except ValueError as e:
    print("ValueError", e)
try:
    nn.LazyConv2d(6, 3)(torch.ones(8, 8))
except RuntimeError as e:
    print("RuntimeError", e)
c1 = nn.LazyConv1d(4, 3)
print(c1)
c1(torch.ones(5, 9))
print(c1)

bn = nn.LazyBatchNorm2d()
print(bn, bn.running_mean, bn.num_batches_tracked)
print(bn.state_dict())
bn(torch.randn(2, 3, 4, 4))
print(bn, bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn1 = nn.LazyBatchNorm1d(momentum=0.2, eps=1e-3)
print(bn1)
bn1(torch.randn(4, 5))
print(bn1, bn1.running_var)
print(nn.LazyBatchNorm2d(affine=False, track_running_stats=False))

# load a state dict into a lazy net: it takes the saved shapes
src = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
src(torch.randn(3, 6))
dst = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
print(dst.load_state_dict(src.state_dict()))
print(dst)
print(dst[0].weight.shape, torch.equal(dst[0].weight, src[0].weight))
x = torch.randn(3, 6)
print(torch.equal(dst(x), src(x)), dst)


# d2l 7.6 LeNet and 8.5 batch norm (concise), with d2l's init_cnn, trained a few steps on random images
def init_cnn(module):
    if type(module) == nn.Linear or type(module) == nn.Conv2d:
        nn.init.xavier_uniform_(module.weight)


lenet = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(),
    nn.LazyLinear(120), nn.Sigmoid(),
    nn.LazyLinear(84), nn.Sigmoid(),
    nn.LazyLinear(10))
X = torch.randn(1, 1, 28, 28)
lenet(X)
lenet.apply(init_cnn)
for layer in lenet:
    X = layer(X)
    print(layer.__class__.__name__, 'output shape:\t', X.shape)

bnnet = nn.Sequential(
    nn.LazyConv2d(6, kernel_size=5), nn.LazyBatchNorm2d(),
    nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Flatten(), nn.LazyLinear(10))
images, labels = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
bnnet(images[:2])
bnnet.apply(init_cnn)
opt = torch.optim.SGD(bnnet.parameters(), lr=0.1)
for step in range(3):
    loss = F.cross_entropy(bnnet(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
print(bnnet[1].running_mean[:3], bnnet[1].num_batches_tracked)
print(bnnet)
