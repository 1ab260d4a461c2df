"""Every formula and label is true and reads like the maths (issue 23 §2), and a training pass ends showing
its gradients (§3). Captions are read at the step they describe; screenshots go to /tmp/shots-formulas/."""

from __future__ import annotations

from pathlib import Path

from test_page import open_app, pause, run_source

SHOTS = Path("/tmp/shots-formulas")
ROOT = Path(__file__).resolve().parents[2]


def snap(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def run(page, source):
    open_app(page)
    run_source(page, source)
    pause(page)


def captions(page) -> list[str]:
    """The caption of every step of the open pass."""
    return page.evaluate("() => { const m = window.__fg.model; return m.steps.map((s, i) => m.describeStep(i + 1)); }")


def select(page, name):
    node = page.evaluate("n => window.__fg.model.graph.nodes.find(x => x.name === n).id", name)
    page.evaluate("id => window.__fg.select(id)", node)
    return node


def test_operands_are_parenthesised_by_precedence(page):
    run(page, "import torch\npred = torch.tensor(3.0, requires_grad=True)\ntarget = torch.tensor(1.0)\n"
              "loss = ((pred - target) ** 2)\nloss.backward()\n")
    text = "\n".join(captions(page))
    assert "(pred − target) ** 2" in text, text
    assert "pred − target ** 2" not in text
    page.errors.check()


def test_example_03_wraps_compound_names_and_says_each_equality_once(page):
    run(page, (ROOT / "examples" / "03_polynomial.py").read_text())
    caps = captions(page)
    text = "\n".join(caps)
    assert "∂L/∂(x × x)" in text and "∂L/∂x × x" not in text, text
    assert "∂(x × 3)/∂x" in text or "∂(3 × x)/∂x" in text, text
    for c in caps:
        for part in c.split("; "):
            eqs = [e.strip() for e in part.split(" = ")]
            assert len(eqs) == len(set(eqs)), f"an equality written twice: {part}"
    page.errors.check()


def test_tensor_backward_captions_give_the_local_derivative(page):
    run(page, "import torch\nx = torch.ones(2, 3, requires_grad=True)\nw = torch.full((2, 3), 2.0, requires_grad=True)\n"
              "y = x * w\nloss = y.sum()\nloss.backward()\n")
    mul = next(c for c in captions(page) if c.startswith("MulBackward0"))
    assert "∂L/∂x = ∂L/∂y · w" in mul and "∂L/∂w = ∂L/∂y · x" in mul, mul
    page.errors.check()


MLP = ("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\nmodel = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))\n"
       "x = torch.randn(2, 4)\ny = torch.randn(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
       "for step in range(3):\n    opt.zero_grad()\n    loss = ((model(x) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n")


def test_module_outputs_are_named_by_module_and_products_read_as_products(page):
    run(page, MLP)
    names = page.evaluate("() => [...window.__fg.model.nodes.values()].filter(n => n.kind === 'tensor')"
                          ".map(n => window.__fg.model.nodes.get(n.id).name || window.__fg.model.nodes.get(n.id).display || n.label)")
    assert "model.0 out" in names and "model.2 out" in names, names
    text = "\n".join(captions(page))
    assert "addmm(…" not in text and "relu(…)" not in text and "∂L/∂(… " not in text, text
    assert "∂L/∂(model.0 out) = ∂L/∂(model.1 out)" in text, text
    assert "scalar" not in names and not any(n and n.replace("×", "").isdigit() for n in names), names
    # the matrix product's backward edges are written as products: "[2,4]ᵀ @ [2,3] → [4,3]"
    labels = page.evaluate("""() => { const m = window.__fg.model; const out = [];
        for (let k = 1; k <= m.steps.length; k++) { const st = m.stateAt(k); if (st.effects) out.push(...st.effects.edgeLabels.map(l => l.text)); }
        return out; }""")
    assert "[2,4]ᵀ @ [2,3] → [4,3]" in labels, labels
    assert not any(lab.startswith("Σ [2,") and "→[4" in lab for lab in labels), labels
    page.errors.check()


def test_the_inspector_binds_c_shows_the_rule_that_made_a_gradient_and_no_doubled_values(page):
    run(page, "import torch\ns = torch.tensor(5.0, requires_grad=True)\nz = s ** 2\nz.backward()\n")
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    select(page, "s")
    page.wait_for_selector("#inspector .scalar-val")
    values = page.eval_on_selector_all("#inspector .scalar-val", "els => els.map(e => e.innerText.trim())")
    assert values == ["5", "10"], values  # never "5 (5)"
    pow_id = page.evaluate("() => window.__fg.model.graph.nodes.find(n => n.op === 'pow_scalar').id")
    page.evaluate("id => window.__fg.select(id)", pow_id)
    page.wait_for_selector("#inspector .insp-letters")
    text = page.locator("#inspector .insp-letters").inner_text()
    assert "a = s" in text and "c = 2 (exponent)" in text, text
    snap(page, "inspector_c_bound")
    page.errors.check()


def test_the_weight_shows_delta_transposed_times_x(page):
    run(page, MLP)
    page.evaluate("window.__fg.setStep(window.__fg.model.steps.length)")
    select(page, "model.0.weight")
    page.wait_for_selector("#inspector .chain-rule")
    rule = page.locator("#inspector .chain-rule").inner_text()
    assert rule.startswith("∂L/∂model.0.weight = ") and rule.endswith("(∂L/∂(model.0 out))ᵀ · x"), rule
    snap(page, "inspector_weight_delta_x")
    page.errors.check()


def test_a_pass_ends_with_its_gradients_and_the_clearing_is_named(page):
    run(page, MLP)
    page.keyboard.press("End")
    grads = page.evaluate("""() => { const m = window.__fg.model, st = m.stateAt(m.steps.length);
        return m.graph.nodes.filter(n => n.role === 'parameter').map(n => st.nodes.get(n.id).grad); }""")
    assert len(grads) == 4 and all(g is not None for g in grads), grads
    legend = page.locator("#legend").inner_text()
    assert "∂L = gradient of L = loss" in legend, legend
    snap(page, "pass_end_gradients")
    # the second pass opens by clearing: at its start the inspector says who cleared the gradient
    page.evaluate("window.__fg.openPass(1)")
    assert page.evaluate("window.__fg.model.passIndex") == 1
    pause(page)
    page.evaluate("window.__fg.setStep(1)")
    select(page, "model.0.weight")
    page.wait_for_selector("#inspector .none-val")
    assert "cleared by zero_grad() on line 9" in page.locator("#inspector").inner_text()
    page.errors.check()
