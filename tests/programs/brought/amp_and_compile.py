# A program as people bring it (issue 21, fourteenth session): mixed precision lines as GPU programs write them, on
# a CPU-only PyTorch: CUDA autocast and scalers disable themselves, a CPU GradScaler scales (and skips a step on
# inf), torch.compile wraps a module.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
cmodel = torch.compile(model, backend="eager")  # (inductor may round otherwise than eager mode)
print(cmodel)
print(type(cmodel).__name__, [n for n, _ in cmodel.named_parameters()][:2], len(cmodel))
print(list(cmodel.state_dict().keys())[:2], cmodel._orig_mod[0])
opt = torch.optim.SGD(cmodel.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
old = torch.cuda.amp.GradScaler(enabled=True)
print(scaler.is_enabled(), old.is_enabled(), scaler.get_scale(), scaler.state_dict())
X, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = F.cross_entropy(cmodel(X), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(step, f"{loss.item():.6f}", loss.dtype)
with torch.cuda.amp.autocast():
    print(cmodel(X).dtype)
with torch.autocast("cpu", enabled=False):
    print(cmodel(X).dtype)

cpu = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
print(cpu.is_enabled(), cpu.get_scale(), cpu.state_dict())
for step in range(4):
    loss = F.cross_entropy(model(X), y)
    opt.zero_grad()
    scaled = cpu.scale(loss)
    print(step, f"{scaled.item():.4f}", scaled.grad_fn.name())
    scaled.backward()
    if step == 2:
        model[0].weight.grad[0, 0] = float("inf")
    cpu.unscale_(opt)
    print(f"{model[2].bias.grad[0].item():.6f}")
    print(cpu.step(opt))
    cpu.update()
    print(cpu.get_scale(), cpu.state_dict()["_growth_tracker"])
print(model[2].bias)
try:
    cpu.unscale_(opt)
    cpu.unscale_(opt)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.autocast("tpu")
except RuntimeError as e:
    print("RuntimeError", e)


@torch.compile(mode="reduce-overhead")
def f(x):
    return torch.sin(x) + 1


print(f(torch.zeros(2)), torch.compile(lambda t: t * 2)(torch.ones(2)))
try:
    torch.compile(model, mode="fast")
except RuntimeError as e:
    print("RuntimeError", e)
