"""torch.optim.LBFGS from sandboxed programs: reachable by every spelling, the neural-style-transfer tutorial's loop
prints PyTorch's losses, and hostile settings (huge iteration and evaluation budgets, huge histories, closures that
raise, return non-tensors, recurse or run no program line, smuggled state) end in PyTorch's error or a limit's,
on a line, quickly: never a hang or a crash of the run."""
from __future__ import annotations

import pytest
from sandbox_testing import err, leaks, make_limits, ok, run, same_as_cpython

NST = '''import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
content_img = torch.rand(1, 3, 16, 16)
style_img = torch.rand(1, 3, 16, 16)


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super(ContentLoss, self).__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
model = nn.Sequential()
content_losses, style_losses = [], []
i = 0
for layer in cnn.children():
    i += 1
    model.add_module("layer_{}".format(i), layer)
    if i == 3:
        target = model(content_img).detach()
        content_loss = ContentLoss(target)
        model.add_module("content_loss_{}".format(i), content_loss)
        content_losses.append(content_loss)
    if i in (1, 3):
        target_feature = model(style_img).detach()
        style_loss = StyleLoss(target_feature)
        model.add_module("style_loss_{}".format(i), style_loss)
        style_losses.append(style_loss)

input_img = content_img.clone()
input_img.requires_grad_(True)
model.eval()
model.requires_grad_(False)
optimizer = optim.LBFGS([input_img]{options})
style_weight, content_weight = 1000000, 1

print("Optimizing..")
run = [0]
while run[0] <= 20:

    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = 0
        content_score = 0
        for sl in style_losses:
            style_score += sl.loss
        for cl in content_losses:
            content_score += cl.loss
        style_score *= style_weight
        content_score *= content_weight
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        if run[0] % 5 == 0:
            print("run {}:".format(run))
            print('Style Loss : {:4f} Content Loss: {:4f}'.format(style_score.item(), content_score.item()))
            print(repr(loss.item()))
            print()
        return style_score + content_score

    optimizer.step(closure)

with torch.no_grad():
    input_img.clamp_(0, 1)
state = optimizer.state_dict()["state"][0]
print(state["func_evals"], state["n_iter"], len(state["old_dirs"]), repr(input_img.sum().item()))
'''


@pytest.mark.parametrize("options", ["", ", line_search_fn='strong_wolfe'", ", history_size=3, max_iter=4"])
def test_the_style_transfer_tutorial_prints_pytorchs_losses(options):
    pytest.importorskip("torch")
    out = same_as_cpython(NST.replace("{options}", options))
    assert out.count("Style Loss") >= 4


ROSENBROCK = '''import torch
w = torch.tensor([-1.5, 2.0], requires_grad=True)
opt = torch.optim.LBFGS([w]{options})

def closure():
    opt.zero_grad()
    loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
    loss.backward()
    return loss

for i in range(4):
    loss = opt.step(closure)
    st = opt.state[w]
    print(repr(loss.item()), w.tolist(), st['func_evals'], st['n_iter'], len(st['old_dirs']), len(st['al']))
sd = opt.state_dict()
print(list(sd['state'][0]), sd['param_groups'])
print(type(sd['state'][0]['t']).__name__, type(sd['state'][0]['H_diag']).__name__, sd['state'][0]['ro'][0].shape)
'''


@pytest.mark.parametrize("options", ["", ", line_search_fn='strong_wolfe'", ", history_size=2", ", max_iter=1",
                                     ", lr=0.5, tolerance_grad=-1.0", ", tolerance_change=1e-3, max_eval=7"])
def test_steps_and_state_print_as_pytorchs(options):
    pytest.importorskip("torch")
    same_as_cpython(ROSENBROCK.format(options=options))


def test_every_spelling_reaches_the_same_class():
    out = ok("import torch\nimport torch.optim as optim\nfrom torch.optim import LBFGS\n"
             "w = torch.ones(2, requires_grad=True)\n"
             "print(LBFGS is torch.optim.LBFGS is optim.LBFGS, type(LBFGS([w])).__name__, isinstance(LBFGS([w]), optim.Optimizer))")
    assert out == "True LBFGS True\n"


HEAD = "import torch\nw = torch.tensor([1.5, -0.5], requires_grad=True)\n"
CLOSURE = ("def closure():\n    opt.zero_grad()\n    loss = ((w - 3) ** 2).sum() + (w ** 4).sum()\n    loss.backward()\n"
           "    return loss\n")
ENDLESS = "tolerance_grad=-1, tolerance_change=-1"  # no tolerance ever ends an iteration loop


@pytest.mark.parametrize("options", [f"max_iter=10**9, {ENDLESS}",
                                     f"max_iter=10**9, max_eval=10**12, {ENDLESS}, line_search_fn='strong_wolfe'",
                                     f"max_iter=float('inf'), {ENDLESS}"])
@pytest.mark.parametrize("budget", [{"max_steps": 5_000, "time_limit_s": 60}, {"time_limit_s": 0.5}])
def test_huge_iteration_budgets_end_at_the_runs_budget_with_a_line(options, budget):
    out = err(HEAD + f"opt = torch.optim.LBFGS([w], {options})\n" + CLOSURE + "opt.step(closure)\n",
              limits=make_limits(**budget))
    assert out["type"] == "LimitExceeded" and 4 <= out["line"] <= 9, out  # (in the closure or at step())
    assert ("max_steps" if "max_steps" in budget else "time_limit_s") in out["message"], out


@pytest.mark.parametrize("closure", ["functools.partial(torch.ones, 1)", "functools.cache(lambda: torch.ones(1))",
                                     "lambda: torch.tensor(2.0)", "float"])
def test_closures_that_run_no_program_line_still_count_as_steps(closure):
    out = err(HEAD + f"import functools\nopt = torch.optim.LBFGS([w], max_iter=10**9, {ENDLESS})\nopt.step({closure})\n",
              limits=make_limits(max_steps=20_000))
    assert out["type"] == "LimitExceeded" and out["line"] == 5 and "max_steps" in out["message"], out


def test_a_history_of_a_billion_is_refused_before_its_list_is_made():
    out = err(HEAD + "opt = torch.optim.LBFGS([w], history_size=10**9)\n" + CLOSURE + "for i in range(100):\n    opt.step(closure)\n")
    assert out["type"] == "LimitExceeded" and out["line"] == 10, out
    assert "history_size = 1,000,000,000" in out["message"] and "max_tensor_elements" in out["message"], out


def test_a_long_history_stays_within_the_live_element_budget():
    source = ("import torch\ntorch.manual_seed(0)\nw = torch.randn(100000, requires_grad=True)\n"
              f"opt = torch.optim.LBFGS([w], history_size=10**5, {ENDLESS})\n" + CLOSURE +
              "for i in range(10**4):\n    opt.step(closure)\n")
    out = err(source, limits=make_limits(max_live_elements=2_000_000, max_tensor_elements=500_000, time_limit_s=30))
    assert out["type"] == "LimitExceeded" and "max_live_elements = 2,000,000" in out["message"], out
    assert out["line"] is not None


def test_optimizers_made_in_a_loop_cannot_pile_up_history_lists():
    # each history list of 3,000,000 items counts for good: the sixth passes max_live_elements (16,000,000)
    out = run(HEAD + CLOSURE + "keep = []\nfor i in range(100):\n"
              f"    opt = torch.optim.LBFGS([w], history_size=3_000_000, max_iter=3, {ENDLESS})\n"
              "    opt.step(closure)\n    keep.append(opt)\n    print(i)\n")
    assert out.stdout == "0\n1\n2\n3\n4\n", out.stdout
    assert out.error["type"] == "LimitExceeded" and "max_live_elements" in out.error["message"], out.error
    assert out.error["line"] == 11, out.error


@pytest.mark.parametrize("program", [
    HEAD + "opt = torch.optim.LBFGS([w])\ndef closure():\n    opt.zero_grad()\n    raise ValueError('diverged')\nopt.step(closure)\n",
    HEAD + "opt = torch.optim.LBFGS([w])\ndef closure():\n    return 1 / 0\nopt.step(closure)\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(lambda: None)\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(lambda: [1.0])\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(lambda: {'loss': 1})\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(lambda: w * 2)\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nprint(opt.step(lambda: '2.5'), opt.step(lambda: 3))\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step()\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(None)\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.step(5)\n",
    HEAD + "opt = torch.optim.LBFGS([w], lr=float('nan'))\n",
    HEAD + "opt = torch.optim.LBFGS([w], lr=-0.5)\n",
    HEAD + "opt = torch.optim.LBFGS([w], lr=torch.ones(2))\n",
    HEAD + "opt = torch.optim.LBFGS([w], max_iter='many')\n",
    HEAD + "opt = torch.optim.LBFGS([w], line_search_fn='bogus')\n" + CLOSURE + "opt.step(closure)\n",
    HEAD + "opt = torch.optim.LBFGS([w], max_eval=0, line_search_fn='strong_wolfe')\n" + CLOSURE + "opt.step(closure)\n",
    HEAD + "opt = torch.optim.LBFGS([{'params': [w]}, {'params': [torch.ones(1, requires_grad=True)]}])\n",
    HEAD + "opt = torch.optim.LBFGS([w])\nopt.add_param_group({'params': [torch.ones(1, requires_grad=True)]})\n"
           "opt.step(lambda: w.sum())\n",
    HEAD + "opt = torch.optim.LBFGS([w], tolerance_grad=-1.0)\n" + CLOSURE +
           "for i in range(3):\n    print(repr(opt.step(closure).item()), opt.state[w]['func_evals'])\n",
])
def test_errors_and_odd_closures_are_pytorchs(program):
    pytest.importorskip("torch")
    same_as_cpython(program)


def test_a_closure_that_steps_again_is_a_recursion_error_on_its_line():
    out = err(HEAD + "opt = torch.optim.LBFGS([w])\ndef closure():\n    opt.step(closure)\n    return w.sum()\nopt.step(closure)\n")
    assert out["type"] == "RecursionError" and out["line"] == 5, out


@pytest.mark.parametrize("reach", ["opt._params", "opt.__dict__", "getattr(opt, '_params')", "opt._numel_cache",
                                   "opt._step_params", "getattr(opt, '__dict__')", "opt.step.__self__"])
def test_private_internals_stay_refused(reach):
    out = err(HEAD + "opt = torch.optim.LBFGS([w])\n" + CLOSURE + f"opt.step(closure)\nprint({reach})\n")
    assert out["type"] in ("AttributeError", "NameError", "TypeError") and out["line"] == 10, out
    assert not leaks(out["message"])


@pytest.mark.parametrize("key,value", [("t", "print"), ("t", "'fast'"), ("d", "torch.ones(5)"), ("d", "[1.0, 2.0]"),
                                       ("t", "opt"), ("old_dirs", "(w, w)"), ("old_dirs", "[print]"),
                                       ("ro", "[None]"), ("prev_flat_grad", "torch.ones(2, 1)"), ("al", "{}"),
                                       ("func_evals", "'0'"), ("n_iter", "None")])
def test_state_cannot_smuggle_objects_into_the_update(key, value):
    out = err(HEAD + "opt = torch.optim.LBFGS([w])\n" + CLOSURE +
              f"opt.step(closure)\nopt.state[w]['{key}'] = {value}\nopt.step(closure)\n")
    assert out["type"] in ("TypeError", "RuntimeError") and out["line"] == 11, out
    assert not leaks(out["message"])


def test_a_smuggled_history_of_a_million_pairs_is_bounded_before_it_is_walked():
    out = err(HEAD + "opt = torch.optim.LBFGS([w])\n" + CLOSURE + "opt.step(closure)\nst = opt.state[w]\n"
              "st['old_dirs'] = [torch.ones(2)] * 10**6\nst['old_stps'] = st['old_dirs']\nst['ro'] = [1.0] * 10**6\n"
              "st['al'] = [None] * 10**6\nopt.step(closure)\n")
    assert out["type"] == "LimitExceeded" and out["line"] == 15 and "two-loop recursion" in out["message"], out


@pytest.mark.parametrize("key,value", [("lr", "'fast'"), ("lr", "[0.1]"), ("max_iter", "print"), ("history_size", "w"),
                                       ("tolerance_change", "None")])
def test_param_group_edits_with_non_numbers_are_type_errors(key, value):
    out = err(HEAD + "opt = torch.optim.LBFGS([w])\n" + CLOSURE + f"opt.param_groups[0]['{key}'] = {value}\nopt.step(closure)\n")
    assert out["type"] == "TypeError" and out["line"] == 10, out


def test_a_closure_that_grows_the_parameter_list_is_refused_at_the_next_step():
    out = err(HEAD + "opt = torch.optim.LBFGS([w], max_iter=2)\ndef closure():\n    w.grad = None\n"
              "    opt.param_groups[0]['params'].append('w')\n    loss = (w ** 2).sum()\n    loss.backward()\n    return loss\n"
              "opt.step(closure)\nopt.step(closure)\n")
    assert out["type"] == "TypeError" and out["line"] == 11 and "optimize Tensors" in out["message"], out
