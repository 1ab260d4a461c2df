# Tensor hooks and module hooks as the autograd-mechanics and hooks tutorials use them.
import torch
import torch.nn as nn

torch.manual_seed(0)
a = torch.tensor(2.0, requires_grad=True)
b = a.clone()
b.retain_grad()
c = b * b
c.register_hook(lambda grad: print("grad of c", grad))
d = c.sin()
h = b.register_hook(lambda grad: grad * 100)
d.backward()
print(a.grad, b.grad)
h.remove()

x = torch.ones(3, requires_grad=True)
y = x * 2
y.register_hook(lambda g: g.clamp(max=0.5))
y.sum().backward()
print(x.grad)

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
activations = {}


def save_output(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
    return hook


for name, layer in model.named_children():
    layer.register_forward_hook(save_output(name))
grads = []
model[0].register_full_backward_hook(lambda m, gin, gout: grads.append(gout[0].shape))
model[2].register_forward_pre_hook(lambda m, inp: print("into layer 2:", tuple(inp[0].shape)))
out = model(torch.randn(5, 4))
out.sum().backward()
print(sorted(activations), activations["1"].shape, grads)
print(model[0].weight.grad.shape)
