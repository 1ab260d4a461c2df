"""torch.distributions in a sandboxed program (engine/distributions.py; tests/engine/test_distributions_vs_torch.py checks
the numbers): a REINFORCE loop and a reparameterised sample print what PyTorch prints; sizes a program picks are bounded,
bad arguments raise PyTorch's errors on the program's line, and nothing a distribution holds reaches outside."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

PROGRAM = """import torch
from torch.distributions import Categorical, Normal
import torch.distributions as dist
torch.manual_seed(0)
policy = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(5):
    log_probs, rewards = [], []
    state = torch.randn(4)
    for t in range(6):
        m = Categorical(logits=policy(state))
        action = m.sample()
        log_probs.append(m.log_prob(action))
        rewards.append(1.0 if action.item() == 1 else 0.0)
        state = torch.randn(4)
    returns = torch.tensor([sum(rewards[i:]) for i in range(len(rewards))])
    loss = -(torch.stack(log_probs) * returns).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(episode, sum(rewards), round(loss.item(), 3))
n = Normal(torch.zeros(2), torch.ones(2))
print(n, n.batch_shape, n.sample((2,)), n.mean, n.stddev)
q = dist.Normal(torch.tensor([0.5, -0.5]), torch.tensor([1.0, 2.0]))
print(dist.kl_divergence(n, q), q.entropy(), q.log_prob(torch.tensor([0.0, 0.0])))
mu = torch.zeros(3, requires_grad=True)
z = dist.Normal(mu, 1.0).rsample()
z.sum().backward()
print(mu.grad, dist.Bernoulli(torch.tensor([0.3])).sample((4,)).squeeze(), dist.Uniform(0.0, 1.0).sample((3,)))
print(isinstance(n, dist.Distribution), Categorical(probs=torch.tensor([0.1, 0.9])))
"""


def test_a_policy_gradient_program_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind", [
    ("n.sample((10**9,))", "LimitExceeded"),
    ("n.rsample((10**5, 10**5))", "LimitExceeded"),
    ("dist.Categorical(probs=torch.ones(3)).sample((10**10,))", "LimitExceeded"),
    ("dist.Uniform(0.0, 1.0).sample((10**9,))", "LimitExceeded"),
    ("n.sample('a')", "TypeError"),
    ("n.sample((1.5,))", "TypeError"),
    ("dist.Normal(0.0, -1.0)", "ValueError"),
    ("dist.Normal('a', 1.0)", "ValueError"),
    ("dist.Categorical()", "ValueError"),
    ("dist.Categorical(probs=torch.tensor([0.5, 0.5])).log_prob(torch.tensor([3]))", "ValueError"),
    ("dist.Bernoulli(torch.tensor([1.5]))", "ValueError"),
    ("dist.kl_divergence(n, dist.Bernoulli(torch.tensor([0.5])))", "NotImplementedError"),
    ("n.__dict__", "AttributeError"), ("n._validate_args", "AttributeError"), ("n.sample.__func__", "AttributeError"),
    ("dist.Normal.__init__.__globals__", "AttributeError"), ("n.__class__.__mro__", "AttributeError"),
    ("dist.Categorical(logits=torch.zeros(2)).__getattr__", "AttributeError"), ("n._extended_shape((2,))", "AttributeError"),
])
def test_distributions_are_bounded_and_sealed(line, kind):
    e = err(f"import torch\nimport torch.distributions as dist\nn = dist.Normal(torch.zeros(2), torch.ones(2))\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 4, e
    assert not leaks(e["message"])


def test_the_submodules_programs_import_from():
    pytest.importorskip("torch")
    same_as_cpython("from torch.distributions.normal import Normal\nfrom torch.distributions.kl import kl_divergence\n"
                    "from torch.distributions.categorical import Categorical\nimport torch\n"
                    "print(kl_divergence(Normal(0., 1.), Normal(1., 1.)), torch.distributions.normal.Normal, Categorical,"
                    " torch.distributions.Distribution, type(Normal(0., 1.)))\n")
