# A program people bring (issue 21): a quadratic fit three ways (lstsq, the normal equations by solve and by inv) with
# the usual diagnostics (norm, matrix_rank, cond, svd, eigvalsh, det, pinv), in float64; checked against PyTorch's stdout
import torch
torch.manual_seed(3)
x = torch.linspace(-1, 1, 50, dtype=torch.float64)
y = 0.5 - 2 * x + 3 * x ** 2 + 0.05 * torch.randn(50, dtype=torch.float64)
A = torch.stack([torch.ones_like(x), x, x ** 2], dim=1)
sol = torch.linalg.lstsq(A, y.unsqueeze(1)).solution
print(sol.squeeze())
normal = torch.linalg.solve(A.T @ A, A.T @ y)
print(normal)
print(torch.linalg.inv(A.T @ A) @ (A.T @ y))
print(torch.linalg.norm(A @ normal - y), torch.linalg.matrix_rank(A), torch.linalg.cond(A.T @ A))
U, S, Vh = torch.linalg.svd(A, full_matrices=False)
print(S)
evals = torch.linalg.eigvalsh(A.T @ A)
print(evals)
print(torch.linalg.det(A.T @ A), torch.linalg.pinv(A).shape)
