"""Higher-order gradients (create_graph=True), flowgrad vs PyTorch CPU in one run:

    python bench/higher_order.py

(g) a WGAN-GP critic step: MLP 64-128-128-1 on a batch of 64, the gradient penalty through
    autograd.grad(create_graph=True), then backward through it.
(h) a Hessian-vector product of a 2-32-32-1 tanh MLP's loss with respect to its weights.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from timing import median_time  # noqa: E402  (bench/ is the script's folder)

import engine  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None




def _params(lib, shapes, rng):
    return [lib.tensor(rng.normal(size=s) * 0.1, dtype=lib.float32, requires_grad=True) for s in shapes]


def wgan_gp_case(lib):
    rng = np.random.default_rng(0)
    F = lib.nn.functional
    ps = _params(lib, [(128, 64), (128,), (128, 128), (128,), (1, 128), (1,)], rng)
    real = lib.tensor(rng.normal(size=(64, 64)), dtype=lib.float32)

    def step():
        x = real.clone().requires_grad_(True)
        h = F.relu(F.linear(x, ps[0], ps[1]))
        h = F.relu(F.linear(h, ps[2], ps[3]))
        out = F.linear(h, ps[4], ps[5])
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        loss = out.mean() + ((((g ** 2).sum(1) + 1e-12).sqrt() - 1) ** 2).mean() * 10
        loss.backward()
        for p in ps:
            p.grad = None

    return step


def hvp_case(lib):
    rng = np.random.default_rng(1)
    F = lib.nn.functional
    ps = _params(lib, [(32, 2), (32,), (32, 32), (32,), (1, 32), (1,)], rng)
    x = lib.tensor(rng.normal(size=(64, 2)), dtype=lib.float32)
    y = lib.tensor(rng.normal(size=(64, 1)), dtype=lib.float32)
    vs = [lib.tensor(rng.normal(size=tuple(p.shape)), dtype=lib.float32) for p in ps]

    def step():
        h = F.linear(F.linear(x, ps[0], ps[1]).tanh(), ps[2], ps[3]).tanh()
        loss = F.mse_loss(F.linear(h, ps[4], ps[5]), y)
        grads = lib.autograd.grad(loss, ps, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(grads, vs))
        lib.autograd.grad(dot, ps)

    return step


def main():
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'absent'}\n")
    print(f"{'case':<52}{'flowgrad':>10}{'PyTorch CPU':>14}{'ratio':>8}")
    for name, make in (("(g) WGAN-GP critic step, MLP 64-128-128-1, batch 64", wgan_gp_case),
                       ("(h) Hessian-vector product, tanh MLP 2-32-32-1", hvp_case)):
        te = median_time(make(engine))
        tt = median_time(make(torch)) if torch else None
        ratio = f"{te / tt:.2f}" if tt else "—"
        print(f"{name:<52}{te * 1e3:>8.2f} ms{(tt * 1e3 if tt else float('nan')):>11.2f} ms{ratio:>8}")


if __name__ == "__main__":
    main()
