# A program as people bring it (issue 21, twelfth session): resizing_demo — prints PyTorch's stdout in the sandbox.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 2, 3, 4, requires_grad=True)
for mode, ac in (("bilinear", False), ("bilinear", True), ("bicubic", False), ("nearest", None)):
    kw = {} if ac is None else {"align_corners": ac}
    y = F.interpolate(x, scale_factor=2, mode=mode, **kw)
    print(mode, ac, y.shape, y[0, 0, :2, :4])
    g, = torch.autograd.grad((y * torch.arange(y.numel()).reshape(y.shape)).sum(), x)
    print(g[0, 0])
up = nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False)
print(up(x)[0, 1, 0])
z = torch.randn(1, 2, 6)
print(F.interpolate(z, size=9, mode="linear", align_corners=False))
