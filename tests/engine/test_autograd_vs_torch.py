"""Issue 9 §2 autograd features against the installed PyTorch: torch.autograd.Function, tensor and module hooks,
autograd.grad, backward(gradient=, inputs=), .data and the grad-mode switches. Each scenario runs the same code on
both libraries and compares a transcript: values, gradients, grad_fn names, reprs (addresses masked), hook call
order and error messages."""
import re

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")


def _text(x):
    if isinstance(x, (engine.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], np.asarray(x.detach().tolist()).round(5).tolist(),
                x.requires_grad, None if x.grad_fn is None else type(x.grad_fn).__name__)
    if isinstance(x, (list, tuple)):
        return [_text(v) for v in x]
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return re.sub(r"0x[0-9a-f]+", "0x", repr(x)).replace("__main__.", "")


def _both(scenario):
    """Run scenario(lib, log) on engine and torch; errors are logged as (type, message) and end the scenario."""
    out = []
    for lib in (engine, torch):
        log = []
        try:
            scenario(lib, lambda *xs, log=log: log.append(tuple(_text(x) for x in xs)))
        except Exception as e:  # noqa: BLE001 — the error itself is what is compared
            log.append((type(e).__name__, str(e)))
        out.append(log)
    assert out[0] == out[1]
    return out[0]


def _fn(lib, forward, backward, name="Fn"):
    return type(name, (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


# ---------------------------------------------------------------- torch.autograd.Function

def test_function_values_grads_names_and_ctx():
    def fwd(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x ** 2 * k

    def bwd(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x * ctx.k, None

    def scenario(lib, log):
        Fn = _fn(lib, fwd, bwd)
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = Fn.apply(x, 3.0)
        log(y, type(y.grad_fn).__name__, y.grad_fn.name(), y.grad_fn, repr(y), len(y.grad_fn.next_functions))
        y.sum().backward()
        log(x.grad)
        log(y.grad_fn.needs_input_grad if hasattr(y.grad_fn, "needs_input_grad") else None)

    _both(scenario)


def test_function_composes_with_ops_and_two_outputs():
    def fwd(ctx, x):
        return x * 2, x.sum()

    def bwd(ctx, g1, g2):
        return g1 * 2 + g2

    def scenario(lib, log):
        Fn = _fn(lib, fwd, bwd, "Two")
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a, b = Fn.apply(x)
        log(a, b, a.grad_fn is b.grad_fn)
        (a * b).sum().backward()
        log(x.grad)
        x.grad = None
        a, b = Fn.apply(x)
        a.sum().backward()  # the second output's gradient is materialized as zeros
        log(x.grad)

    _both(scenario)


def test_function_materialize_and_non_differentiable():
    seen = []

    def fwd(ctx, x):
        ctx.set_materialize_grads(False)
        idx = (x > 0).float()
        ctx.mark_non_differentiable(idx)
        return x * 3, idx

    def bwd(ctx, g, gidx):
        seen.append(gidx is None)
        return g * 3

    def scenario(lib, log):
        seen.clear()
        Fn = _fn(lib, fwd, bwd, "Mark")
        x = lib.tensor([1.0, -1.0], requires_grad=True)
        y, idx = Fn.apply(x)
        log(y, idx, idx.requires_grad)
        y.sum().backward()
        log(x.grad, list(seen))

    _both(scenario)


def test_function_needs_input_grad_no_grad_and_plain_inputs():
    got = []

    def fwd(ctx, x, w):
        got.append(ctx.needs_input_grad)
        return x * w

    def bwd(ctx, g):
        return g, g

    def scenario(lib, log):
        got.clear()
        Fn = _fn(lib, fwd, bwd, "Mul")
        x = lib.ones(2)
        w = lib.ones(2, requires_grad=True)
        y = Fn.apply(x, w)
        y.sum().backward()
        log(w.grad, x.grad, list(got))
        with lib.no_grad():
            z = Fn.apply(x, w)
        log(z)
        log(Fn.apply(x, x))

    _both(scenario)


@pytest.mark.parametrize("result", ["too_few", "too_many", "extra_none", "int", "str", "shape", "bigger",
                                    "non_tensor_input"])
def test_function_backward_errors_as_torch_words_them(result):
    def fwd(ctx, x, k):
        return x * k

    def bwd(ctx, g):
        lib = engine if isinstance(g, engine.Tensor) else torch
        return {"too_few": lambda: g, "too_many": lambda: (g, g, g), "extra_none": lambda: (g, None, None),
                "int": lambda: (3, None), "str": lambda: ("s", None), "shape": lambda: (g[0], None),
                "bigger": lambda: (lib.ones(4, 2, 3), None), "non_tensor_input": lambda: (g, g)}[result]()

    def scenario(lib, log):
        Fn = _fn(lib, fwd, bwd, "Bad")
        x = lib.ones(2, 3, requires_grad=True)
        Fn.apply(x, 2).sum().backward()
        log(x.grad)

    _both(scenario)


def test_function_gradient_dtype_cast_and_unneeded_gradients_unchecked():
    def scenario(lib, log):
        Fn = _fn(lib, lambda ctx, x, y: x * y,
                 lambda ctx, g: (lib.ones(2, dtype=lib.int64), lib.ones(5)), "Cast")  # y needs no gradient
        x = lib.ones(2, requires_grad=True)
        Fn.apply(x, lib.ones(2)).sum().backward()
        log(x.grad)
        Dbl = _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g.double(), "Dbl")
        Dbl.apply(x).sum().backward()
        log(x.grad)

    _both(scenario)


def test_saved_tensors_freed_and_save_for_backward_type():
    def fwd(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    def bwd(ctx, g):
        return g * 2

    def bad(ctx, x):
        ctx.save_for_backward(x, 3)
        return x

    def scenario(lib, log):
        Fn = _fn(lib, fwd, bwd, "Save")
        x = lib.ones(2, requires_grad=True)
        y = Fn.apply(x)
        y.sum().backward()
        y.sum().backward()  # backward reads no saved tensor: allowed, as in torch
        log(x.grad)
        _fn(lib, bad, bwd, "Bad").apply(x)

    _both(scenario)


def test_saved_tensors_after_backward_raises():
    def scenario(lib, log):
        Fn = _fn(lib, lambda ctx, x: (ctx.save_for_backward(x), x * 2)[1], lambda ctx, g: g * 2, "S")
        x = lib.ones(2, requires_grad=True)
        y = Fn.apply(x)
        y.sum().backward()
        log(y.grad_fn.saved_tensors)

    _both(scenario)


def test_function_with_setup_context():
    def scenario(lib, log):
        Fn = type("Ctx2", (lib.autograd.Function,), {
            "forward": staticmethod(lambda x, k: x * k),
            "setup_context": staticmethod(lambda ctx, inputs, output: setattr(ctx, "k", inputs[1])),
            "backward": staticmethod(lambda ctx, g: (g * ctx.k, None))})
        x = lib.ones(2, requires_grad=True)
        y = Fn.apply(x, 4.0)
        y.sum().backward()
        log(y, x.grad)

    _both(scenario)


# ---------------------------------------------------------------- tensor hooks

def test_hook_order_replacement_retain_grad_and_remove():
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        h = x.register_hook(lambda g: log("leaf", g))
        y = x * 2
        y.register_hook(lambda g: log("y1", g))
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        z = y.sum()
        z.register_hook(lambda g: log("z", g))
        z.backward()
        log(x.grad, y.grad, h)
        h.remove()
        h.remove()
        (x * 3).sum().backward()
        log(x.grad)

    _both(scenario)


def test_hooks_see_the_summed_gradient_of_a_fan_in_and_run_every_backward():
    def scenario(lib, log):
        x = lib.tensor([1.0, -1.0], requires_grad=True)
        x.register_hook(lambda g: log("x", g))
        y = x * 3
        y.register_hook(lambda g: log("y", g))
        z = (y * y + y.exp() + x).sum()
        z.backward(retain_graph=True)
        z.backward()
        log(x.grad)

    _both(scenario)


@pytest.mark.parametrize("ret", ["int", "shape", "dtype"])
def test_hook_wrong_results(ret):
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        y = x * 2

        def myhook(g):
            return {"int": 3, "shape": lib.ones(3), "dtype": lib.ones(2, dtype=lib.float64)}[ret]

        y.register_hook(myhook)
        y.sum().backward()

    _both(scenario)


def test_hook_errors_and_post_accumulate():
    def scenario(lib, log):
        try:
            lib.ones(2).register_hook(print)
        except RuntimeError as e:
            log(str(e))
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 100)
        x.register_post_accumulate_grad_hook(lambda t: log("post", t.grad))
        (x * 3).sum().backward()
        log(x.grad)
        try:
            (x * 3).register_post_accumulate_grad_hook(print)
        except RuntimeError as e:
            log(str(e))
        g = x.grad
        x2 = x.detach().requires_grad_()
        x2.register_hook(lambda gr: gr.mul_(2))  # an in-place change in a hook counts
        (x2 * 1).sum().backward()
        log(x2.grad, g)

    _both(scenario)


def test_hooks_with_autograd_grad_and_backward_inputs():
    def scenario(lib, log):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        y = x * 2
        y.register_hook(lambda g: g * 100)
        log(lib.autograd.grad(y.sum(), [x], retain_graph=True))
        log(lib.autograd.grad(y.sum(), [y], retain_graph=True))
        (y * 1).sum().backward(inputs=[y])
        log(y.grad, x.grad)

    _both(scenario)


def test_hook_on_function_output_and_retain_grad_of_second_output():
    def scenario(lib, log):
        Fn = _fn(lib, lambda ctx, x: (x * 2, x * 3), lambda ctx, a, b: a + b, "Two")
        x = lib.ones(2, requires_grad=True)
        a, b = Fn.apply(x)
        b.retain_grad()
        b.register_hook(lambda g: g * 5)
        a.register_hook(lambda g: log("a", g))
        (a + b).sum().backward()
        log(x.grad, b.grad, a.grad is None)

    _both(scenario)


# ---------------------------------------------------------------- module hooks

def test_module_hooks():
    def scenario(lib, log):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: log("pre", type(args).__name__, len(args)))
        h2 = m.register_forward_hook(lambda mod, args, out: log("fwd", list(out.shape)))
        h3 = m.register_full_backward_hook(lambda mod, gi, go: log("bwd", gi, go))
        x = lib.ones(4, 3, requires_grad=True)
        y = m(x)
        log(type(y.grad_fn).__name__, type(y.grad_fn.next_functions[0][0]).__name__)
        y.sum().backward()
        log(x.grad)
        h4 = m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
        x.grad = None
        m(x).sum().backward()
        log(x.grad)
        for h in (h1, h2, h3, h4):
            h.remove()
        m.register_forward_hook(lambda mod, a, out: out * 0)
        m.register_forward_pre_hook(lambda mod, a: a[0] * 2)
        log(m(x))

    _both(scenario)


# ---------------------------------------------------------------- autograd.grad, backward, grad mode, .data

def test_autograd_grad_forms():
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        c = lib.tensor(1.0, requires_grad=True)
        o = a * b
        log(lib.autograd.grad(o, [a, b], grad_outputs=lib.ones(2), retain_graph=True))
        log(lib.autograd.grad(o.sum(), [a, c], allow_unused=True, retain_graph=True))
        log(lib.autograd.grad(o.sum(), [a, c], allow_unused=True, materialize_grads=True, retain_graph=True))
        log(lib.autograd.grad([o.sum(), (a ** 2).sum()], [a], retain_graph=True))
        log(lib.autograd.grad([o.sum(), o], a, grad_outputs=[None, lib.tensor([1.0, 10.0])], retain_graph=True))
        log(a.grad, b.grad)
        for call in (lambda: lib.autograd.grad(o.sum(), [a, c], retain_graph=True),
                     lambda: lib.autograd.grad(o, a, retain_graph=True),
                     lambda: lib.autograd.grad(o.sum(), a, grad_outputs=lib.ones(3), retain_graph=True),
                     lambda: lib.autograd.grad(o.sum(), a, allow_unused=False, materialize_grads=True),
                     lambda: lib.autograd.grad(o.sum(), lib.ones(2))):
            try:
                call()
            except (RuntimeError, ValueError) as e:
                log(type(e).__name__, str(e))

    _both(scenario)


def test_backward_gradient_inputs_and_errors():
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor(3.0, requires_grad=True)
        o = a * b
        for call in (lambda: o.backward(), lambda: o.backward(lib.ones(3)),
                     lambda: (a * b).sum().backward(inputs=[])):
            try:
                call()
            except RuntimeError as e:
                log(str(e))
        o.backward(gradient=lib.tensor([1.0, 10.0]), inputs=[b], retain_graph=True)
        log(a.grad, b.grad)
        o.backward(lib.tensor([1.0, 1.0]))
        log(a.grad, b.grad)
        lib.autograd.backward((a * a).sum(), inputs=[a])
        log(a.grad)

    _both(scenario)


def test_grad_mode_switches_and_data():
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        log(repr(lib.set_grad_enabled(False)), lib.is_grad_enabled())
        lib.set_grad_enabled(True)

        @lib.set_grad_enabled(False)
        def f():
            return lib.is_grad_enabled()

        log(f(), lib.is_grad_enabled())
        with lib.set_grad_enabled(False):
            log(lib.is_grad_enabled(), (a * 2).requires_grad)
        with lib.no_grad():
            with lib.enable_grad():
                log((a * 2).grad_fn is not None)
            log(lib.is_grad_enabled())
        d = a.data
        d[0] = 5
        log(a, d.requires_grad, d.is_leaf)
        a.data = lib.zeros(2)
        log(a)
        y = (a * 3).sum()
        y.backward()
        log(a.grad)
        t = lib.ones(2)
        log(t.requires_grad_(), t.requires_grad_(False), t.requires_grad)

    _both(scenario)
