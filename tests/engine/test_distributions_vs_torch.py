"""torch.distributions against PyTorch 2.13 (engine/distributions.py): seeded samples bit for bit (the same generator
calls), log_prob / entropy / cdf / kl_divergence values, gradients through rsample and log_prob, PyTorch's shapes, reprs
and validation errors; gradients also against finite differences (float64)."""
import numpy as np
import pytest

import engine as E
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")


def _both(fn):
    E.manual_seed(0)
    torch.manual_seed(0)
    return fn(E), fn(torch)


def _value(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


EXACT = {
    "normal sample": lambda T: T.distributions.Normal(T.tensor([0., 1.]), T.tensor([1., 2.])).sample((3,)),
    "normal rsample": lambda T: T.distributions.Normal(0.5, 2.0).rsample((4,)),
    "normal log_prob": lambda T: T.distributions.Normal(T.tensor([0., 1.]), T.tensor([1., 2.])).log_prob(T.tensor([0.3, -1.])),
    "normal entropy": lambda T: T.distributions.Normal(T.tensor([0., 1.]), T.tensor([1., 2.])).entropy(),
    "normal cdf": lambda T: T.distributions.Normal(0., 1.).cdf(T.tensor([0.3, -1.])),
    "categorical sample": lambda T: T.distributions.Categorical(probs=T.tensor([0.2, 0.5, 0.3])).sample((6,)),
    "categorical batch sample": lambda T: T.distributions.Categorical(logits=T.tensor([[0.2, 0.5, 0.3], [1., 2., 3.]])).sample((2,)),
    "categorical entropy": lambda T: T.distributions.Categorical(probs=T.tensor([0.2, 0.5, 0.3])).entropy(),
    "categorical logits": lambda T: T.distributions.Categorical(probs=T.tensor([0.2, 0.5, 0.3])).logits,
    "bernoulli sample": lambda T: T.distributions.Bernoulli(T.tensor([0.2, 0.7])).sample((3,)),
    "bernoulli log_prob": lambda T: T.distributions.Bernoulli(logits=T.tensor([0.2, -0.7])).log_prob(T.tensor([1., 0.])),
    "bernoulli entropy": lambda T: T.distributions.Bernoulli(T.tensor([0.2, 0.7])).entropy(),
    "uniform rsample": lambda T: T.distributions.Uniform(T.tensor([0., 1.]), T.tensor([1., 3.])).rsample((2,)),
    "uniform log_prob": lambda T: T.distributions.Uniform(0., 2.).log_prob(T.tensor([0.5, 1.5])),
    "kl normal": lambda T: T.distributions.kl_divergence(T.distributions.Normal(T.tensor([0., 1.]), T.tensor([1., 2.])),
                                                         T.distributions.Normal(0.5, 1.5)),
    "kl categorical": lambda T: T.distributions.kl_divergence(T.distributions.Categorical(probs=T.tensor([0.2, 0.8])),
                                                              T.distributions.Categorical(probs=T.tensor([0.5, 0.5]))),
    "reprs": lambda T: repr(T.distributions.Normal(0., 1.)) + repr(T.distributions.Normal(T.zeros(2), T.ones(2)))
    + repr(T.distributions.Categorical(logits=T.zeros(2, 3))) + repr(T.distributions.Bernoulli(T.tensor([0.3]))),
    "shapes": lambda T: str((T.distributions.Categorical(logits=T.zeros(2, 3)).batch_shape,
                             T.distributions.Normal(T.zeros(2), 1.).event_shape, T.distributions.Normal(0., 1.).sample().shape)),
}

# NOTE: these pass through exp / log (logsumexp, softmax, softplus), whose float32 results PyTorch's build computes
# otherwise than numpy in the last bit on this host (tests/sandbox/test_long_programs.py): compared to a few ulps
# (the Bernoulli KL subtracts two softplus values)
CLOSE = {
    "categorical log_prob": lambda T: T.distributions.Categorical(logits=T.tensor([[0.2, 0.5, 0.3], [1., 2., 3.]])).log_prob(T.tensor([2, 0])),
    "categorical probs": lambda T: T.distributions.Categorical(logits=T.tensor([0.2, 0.5, 0.3])).probs,
    "kl bernoulli": lambda T: T.distributions.kl_divergence(T.distributions.Bernoulli(T.tensor([0.2, 0.7])),
                                                            T.distributions.Bernoulli(T.tensor([0.4, 0.4]))),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_seeded_values_are_pytorchs_bit_for_bit(name):
    ours, theirs = _both(EXACT[name])
    if isinstance(ours, str):
        assert ours == theirs
    else:
        assert np.array_equal(_value(ours), _value(theirs)), (ours, theirs)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_values_through_exp_and_log_are_pytorchs_to_the_last_bit(name):
    ours, theirs = _both(CLOSE[name])
    np.testing.assert_allclose(_value(ours), _value(theirs), rtol=1e-6, atol=0)


def test_gradients_through_rsample_log_prob_and_entropy_are_pytorchs():
    def run(T):
        mu = T.tensor([0.5, -0.2], requires_grad=True)
        s = T.tensor([1.0, 0.7], requires_grad=True)
        d = T.distributions.Normal(mu, s)
        z = d.rsample((3,))
        (d.log_prob(z).sum() + d.entropy().sum()).backward()
        return T.cat([mu.grad, s.grad])
    ours, theirs = _both(run)
    assert np.array_equal(_value(ours), _value(theirs))


def test_log_probabilities_match_finite_differences():
    mu = E.tensor([0.5, -0.2], dtype=E.float64, requires_grad=True)
    s = E.tensor([1.0, 0.7], dtype=E.float64, requires_grad=True)
    x = E.tensor([0.1, 0.4], dtype=E.float64)
    assert gradcheck(lambda m, sd: E.distributions.Normal(m, sd).log_prob(x), (mu, s))
    logits = E.tensor([[0.1, 0.4, -0.3]], dtype=E.float64, requires_grad=True)
    assert gradcheck(lambda lg: E.distributions.Categorical(logits=lg).log_prob(E.tensor([2])), (logits,))
    assert gradcheck(lambda lg: E.distributions.Categorical(logits=lg).entropy(), (logits,))
    p = E.tensor([0.3, 0.6], dtype=E.float64, requires_grad=True)
    assert gradcheck(lambda q: E.distributions.Bernoulli(q).log_prob(E.tensor([1.0, 0.0], dtype=E.float64)), (p,))


@pytest.mark.parametrize("make", [
    lambda T: T.distributions.Normal(0., -1.),
    lambda T: T.distributions.Categorical(probs=T.tensor([0.5, 0.5])).log_prob(T.tensor([3])),
    lambda T: T.distributions.Bernoulli(T.tensor([1.5])),
    lambda T: T.distributions.Categorical(),
])
def test_validation_errors_are_pytorchs(make):
    with pytest.raises(ValueError) as ours:
        make(E)
    with pytest.raises(ValueError) as theirs:
        make(torch)
    assert str(ours.value) == str(theirs.value)
