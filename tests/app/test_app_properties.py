"""Property: random valid expressions give gradients through the API that match finite differences."""

from __future__ import annotations

import math

from flowgrad_testing import strict_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

UNARY = {
    "sin": (lambda s: f"torch.sin({s})", math.sin),
    "cos": (lambda s: f"torch.cos({s})", math.cos),
    "tanh": (lambda s: f"torch.tanh({s})", math.tanh),
    "sigmoid": (lambda s: f"torch.sigmoid({s})", lambda x: 1 / (1 + math.exp(-x))),
    "square": (lambda s: f"({s}) ** 2", lambda x: x * x),
    "exp_tanh": (lambda s: f"torch.exp(torch.tanh({s}))", lambda x: math.exp(math.tanh(x))),
    "neg": (lambda s: f"-({s})", lambda x: -x),
}
BINARY = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": None,  # a / (1 + b**2): never divides by ~0
}


def exprs():
    leaf = st.sampled_from(["a", "b", "c"]).map(lambda v: (v, lambda env, v=v: env[v]))

    def extend(children):
        unary = st.tuples(st.sampled_from(sorted(UNARY)), children).map(
            lambda t: (UNARY[t[0]][0](t[1][0]), lambda env, f=UNARY[t[0]][1], g=t[1][1]: f(g(env))))

        def binop(t):
            op, (sa, fa), (sb, fb) = t
            if op == "/":
                return (f"({sa}) / (1 + ({sb}) ** 2)", lambda env: fa(env) / (1 + fb(env) ** 2))
            return (f"({sa}) {op} ({sb})", lambda env, f=BINARY[op]: f(fa(env), fb(env)))

        binary = st.tuples(st.sampled_from(sorted(BINARY)), children, children).map(binop)
        return unary | binary

    return st.recursive(leaf, extend, max_leaves=6)


values = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False).map(lambda v: round(v, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expr=exprs(), a=values, b=values, c=values)
def test_gradients_match_finite_differences(client, expr, a, b, c):
    text, f = expr
    env = {"a": a, "b": b, "c": c}
    src = (f"import torch\na = torch.tensor({a!r}, dtype=torch.float64, requires_grad=True)\n"
           f"b = torch.tensor({b!r}, dtype=torch.float64, requires_grad=True)\n"
           f"c = torch.tensor({c!r}, dtype=torch.float64, requires_grad=True)\n"
           f"out = ({text}) + a * 0 + b * 0 + c * 0\nout.backward()\n")
    r = client.post("/api/run", json={"source": src})
    assert r.status_code == 200
    d = strict_json(r.text)
    assert d["error"] is None, (src, d["error"])
    h = 1e-6
    for name in "abc":
        up = dict(env, **{name: env[name] + h})
        dn = dict(env, **{name: env[name] - h})
        fd = (f(up) - f(dn)) / (2 * h)
        got = d["variables"][name]["grad"]
        assert isinstance(got, float), (src, got)
        assert math.isclose(got, fd, rel_tol=1e-4, abs_tol=1e-5), (src, name, got, fd)
    assert math.isclose(d["variables"]["out"]["value"], f(env), rel_tol=1e-9, abs_tol=1e-9)
