"""The tensor functions tutorials use (issue 9 section 5) through the server: the trace carries their ops, their
PyTorch node names and their parameters as strict JSON, and backward runs through every one of them."""

PROGRAM = """
import torch
import torch.nn.functional as F
x = torch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, -4.0]], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
idx = torch.tensor([[0, 2], [1, 1]])
v, i = x.sort(1, descending=True)
t = x.topk(2).values
g = x.gather(1, idx)
e = torch.einsum("ij,j->i", x, w)
n = x.norm(float("inf"), dim=1) + x.norm(1)
p = F.pad(x[None], (2, 1), mode="reflect")
s = x.cumprod(1).sum() + x.prod() + x.logsumexp(1).sum() + x.std(1).sum() + x.round(decimals=1).sum()
loss = v.sum() + t.sum() + g.sum() + e.sum() + n.sum() + p.sum() + s + x.masked_fill(x > 2, 0.0).sum()
loss.backward()
"""


def test_tensor_functions_trace_through_the_server(run):
    body = run(PROGRAM)
    assert body.get("error") is None, body.get("error")
    ops = body["ops"]
    for name, node in [("sort", "SortBackward0"), ("topk", "TopkBackward0"), ("gather", "GatherBackward0"),
                       ("bmm", "BmmBackward0"), ("vector_norm", "LinalgVectorNormBackward0"),
                       ("reflection_pad1d", "ReflectionPad1DBackward0"), ("cumprod", "CumprodBackward0"),
                       ("prod", "ProdBackward0"), ("logsumexp", "LogsumexpBackward0"), ("std", "StdBackward0"),
                       ("round_decimals", "RoundBackward1"), ("masked_fill", "MaskedFillBackward0")]:
        assert ops[name]["grad_fn"] == node, name
    assert ops["argsort"]["grad_fn"] is None and ops["topk_indices"]["grad_fn"] is None
    assert body["variables"]["x"]["grad"] is not None and body["variables"]["w"]["grad"] is not None
