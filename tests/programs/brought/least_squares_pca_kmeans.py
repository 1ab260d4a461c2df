# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import torch
torch.manual_seed(0)
X = torch.randn(50, 3)
w_true = torch.tensor([[1.], [-2.], [0.5]])
y = X @ w_true + 0.01 * torch.randn(50, 1)
w = torch.linalg.lstsq(X, y).solution
print(w.shape, torch.allclose(w, w_true, atol=0.05))
A = torch.tensor([[4., 1.], [1., 3.]])
print(torch.linalg.solve(A, torch.tensor([1., 2.])), torch.linalg.eigh(A).eigenvalues, torch.linalg.norm(A), torch.linalg.matrix_rank(A))
U, S, Vh = torch.linalg.svd(X - X.mean(0), full_matrices=False)
print(S.shape, (S ** 2 / (S ** 2).sum()).sum())
pts = torch.randn(20, 2)
centers = pts[:3].clone()
for _ in range(5):
    assign = torch.cdist(pts, centers).argmin(dim=1)
    centers = torch.stack([pts[assign == k].mean(0) if (assign == k).any() else centers[k] for k in range(3)])
print(assign.tolist())
print(torch.linalg.cholesky(A), torch.linalg.det(A), torch.linalg.pinv(A).shape)
print(torch.cov(X.T).shape, torch.corrcoef(X.T).shape)
