# A program people bring (issue 21): an autoencoder with random_split, a validation loop and early stopping on a
# deepcopy of the best state_dict; checked against PyTorch's stdout
import copy
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split
torch.manual_seed(7)
data = torch.rand(500, 64)
ds = TensorDataset(data)
train_ds, val_ds = random_split(ds, [400, 100], generator=torch.Generator().manual_seed(1))
train_dl = DataLoader(train_ds, batch_size=50, shuffle=True)
val_dl = DataLoader(val_ds, batch_size=100)
model = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 64), nn.Sigmoid())
print(model)
print("trainable:", sum(p.numel() for p in model.parameters() if p.requires_grad))
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
crit = nn.MSELoss()
best, best_state, patience, bad = float("inf"), None, 3, 0
for epoch in range(40):
    model.train()
    for (xb,) in train_dl:
        loss = crit(model(xb), xb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val = sum(crit(model(xb), xb).item() for (xb,) in val_dl) / len(val_dl)
    if val < best - 1e-4:
        best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
    if epoch % 5 == 0:
        print(f"epoch {epoch} val {val:.6f} best {best:.6f}")
    if bad >= patience:
        print("early stop at epoch", epoch)
        break
model.load_state_dict(best_state)
with torch.no_grad():
    print(round(crit(model(data[:5]), data[:5]).item(), 6), len(best_state), list(best_state.keys()))
