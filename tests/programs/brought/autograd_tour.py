# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
dy, = torch.autograd.grad(y, x, create_graph=True)
d2y, = torch.autograd.grad(dy, x)
print(dy, d2y)
w = torch.randn(3, requires_grad=True, generator=torch.Generator().manual_seed(0))
z = (w * 2).sum()
z.backward(retain_graph=True); z.backward()
print(w.grad)
print(y.grad_fn, y.grad_fn.next_functions, x.is_leaf, y.is_leaf, y.requires_grad)
@torch.no_grad()
def f(t): return t * 2
print(f(x).requires_grad)
with torch.inference_mode():
    print((x * 2).requires_grad)
with torch.enable_grad():
    print((x * 2).requires_grad)
v = x.detach().clone().requires_grad_(True); print(v.requires_grad, v.is_leaf)
h = w.register_hook(lambda g: g * 0.5)
(w ** 2).sum().backward(); print(w.grad); h.remove()
t = torch.ones(2, 2, requires_grad=True); u = t * 3; u.retain_grad(); u.sum().backward(); print(u.grad, t.grad)
print(torch.autograd.functional.jacobian(lambda a: a ** 2, torch.tensor([1., 2.])))
