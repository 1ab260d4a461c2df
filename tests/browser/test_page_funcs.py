"""The page draws the tensor functions tutorials use (issue 9 section 5): their nodes, labels with parameters, and
backward through them, with no page error. Screenshot: test-artifacts/funcs_graph.png."""
from test_page import open_app, pause, run_source

PROGRAM = """import torch
import torch.nn.functional as F
x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 5.0, -4.0]], requires_grad=True)
idx = torch.tensor([[2, 0], [1, 1]])
s = x.sort(1, descending=True).values
g = x.gather(1, idx)
c = x.cumsum(1).clamp_min(0.5)
p = F.pad(x[None], (2, 1), mode="reflect")
e = torch.einsum("ij,ij->i", x, x)
loss = s.sum() + g.sum() + c.sum() + p.sum() + e.logsumexp(0) + x.norm(1)
loss.backward()
"""


def test_tensor_functions_draw_and_step_back(page, shot):
    open_app(page)
    run_source(page, PROGRAM)
    pause(page)
    page.keyboard.press("End")
    labels = page.evaluate("[...document.querySelectorAll('g[data-node-id] text')].map(t => t.textContent)")
    text = " ".join(labels)
    for expected in ("sort(dim=1, descending=True)", "gather(1)", "cumsum(1)", "clamp_min(0.5)", "pad(2, 1)", "matmul"):
        assert expected in text, (expected, text[:600])
    shot(page, "funcs_graph")
    page.errors.check()
