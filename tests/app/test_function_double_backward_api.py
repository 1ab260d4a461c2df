"""A second derivative through a custom autograd.Function, through POST /api/run: the run succeeds, prints
PyTorch's numbers, and its passes are drawn (the Function's node in the forward pass, the backward graph of
the create_graph pass). Also torch.linalg's nuclear norm and its Hessian-vector product."""
from __future__ import annotations

CUBE = """import torch
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2
x = torch.tensor([1., 2.], requires_grad=True)
y = Cube.apply(x).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
g.sum().backward()
print(x.grad)
"""

NUCLEAR = """import torch
A = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
n = torch.linalg.matrix_norm(A, 'nuc')
g, = torch.autograd.grad(n, A, create_graph=True)
(g * torch.tensor([[0., 1.], [0., 0.]])).sum().backward()
print(n, A.grad)
"""


def test_second_derivative_through_a_custom_function(run):
    trace = run(CUBE)
    assert trace["error"] is None, trace["error"]
    assert trace["stdout"] == "tensor([ 3., 12.], grad_fn=<MulBackward0>)\ntensor([ 6., 12.])\n"
    drawn = [p for p in trace["passes"] if p.get("graph")]
    assert drawn
    names = {n.get("grad_fn") for p in drawn for n in p["graph"]["nodes"]}
    assert "CubeBackward" in names, names


def test_nuclear_norm_hessian_vector_product(run):
    trace = run(NUCLEAR)
    assert trace["error"] is None, trace["error"]
    assert trace["stdout"] == ("tensor(5.8310, grad_fn=<SumBackward1>) tensor([[ 0.0757,  0.0454],\n"
                               "        [ 0.0454, -0.0757]])\n")  # PyTorch 2.13's printout
    assert "svdvals" in trace["ops"] and "svd_u" in trace["ops"]
