# Linear regression, plotted
import matplotlib.pyplot as plt
import torch

torch.manual_seed(0)
x = torch.linspace(0, 1, 30).unsqueeze(1)
y = 2 * x + 1 + 0.1 * torch.randn(30, 1)  # a noisy line to recover
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(100):
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 25 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")
print(f"weight {model.weight.item():.3f}, bias {model.bias.item():.3f}")
plt.scatter(x.numpy(), y.numpy())
plt.plot(x.numpy(), pred.detach().numpy(), 'r-')
plt.show()
