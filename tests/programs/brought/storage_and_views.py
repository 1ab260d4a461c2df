# A program people bring (issue 21): views share storage, copies do not, as tensor tutorials show it (storage(),
# untyped_storage(), data_ptr(), storage_offset(), stride()); checked against PyTorch's stdout
import torch
x = torch.arange(6.).reshape(2, 3)
y = x[:, 1:]
z = x.t().contiguous()
print(x.storage().data_ptr() == y.storage().data_ptr(), x.storage().data_ptr() == z.storage().data_ptr())
print(y.storage_offset(), y.stride(), x.data_ptr() == x.view(-1).data_ptr(), x.data_ptr() == y.data_ptr())
s = y.storage()
print(s)
print(len(s), s.size(), s[2], s.tolist(), list(s), s.dtype, s.device, s.nbytes(), s.element_size(), s.type())
print(type(s), type(x.untyped_storage()), len(x.untyped_storage()), x.untyped_storage()[6])
for v in torch.tensor([1, 2]).storage():
    print(v)
print(torch.tensor([True, False]).storage())
print((y.data_ptr() - x.data_ptr()) // x.element_size(), x.untyped_storage().nbytes())
print(sum(torch.tensor([[1., 2.], [3., 4.]]).storage()), max(torch.tensor([1, 5, 2]).storage()))
a = torch.arange(12.)
b = a.view(3, 4)
c = a[4:]
d = a.clone()
print(a.data_ptr() == b.data_ptr(), c.data_ptr() - a.data_ptr(), a.data_ptr() == d.data_ptr(), a.storage().data_ptr() == c.storage().data_ptr())
print(c.untyped_storage().data_ptr() == a.data_ptr(), torch.empty(0).data_ptr(), c.storage_offset(), b.t().storage_offset())
s0 = torch.tensor(2.5)
print(s0.data_ptr() == s0.data_ptr(), (s0 * 2).storage().tolist())
