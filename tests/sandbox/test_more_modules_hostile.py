"""nn.PixelShuffle / PixelUnshuffle, AdaptiveMaxPool1d / 2d, Softmax2d, MarginRankingLoss, TripletMarginLoss,
GaussianNLLLoss, Bilinear and RReLU in the sandbox: a program per module prints what PyTorch prints; huge factors and
output sizes are refused on their line before anything is allocated, zero or negative sizes and wrong types raise
PyTorch's errors, and the modules' private attributes stay refused. (A pixel shuffle never outgrows its input: a huge
factor meets PyTorch's own checks first.)"""
from __future__ import annotations

import pytest
from sandbox_testing import CLASSIC_LIMITS, err, leaks, same_as_cpython

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

PROGRAMS = {
    "pixel_shuffle": """torch.manual_seed(0)
up = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.PixelShuffle(2))
x = torch.randn(1, 1, 3, 3)
y = up(x)
y.sum().backward()
print(up, y.shape, y.grad_fn.name(), up[0].bias.grad)
down = nn.PixelUnshuffle(2)
print(down, down(y).shape, torch.equal(F.pixel_shuffle(down(y), 2), y), F.pixel_unshuffle(torch.arange(16).view(1, 4, 4), 2))
""",
    "adaptive_max_pool": """x = torch.tensor([[[1., 5., 2., 8., 3.], [4., 4., 0., -1., 9.]]], requires_grad=True)
pool = nn.AdaptiveMaxPool1d(3, return_indices=True)
out, idx = pool(x)
out.sum().backward()
print(pool, out, idx, x.grad, out.grad_fn.name())
img = torch.arange(20.).view(1, 4, 5)
print(nn.AdaptiveMaxPool2d((2, None))(img), F.adaptive_max_pool2d(img, 3, return_indices=True)[1])
print(nn.AdaptiveMaxPool2d(1)(torch.tensor([[[2., 7.], [7., 1.]]])), F.adaptive_max_pool2d(img, (6, 7)).shape)
""",
    "softmax2d": """x = torch.tensor([[[1., 2.], [3., 4.]], [[0., 2.], [1., -1.]]], requires_grad=True)
y = nn.Softmax2d()(x)
print(nn.Softmax2d(), y, y.sum(0), y.grad_fn.name())
""",
    "losses": """torch.manual_seed(0)
a, b = torch.randn(4, requires_grad=True), torch.randn(4)
rank = nn.MarginRankingLoss(margin=0.2)
loss = rank(a, b, torch.tensor([1., -1., 1., -1.]))
loss.backward()
print(rank, loss, a.grad, F.margin_ranking_loss(a, b, torch.ones(4), reduction='none'))
anchor, pos, neg = torch.randn(3, 5, requires_grad=True), torch.randn(3, 5), torch.randn(3, 5)
trip = nn.TripletMarginLoss(margin=0.5, p=1, swap=True)
t = trip(anchor, pos, neg)
t.backward()
print(trip, t, t.grad_fn.name(), F.triplet_margin_loss(anchor, pos, neg, reduction='none'))
mean, var = torch.randn(4, 2, requires_grad=True), torch.rand(4, 1) + 0.1
g = nn.GaussianNLLLoss(full=True)(mean, torch.zeros(4, 2), var)
g.backward()
print(g, mean.grad, F.gaussian_nll_loss(mean, torch.zeros(4, 2), 0.5, reduction='sum'))
""",
    "bilinear": """torch.manual_seed(3)
bil = nn.Bilinear(3, 2, 4)
x1, x2 = torch.randn(5, 3), torch.randn(5, 2)
y = bil(x1, x2)
y.pow(2).mean().backward()
print(bil, bil.weight.shape, y, y.grad_fn.name(), bil.bias.grad)
print(F.bilinear(x1[0], x2[0], bil.weight), nn.Bilinear(2, 2, 1, bias=False).bias)
""",
    "rrelu": """torch.manual_seed(1)
act = nn.RReLU()
x = torch.tensor([-2., -1., 0.5, -3., 4.], requires_grad=True)
y = act(x)
y.sum().backward()
print(act, y, x.grad, y.grad_fn.name())
act.eval()
print(act(x), F.rrelu(torch.tensor([-1., 1.]), 0.1, 0.3, training=True), torch.rand(2))
z = torch.tensor([-1., 2.]) * 1
print(F.rrelu_(z, training=True), z, nn.RReLU(0.2, 0.4, inplace=True))
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_program_prints_what_pytorch_prints(name):
    pytest.importorskip("torch")
    same_as_cpython(HEAD + PROGRAMS[name])


@pytest.mark.parametrize("call", [
    "F.adaptive_max_pool2d(torch.ones(1, 1, 2, 2), 10 ** 5)",
    "nn.AdaptiveMaxPool2d((10 ** 4, 10 ** 4))(torch.ones(1, 2, 2))",
    "F.adaptive_max_pool1d(torch.ones(4, 3), 10 ** 9)",
    "nn.Bilinear(10 ** 4, 10 ** 4, 10 ** 4)",
    "F.bilinear(torch.ones(10 ** 5, 1), torch.ones(10 ** 5, 1), torch.ones(10 ** 3, 1, 1))",
    "nn.Bilinear(1, 1, 10 ** 3)(torch.ones(10 ** 4, 1), torch.ones(10 ** 4, 1))",
])
def test_huge_sizes_are_refused_on_their_line_before_allocating(call):
    e = err(HEAD + f"y = {call}\n", limits=CLASSIC_LIMITS)
    assert e["type"] == "LimitExceeded" and e["line"] == 4, e
    assert "max_tensor_elements" in e["message"] or "max_live_elements" in e["message"], e


@pytest.mark.parametrize("call", [
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), 10 ** 12)",  # (upscale_factor)^2 overflows
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), 10 ** 5)",
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), 2 ** 70)",
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), 0)",
    "nn.PixelShuffle(-2)(torch.ones(1, 4, 2, 2))",
    "F.pixel_unshuffle(torch.ones(1, 1, 4, 4), 10 ** 9)",
    "nn.PixelUnshuffle(0)(torch.ones(1, 1, 4, 4))",
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), 2.0)",
    "F.pixel_shuffle(torch.ones(1, 4, 2, 2), '2')",
    "F.pixel_shuffle([[1.0]], 2)",
    "F.adaptive_max_pool2d(torch.ones(1, 2, 2), -3)",
    "F.adaptive_max_pool2d(torch.ones(1, 2, 2), (2, 2.5))",
    "F.adaptive_max_pool2d(torch.ones(1, 2, 2), 'ab')",
    "F.adaptive_max_pool2d(torch.ones(2, 2), 1)",
    "F.adaptive_max_pool2d(torch.ones(1, 0, 2), 1)",
    "F.adaptive_max_pool1d(torch.ones(2, 3), (1, 2))",
    "F.adaptive_max_pool1d(torch.ones(2, 3), None)",
    "F.adaptive_max_pool1d(torch.ones(2, 3, dtype=torch.long), 2)",
    "nn.Softmax2d()(torch.ones(5))",
    "F.margin_ranking_loss(torch.ones(3), torch.ones(3), torch.ones(4))",
    "F.margin_ranking_loss(torch.ones(3), torch.ones(3), torch.ones(3), margin=[1])",
    "nn.TripletMarginLoss(margin=0)",
    "F.triplet_margin_loss(torch.ones(2, 3), torch.ones(3), torch.ones(2, 3))",
    "F.triplet_margin_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), swap='yes')",
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3, 2))",
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), -torch.ones(2, 3))",
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), 1)",
    "nn.GaussianNLLLoss(reduction='avg')(torch.ones(2), torch.ones(2), torch.ones(2))",
    "nn.GaussianNLLLoss(True)",
    "nn.Bilinear(0, 2, 2)",
    "nn.Bilinear(2, -2, 2)",
    "nn.Bilinear(2.5, 2, 2)",
    "nn.Bilinear(2, 3, 4)(torch.ones(5, 2), torch.ones(5, 2))",
    "F.bilinear(torch.ones(2, 3), torch.ones(3, 2), torch.ones(4, 3, 2))",
    "F.bilinear(torch.ones(2, 3), torch.ones(2, 2), torch.ones(4, 3, 2, dtype=torch.float64))",
    "nn.RReLU(0.5, 0.1)(torch.ones(2))",
    "F.rrelu(torch.ones(2), lower='a')",
    "F.rrelu(torch.ones(2, dtype=torch.long), training=True)",
    "F.rrelu(torch.ones(2, requires_grad=True), training=True, inplace=True)",
])
def test_wrong_sizes_and_types_raise_pytorchs_errors_on_their_line(call):
    pytest.importorskip("torch")
    same_as_cpython(HEAD + f"y = {call}\n")
    e = err(HEAD + f"y = {call}\n")
    assert e["line"] == 4 and not leaks(e["message"]), e


@pytest.mark.parametrize("owner", ["nn.PixelShuffle(2)", "nn.AdaptiveMaxPool2d(2)", "nn.Softmax2d()",
                                   "nn.MarginRankingLoss()", "nn.TripletMarginLoss()", "nn.GaussianNLLLoss()",
                                   "nn.Bilinear(2, 2, 2)", "nn.RReLU()"])
@pytest.mark.parametrize("attribute", ["_parameters", "_modules", "__dict__", "forward.__globals__",
                                       "__class__.__mro__", "reset_parameters", "_buffers"])
def test_private_attributes_stay_refused(owner, attribute):
    e = err(HEAD + f"m = {owner}\ny = m.{attribute}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation") and e["line"] == 5, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("expr", ["F.pixel_shuffle.__globals__", "F.bilinear.__code__", "F._more", "F.rrelu.__wrapped__",
                                  "F.adaptive_max_pool2d.__module__.__class__"])
def test_the_functions_open_nothing_else(expr):
    e = err(HEAD + f"y = {expr}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation"), e
    assert not leaks(e["message"])


def test_the_modules_print_their_torch_names():
    pytest.importorskip("torch")
    same_as_cpython(HEAD + "for m in (nn.PixelShuffle(2), nn.PixelUnshuffle(2), nn.AdaptiveMaxPool1d(2), "
                    "nn.AdaptiveMaxPool2d(2), nn.Softmax2d(), nn.MarginRankingLoss(), nn.TripletMarginLoss(), "
                    "nn.GaussianNLLLoss(), nn.Bilinear(1, 1, 1), nn.RReLU()):\n    print(type(m), m)\n")
