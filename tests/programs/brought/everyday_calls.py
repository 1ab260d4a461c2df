# A program as people bring it (issue 21, twelfth session): everyday_calls — prints PyTorch's stdout in the sandbox.
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.GELU(approximate='tanh'), nn.Linear(3, 1))
print(model(torch.ones(1, 2)))
print(torch.__version__.split('+')[0][:1], torch.cuda.device_count())
x = torch.arange(6.).reshape(2, 3)
print(torch.einsum('ij->ji', x), x.unflatten(1, (3, 1)).shape, torch.atleast_2d(torch.tensor(1.)).shape)
print(nn.functional.normalize(x, dim=1), torch.cdist(x, x).shape, x.softmax(-1).argmax(-1))
with torch.inference_mode():
    print(model(x[:, :2]).requires_grad)
print(torch.manual_seed(3).initial_seed(), torch.Generator().manual_seed(5).initial_seed())
