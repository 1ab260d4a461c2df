# A program people bring (issue 21): logistic regression from scratch (a hand-written sigmoid, `1 / (1 + exp(-z))`,
# the log-loss by formula, updates under no_grad) on two synthetic clusters; checked against PyTorch's stdout
import torch
torch.manual_seed(42)
n = 200
X0 = torch.randn(n // 2, 2) + torch.tensor([2.0, 2.0])
X1 = torch.randn(n // 2, 2) + torch.tensor([-2.0, -2.0])
X = torch.cat([X0, X1])
y = torch.cat([torch.zeros(n // 2), torch.ones(n // 2)]).unsqueeze(1)
w = torch.zeros(2, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1
def sigmoid(z):
    return 1 / (1 + torch.exp(-z))
for epoch in range(101):
    y_hat = sigmoid(X @ w + b)
    loss = -(y * torch.log(y_hat + 1e-8) + (1 - y) * torch.log(1 - y_hat + 1e-8)).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if epoch % 20 == 0:
        acc = ((y_hat > 0.5).float() == y).float().mean()
        print(f"epoch {epoch:3d} loss {loss.item():.6f} acc {acc.item():.3f}")
print("w =", w.detach().squeeze().tolist(), "b =", b.item())
preds = torch.round(sigmoid(X @ w + b))
print("correct:", (preds == y).sum().item(), "/", n)
print(torch.sigmoid(torch.tensor([[0.0, 0.0]]) @ w + b))
