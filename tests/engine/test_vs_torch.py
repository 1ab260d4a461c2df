"""The same programs run under real PyTorch and under `engine`: printed text, values, gradients,
grad_fn names and errors must agree. Skipped when torch (the test-only extra) is absent."""
import contextlib
import io
import math
import textwrap

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _init_params(mod):
    """Deterministic parameters, identical under both libraries (their RNGs differ)."""

    def init(model):
        for i, p in enumerate(model.parameters()):
            n = int(np.prod(p.shape))
            vals = np.sin(np.arange(n) * 0.7 + i) * 0.5
            p.data = mod.tensor(vals.reshape(tuple(p.shape)).tolist(), dtype=mod.float32)
        return model

    return init


def run(src, mod):
    out = io.StringIO()
    ns = {"torch": mod, "nn": mod.nn, "F": mod.nn.functional, "optim": mod.optim, "init_params": _init_params(mod),
          "math": math}
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(textwrap.dedent(src), ns)  # test programs written here, never user input
        except Exception as e:  # noqa: BLE001 — the error itself is compared
            error = (type(e).__name__, str(e))
    return ns, out.getvalue(), error


def describe(v, mod):
    if isinstance(v, mod.Tensor):
        return {
            "value": np.asarray(v.detach().numpy(), dtype=np.float64) if v.dtype != mod.bool else v.detach().numpy(),
            "grad": None if v.grad is None else np.asarray(v.grad.numpy(), dtype=np.float64),
            "requires_grad": v.requires_grad, "is_leaf": v.is_leaf,
            "grad_fn": None if v.grad_fn is None else type(v.grad_fn).__name__,
            "dtype": str(v.dtype), "shape": tuple(v.shape), "retains_grad": v.retains_grad,
        }
    if isinstance(v, (int, float, bool, str)):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v):
        return list(v)
    return None


def compare(src, rtol=1e-5, atol=1e-6, compare_stdout=True):
    with warnings_off():
        ns_t, out_t, err_t = run(src, torch)
    ns_e, out_e, err_e = run(src, engine)
    assert err_e == err_t, f"errors differ:\n engine {err_e}\n torch  {err_t}"
    if compare_stdout:
        assert out_e == out_t, f"stdout differs:\n--- engine\n{out_e}\n--- torch\n{out_t}"
    for name, vt in ns_t.items():
        if name.startswith("_") or name in ("torch", "nn", "F", "optim", "init_params", "math"):
            continue
        with warnings_off():
            dt = describe(vt, torch)
        if dt is None:
            continue
        de = describe(ns_e.get(name), engine)
        assert de is not None, f"{name} missing or not a tensor under engine"
        if not isinstance(dt, dict):
            if isinstance(dt, float):
                assert math.isclose(de, dt, rel_tol=1e-5, abs_tol=1e-6), name
            else:
                assert de == dt, name
            continue
        for key in ("requires_grad", "is_leaf", "grad_fn", "dtype", "shape", "retains_grad"):
            assert de[key] == dt[key], f"{name}.{key}: engine {de[key]!r} torch {dt[key]!r}"
        np.testing.assert_allclose(de["value"], dt["value"], rtol=rtol, atol=atol, err_msg=f"{name} value")
        assert (de["grad"] is None) == (dt["grad"] is None), f"{name}.grad None-ness"
        if dt["grad"] is not None:
            np.testing.assert_allclose(de["grad"], dt["grad"], rtol=rtol, atol=atol, err_msg=f"{name} grad")


@contextlib.contextmanager
def warnings_off():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


PROGRAMS = {
    "square_of_sum": """
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        a = x + y
        z = a ** 2
        z.backward()
        print(z)
        print(x.grad, y.grad, a.grad)
        print(z.grad_fn.name(), [type(f).__name__ for f, _ in z.grad_fn.next_functions])
    """,
    "product_plus_log": """
        x = torch.tensor([2.0], requires_grad=True)
        y = torch.tensor([3.0], requires_grad=True)
        z = x * y + torch.log(x)
        z.backward()
        print(z, x.grad, y.grad)
    """,
    "polynomial": """
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x + 3 * x + 1
        y.backward()
        print(y, x.grad)
    """,
    "loop_doubling": """
        x = torch.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(5):
            y = y * 2
        y.backward()
        print(y, x.grad)
    """,
    "branch_on_item": """
        x = torch.tensor(-1.5, requires_grad=True)
        if x.item() > 0:
            y = x * 3
        else:
            y = x ** 2
        y.backward()
        print(y, x.grad)
    """,
    "sum_times_sin": """
        x = torch.tensor(0.5, requires_grad=True)
        y = torch.tensor(1.5, requires_grad=True)
        z = (x + y) * torch.sin(x)
        z.backward()
        print(z, x.grad, y.grad)
    """,
    "retain_grad": """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        out = (h ** 2).sum()
        out.backward()
        print(h.grad, x.grad, h.retains_grad, x.is_leaf, h.is_leaf)
    """,
    "detach": """
        x = torch.tensor(2.0, requires_grad=True)
        y = x * 3
        d = y.detach()
        z = d * x
        z.backward()
        print(d, d.requires_grad, d.grad_fn, x.grad)
    """,
    "no_grad": """
        x = torch.tensor(2.0, requires_grad=True)
        with torch.no_grad():
            y = x * 2
        z = x * 3
        print(y, y.requires_grad, z, torch.is_grad_enabled())
    """,
    "backward_twice_retained": """
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 3
        y.backward(retain_graph=True)
        print(x.grad)
        y.backward()
        print(x.grad)
    """,
    "backward_twice_error": """
        x = torch.tensor(2.0, requires_grad=True)
        y = x * 2
        y.backward()
        y.backward()
    """,
    "backward_twice_add_ok": """
        x = torch.tensor(2.0, requires_grad=True)
        y = x + x
        y.backward()
        y.backward()
        print(x.grad)
    """,
    "accumulation": """
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        for k in range(3):
            loss = (w * (k + 1)).sum()
            loss.backward()
        print(w.grad)
        w.grad.zero_()
        print(w.grad)
    """,
    "non_scalar_backward_error": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.backward()
    """,
    "non_scalar_backward_gradient": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.backward(gradient=torch.tensor([1.0, 0.5]))
        print(x.grad)
    """,
    "backward_without_grad_error": """
        x = torch.tensor(2.0)
        y = x * 2
        y.backward()
    """,
    "leaf_inplace_error": """
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        w += 1
    """,
    "leaf_add_inplace_error": """
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        w.add_(1)
    """,
    "inplace_under_no_grad": """
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.mul_(2)
            w.div_(4)
            w.add_(1)
            w.sub_(0.5)
        w.grad.zero_()
        print(w, w.grad)
        v = torch.zeros(3)
        v.fill_(2.5)
        print(v)
        with torch.no_grad():
            w.copy_(torch.tensor([0.5, 0.25]))
        print(w, v.copy_(torch.tensor([1.0, 2.0, 3.0])))
    """,
    "inplace_nonleaf_rebases": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y += 1
        y.sum().backward()
        print(y, x.grad)
    """,
    "broadcast_bias": """
        X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        c = torch.tensor([[1.0], [2.0]], requires_grad=True)
        out = ((X + b) * c).sum()
        out.backward()
        print(b.grad, c.grad)
    """,
    "reductions_and_views": """
        x = torch.tensor([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]], requires_grad=True)
        s0 = x.sum(0)
        s1 = x.sum(dim=1, keepdim=True)
        m = x.mean()
        m1 = x.mean(1)
        mx = x.max()
        mn = x.min()
        v, i = x.max(dim=1)
        am = x.argmax()
        am1 = x.argmax(dim=0)
        t = x.T
        tt = x.t()
        tr = x.transpose(0, 1)
        p = x.permute(1, 0)
        r = x.reshape(3, 2)
        r2 = x.T.reshape(6)
        f = x.flatten()
        vw = x.view(-1)
        u = x.unsqueeze(0)
        sq = u.squeeze(0)
        sqa = u.squeeze()
        total = (s0.sum() + s1.sum() + m + m1.sum() + mx + mn + v.sum() + t.sum() + tt.sum() + tr.sum() + p.sum()
                 + r.sum() + r2.sum() + f.sum() + vw.sum() + sq.sum() + sqa.sum())
        total.backward()
        print(x.grad, i, am, am1, x.shape, x.size(), x.size(1), x.dim(), x.ndim, x.numel())
    """,
    "indexing": """
        x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
        a = x[0]
        b = x[:, 1]
        c = x[1, 1:]
        d = x[1:]
        e = x[[0, 2]]
        f = x[torch.tensor([2, 2, 0])]
        g = x[0, 2]
        h = x[x > 4]
        k = x[None]
        m = x[..., 0]
        total = a.sum() + b.sum() * 2 + c.sum() * 3 + d.sum() + e.sum() + f.sum() + g + h.sum() + k.sum() + m.sum()
        total.backward()
        print(x.grad)
    """,
    "unary_functions": """
        x = torch.tensor([0.5, -1.0, 2.0, -0.25], requires_grad=True)
        ys = [torch.exp(x), torch.log(x.abs()), torch.sin(x), torch.cos(x), torch.tanh(x), torch.sigmoid(x),
              torch.relu(x), torch.abs(x), torch.sqrt(x.abs()), x.clamp(-0.5, 1.0), x.clamp(min=0), x.pow(3), 2 ** x,
              1 / x, 2 - x, -x, x - 2, x / 2, x.exp().log(), torch.clamp(x, max=0.1)]
        for y in ys:
            print(y)
        total = sum(y.sum() for y in ys)
        total.backward()
        print(x.grad)
    """,
    "softmax_family": """
        z = torch.tensor([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]], requires_grad=True)
        s = torch.softmax(z, dim=1)
        ls = F.log_softmax(z, dim=1)
        s2 = z.softmax(0)
        loss = (s * torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])).sum() - ls.mean() + s2[0, 1]
        loss.backward()
        print(s, ls, z.grad)
    """,
    "manual_cross_entropy": """
        logits = torch.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], requires_grad=True)
        y = torch.tensor([0, 1])
        p = torch.exp(logits) / torch.exp(logits).sum(dim=1, keepdim=True)
        loss = -torch.log(p[torch.arange(2), y]).mean()
        loss.backward()
        print(loss, logits.grad)
    """,
    "losses": """
        x = torch.tensor([[0.2, -1.0, 3.0], [1.5, 0.3, -0.7]], requires_grad=True)
        t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
        ce = F.cross_entropy(x, torch.tensor([2, 0]))
        ce_sum = nn.CrossEntropyLoss(reduction="sum")(x, torch.tensor([1, 1]))
        mse = F.mse_loss(x, t)
        mse_mod = nn.MSELoss()(x, t)
        bce = F.binary_cross_entropy(torch.sigmoid(x), t)
        bce_mod = nn.BCELoss()(torch.sigmoid(x), t)
        bcel = F.binary_cross_entropy_with_logits(x, t)
        bcel_mod = nn.BCEWithLogitsLoss()(x, t)
        nll = F.nll_loss(F.log_softmax(x, dim=1), torch.tensor([0, 2]))
        total = ce + ce_sum + mse + mse_mod + bce + bce_mod + bcel + bcel_mod + nll
        total.backward()
        print(ce, mse, bce, bcel, nll, x.grad)
        print([type(f).__name__ for f, _ in ce.grad_fn.next_functions])
    """,
    "cat_stack_where": """
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, -4.0, 5.0], requires_grad=True)
        c = torch.cat([a, b])
        s = torch.stack([a, a * 2], dim=1)
        w = torch.where(b > 0, b, b * 0.5)
        w2 = torch.where(b > 0, b, 0.0)
        total = (c * c).sum() + s.sum() + w.sum() + w2.sum()
        total.backward()
        print(c, s, w, a.grad, b.grad)
    """,
    "matmul_shapes": """
        A = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        B = torch.tensor([[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]], requires_grad=True)
        v = torch.tensor([1.0, -1.0, 2.0], requires_grad=True)
        u = torch.tensor([0.5, 1.5], requires_grad=True)
        mm = A @ B
        mv = A @ v
        dt = v @ v
        vm = u @ A
        C = torch.stack([A, A * 2])
        bm = C @ B
        total = mm.sum() + mv.sum() + dt + vm.sum() + bm.sum() + torch.matmul(A, B).sum() + A.mm(B).sum()
        total.backward()
        print(mm, mv, dt, vm, A.grad, B.grad, v.grad, u.grad)
    """,
    "matmul_shape_error": """
        torch.tensor([1.0, 2.0]) @ torch.tensor([1.0, 2.0, 3.0])
    """,
    "mm_shape_error": """
        torch.ones(2, 3) @ torch.ones(2, 3)
    """,
    "broadcast_error": """
        torch.ones(2, 3) + torch.ones(4)
    """,
    "sequential_mlp": """
        model = init_params(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
        x = torch.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 0.0], [0.3, 0.3, -0.3, 2.0]])
        y = torch.tensor([[1.0], [0.0], [2.0]])
        out = model(x)
        loss = nn.MSELoss()(out, y)
        loss.backward()
        print(model)
        print(out, loss)
        for name, p in model.named_parameters():
            print(name, p.shape, p.grad.shape)
        w0 = model[0].weight
        g0 = model[0].weight.grad
        print([type(f).__name__ for f, _ in out.grad_fn.next_functions])
    """,
    "module_subclass": """
        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer1 = nn.Linear(3, 4)
                self.act = nn.Tanh()
                self.layer2 = nn.Linear(4, 2)

            def forward(self, x):
                return self.layer2(self.act(self.layer1(x)))

        model = init_params(MLP())
        x = torch.tensor([[1.0, 2.0, 3.0]])
        out = model(x)
        out.sum().backward()
        print(model)
        print(out)
        print([n for n, _ in model.named_parameters()], len(list(model.parameters())), len(list(model.children())))
        single = model(torch.tensor([1.0, 0.0, -1.0]))
        print(single, single.grad_fn.name())
        model.zero_grad()
        print(model.layer1.weight.grad)
        print(model.training, model.eval().training, nn.Linear(3, 4, bias=False))
    """,
    "sgd_momentum_weight_decay": """
        model = init_params(nn.Linear(2, 1))
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
        X = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
        Y = torch.tensor([[1.0], [0.0], [3.0]])
        for step in range(5):
            opt.zero_grad()
            loss = F.mse_loss(model(X), Y)
            loss.backward()
            opt.step()
            print(f"{loss.item():.5f}")
        w = model.weight
        b = model.bias
    """,
    "sgd_nesterov": """
        p = torch.tensor([1.0, -1.0], requires_grad=True)
        opt = optim.SGD([p], lr=0.05, momentum=0.5, nesterov=True)
        for _ in range(4):
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
        print(p)
    """,
    "adam": """
        model = init_params(nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1), nn.Sigmoid()))
        opt = optim.Adam(model.parameters(), lr=0.05, weight_decay=0.001)
        X = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, -1.0]])
        Y = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
        for step in range(6):
            opt.zero_grad()
            loss = nn.BCELoss()(model(X), Y)
            loss.backward()
            opt.step()
            print(f"{loss.item():.5f}")
        w = model[0].weight
    """,
    "manual_linear_regression": """
        X = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
        Y = 2 * X + 1
        w = torch.tensor([[0.5]], requires_grad=True)
        b = torch.tensor([0.0], requires_grad=True)
        for epoch in range(20):
            pred = X @ w + b
            loss = ((pred - Y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.05 * w.grad
                b -= 0.05 * b.grad
                w.grad.zero_()
                b.grad.zero_()
        print(w, b, loss)
    """,
    "creation_and_dtypes": """
        a = torch.zeros(2, 3)
        b = torch.ones((2,))
        c = torch.full((2, 2), 3.0)
        d = torch.eye(3)
        e = torch.arange(5)
        f = torch.arange(0, 1, 0.25)
        g = torch.linspace(0, 1, 5)
        h = torch.tensor([1, 2, 3])
        k = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
        m = torch.zeros_like(k)
        n = torch.ones_like(h)
        q = torch.tensor(True)
        r = e / 2
        s = e * 1.5
        print(a, b, c, d, e, f, g, h, k, m, n, q, r, s)
        print(a.dtype, e.dtype, k.dtype, h.float().dtype, torch.Size([5, 4]), a.shape, type(a.shape).__name__)
        print(isinstance(a, torch.Tensor), isinstance(a.shape, tuple), isinstance(nn.Linear(1, 1), nn.Module))
        print(k.double().dtype, e.long().dtype, h.tolist(), c.tolist(), float(c[0, 0]), int(h[1]), len(h))
        print(f"{a.sum():.3f}", a.sum().item(), h.sum(), h.max(), e.numpy().tolist())
    """,
    "float64_grad": """
        x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
        y = (x.exp() * x.sin()).sum()
        y.backward()
        print(y, x.grad)
    """,
    "requires_grad_rules": """
        x = torch.tensor([1.0, 2.0])
        print(x.requires_grad, x.is_leaf, x.grad_fn)
        x.requires_grad_()
        y = x * 2
        print(x.requires_grad, y.requires_grad, y.is_leaf)
        z = torch.tensor([1, 2])
        z.requires_grad_()
    """,
    "nonleaf_requires_grad_error": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.requires_grad = False
    """,
    "numpy_requires_grad_error": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.numpy()
    """,
    "item_error": """
        torch.tensor([1.0, 2.0]).item()
    """,
    "view_error": """
        torch.ones(2, 3).view(4)
    """,
    "comparisons": """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        print(x > 1.5, x == 2, x <= 2, x != 1, (x > 1) & (x < 3))
        print((x > 1).requires_grad, (x * 2 > 3).sum())
    """,
    "grad_fn_graph": """
        x = torch.tensor(2.0, requires_grad=True)
        w = torch.tensor(3.0, requires_grad=True)
        y = torch.tanh(w * x + 1)
        fn = y.grad_fn
        print(fn.name(), fn.next_functions[0][0].name(), [f.name() if f is not None else None for f, _ in fn.next_functions[0][0].next_functions])
        acc = fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        print(acc.name(), acc.variable is w)
        print((x * 2).grad_fn.next_functions[1], (1 / x).grad_fn.name(), (2 - x).grad_fn.name(), (x ** w).grad_fn.name())
    """,
    "enable_grad_inside_no_grad": """
        x = torch.tensor(1.0, requires_grad=True)
        with torch.no_grad():
            a = x * 2
            with torch.enable_grad():
                b = x * 2
        with torch.inference_mode():
            c = x * 2
        print(a.requires_grad, b.requires_grad, c.requires_grad, torch.is_grad_enabled())
    """,
    "autograd_grad": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor(3.0, requires_grad=True)
        h = x * w
        y = (h ** 2).sum()
        gx, gw, gh = torch.autograd.grad(y, [x, w, h], retain_graph=True)
        print(gx, gw, gh, x.grad)
        torch.autograd.backward(y)
        print(x.grad, w.grad)
    """,
    "parameter_grad_is_plain_tensor": """
        lin = init_params(nn.Linear(2, 1))
        lin(torch.tensor([[1.0, 2.0]])).sum().backward()
        print(lin.weight.grad, type(lin.weight.grad).__name__, lin.bias)
    """,
    "inplace_on_saved_result_error": """
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        y.mul_(2)
        y.sum().backward()
    """,
    "inplace_on_saved_input_error": """
        x = torch.ones(3, requires_grad=True)
        w = torch.ones(3, requires_grad=True)
        y = (x * w).sum()
        with torch.no_grad():
            w -= 1
        y.backward()
    """,
    "inplace_on_unsaved_tensor_is_fine": """
        x = torch.ones(3, requires_grad=True)
        w = torch.ones(3)
        y = (x + w).sum()
        w.add_(1)
        y.backward()
        print(x.grad)
    """,
    "inplace_through_detach_error": """
        x = torch.ones(3, requires_grad=True)
        y = x.exp()
        d = y.detach()
        d.add_(1)
        y.sum().backward()
    """,
    "inplace_through_data_is_fine": """
        x = torch.ones(3, requires_grad=True)
        y = x.exp()
        d = y.data
        d.add_(1)
        y.sum().backward()
        print(x.grad)
    """,
    "optimizer_step_between_backwards": """
        lin = init_params(nn.Linear(3, 2))
        opt = optim.SGD(lin.parameters(), lr=0.1)
        loss = lin(torch.ones(4, 3)).sum()
        loss.backward(retain_graph=True)
        opt.step()
        loss.backward()
        print(lin.weight.grad)
    """,
    "optimizer_step_on_saved_weight_error": """
        model = init_params(nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)))
        opt = optim.SGD(model.parameters(), lr=0.1)
        loss = model(torch.ones(4, 3)).sum()
        loss.backward(retain_graph=True)
        opt.step()
        loss.backward()
    """,
    "empty_tensors_and_their_reductions": """
        a = torch.zeros(0, 3).sum(0)
        b = torch.zeros(0, 4, 5).sum(0)
        c = torch.zeros(2, 0).mean(1)
        d = F.one_hot(torch.zeros(0, dtype=torch.long), 5)
        e = F.one_hot(torch.tensor([[0, 2], [1, 1]]))
        f = torch.zeros(0, 3).view(3, 0)
        print(a, b.shape, c, d.shape, d.dtype, e, f.shape)
    """,
    "factories_take_zero_dim_tensors": """
        a = torch.linspace(torch.tensor(0.0), torch.tensor(1.0), torch.tensor(3))
        b = torch.arange(torch.tensor(3))
        c = torch.full((2,), torch.tensor(2))
        d = torch.eye(torch.tensor(2))
        e = torch.arange(5, 0, -2)
        print(a, b, c, d, e)
    """,
    "one_hot_of_empty_error": """
        F.one_hot(torch.zeros(0, dtype=torch.long))
    """,
    "linspace_tensor_endpoint_error": """
        torch.linspace(torch.zeros(3), 1, 10)
    """,
    "linspace_negative_steps_error": """
        torch.linspace(0, 1, -1)
    """,
    "arange_step_sign_error": """
        torch.arange(10, 0)
    """,
    "arange_infinite_error": """
        torch.arange(0, float("inf"))
    """,
    "eye_negative_error": """
        torch.eye(-1)
    """,
    "full_fill_value_error": """
        torch.full((3,), torch.tensor([2.0]))
    """,
    "linear_vector_weight": """
        a = F.linear(torch.ones(2, 4, 4), torch.arange(4.0))
        b = F.linear(torch.ones(4), torch.arange(4.0), torch.tensor(1.0))
        c = F.linear(torch.ones(3), torch.ones(2, 3))
        print(a, b, c)
    """,
    "linear_zero_dim_error": """
        F.linear(torch.tensor(1.0), torch.ones(3, 1))
    """,
    "linear_vector_weight_with_bias_error": """
        F.linear(torch.ones(2, 4), torch.ones(4), torch.ones(()))
    """,
    "linear_shape_error": """
        F.linear(torch.zeros(4, 2), torch.eye(4))
    """,
    "linear_vector_input_shape_error": """
        F.linear(torch.zeros(2), torch.eye(4))
    """,
    "bool_negation_error": """
        -torch.tensor([True, False])
    """,
    "bool_subtraction_error": """
        torch.tensor([True, False]) - torch.tensor([True, True])
    """,
    "bool_scalar_subtraction_error": """
        torch.tensor([1.0, 2.0]) - True
    """,
    "bool_rsub_error": """
        1 - torch.tensor([True, False])
    """,
    "bool_softmax_error": """
        torch.ones(2, 2).bool().softmax(0)
    """,
    "bool_log_softmax_error": """
        torch.tensor([True, False]).log_softmax(-1)
    """,
    "bool_mse_error": """
        F.mse_loss(torch.tensor([True]), torch.tensor([False]))
    """,
    "bool_operands": """
        b = torch.tensor([True, False])
        x = torch.tensor([1.0, 2.0], dtype=torch.float64)
        print(b.sigmoid(), F.mse_loss(x, b), F.mse_loss(b, x), x * b, ~b)
    """,
    "parameter_repr": """
        p = nn.Parameter(torch.tensor([1.0, 2.0]))
        print(p, p.requires_grad, p.is_leaf, isinstance(p, torch.Tensor))
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_pytorch(name):
    compare(PROGRAMS[name])


def test_linear_default_init_bound():
    engine.manual_seed(0)
    lin = engine.nn.Linear(16, 8)
    w = lin.weight.detach().numpy()
    assert np.abs(w).max() <= 1 / 4 + 1e-6 and np.abs(w).max() > 0.2  # U(±1/√fan_in)
    ref = torch.nn.Linear(16, 8)
    assert lin.weight.shape == tuple(ref.weight.shape) and lin.bias.shape == tuple(ref.bias.shape)
