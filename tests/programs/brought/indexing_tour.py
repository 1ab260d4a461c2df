# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
x = torch.arange(24).reshape(2, 3, 4)
print(x.unfold(2, 2, 2).shape, x.stride(), x.is_contiguous(), x.transpose(0, 1).is_contiguous())
print(torch.einsum("bij,bjk->bik", x.float(), x.float().transpose(1, 2)).shape)
print(x.flatten(1).shape, x.view(-1, 4).shape, x[..., 0], x[:, None].shape, x[x % 2 == 0][:5])
idx = torch.tensor([0, 2]); print(x[:, idx].shape, x.index_select(2, idx).shape)
m = torch.zeros(3, 3); m[torch.arange(3), torch.arange(3)] = 1; print(m)
m[m == 0] = -1; print(m.sum())
print(torch.clamp(x, min=3, max=10).max())
print(x.sum((0, 2)), x.amax(dim=(1, 2)), x.argmax(), torch.argmax(x, dim=1, keepdim=True).shape)
print(torch.cumsum(x, dim=-1)[0, 0], x.prod(dim=0)[0], x.float().norm(dim=-1).shape)
print(torch.where(x > 10)[0][:3], torch.nonzero(x > 20).shape, (x > 5).sum().item(), (x > 5).float().mean().item())
print(x.numpy().shape, x.tolist()[0][0], list(x.shape), x.size(0), x.type(), x.float().type())
