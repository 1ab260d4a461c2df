"""F.scaled_dot_product_attention (engine/nn/functional_extra.py) against PyTorch 2.13's math path: outputs and the
query's gradient to float32 rounding (its batched products and softmax's exp round otherwise here), masks (boolean,
float, causal, all-masked rows giving 0), scale, and PyTorch's errors; gradients against finite differences."""
import numpy as np
import pytest

import engine as E
from engine.gradcheck import gradcheck

torch = pytest.importorskip("torch")

CASES = [((2, 3, 4), (2, 5, 4), {}), ((1, 2, 3, 4), (1, 2, 3, 4), {"is_causal": True}),
         ((2, 3, 4), (2, 3, 4), {"attn_mask": "bool"}), ((3, 4), (5, 4), {"scale": 0.3}),
         ((2, 3, 8), (2, 3, 8), {"attn_mask": "float"}), ((2, 3, 4), (2, 3, 4), {"attn_mask": "none_of_a_row"})]


@pytest.mark.parametrize(("q_shape", "k_shape", "options"), CASES)
def test_outputs_and_gradients_are_pytorchs(q_shape, k_shape, options):
    torch.manual_seed(0)
    q, k, v = torch.randn(*q_shape), torch.randn(*k_shape), torch.randn(*k_shape)
    kw = dict(options)
    if kw.get("attn_mask") == "bool":
        kw["attn_mask"] = torch.rand(q_shape[-2], k_shape[-2]) > 0.3
    elif kw.get("attn_mask") == "float":
        kw["attn_mask"] = torch.randn(q_shape[-2], k_shape[-2])
    elif kw.get("attn_mask") == "none_of_a_row":  # a row that attends to nothing: 0, not nan
        mask = torch.ones(q_shape[-2], k_shape[-2], dtype=torch.bool)
        mask[1] = False
        kw["attn_mask"] = mask
    q_t = q.clone().requires_grad_()
    out_t = torch.nn.functional.scaled_dot_product_attention(q_t, k, v, **kw)
    out_t.sum().backward()
    q_e = E.tensor(q.numpy(), requires_grad=True)
    kw_e = {n: E.tensor(x.numpy()) if hasattr(x, "numpy") else x for n, x in kw.items()}
    out_e = E.nn.functional.scaled_dot_product_attention(q_e, E.tensor(k.numpy()), E.tensor(v.numpy()), **kw_e)
    out_e.sum().backward()
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q_e.grad.numpy(), q_t.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert not np.isnan(out_e.detach().numpy()).any()


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    q, k, v = (E.tensor(rng.standard_normal((2, 3, 4)), dtype=E.float64, requires_grad=True) for _ in range(3))
    mask = E.tensor([[True, False, True], [True, True, True], [False, True, True]])
    assert gradcheck(lambda a, b, c: E.nn.functional.scaled_dot_product_attention(a, b, c, attn_mask=mask), (q, k, v))
    assert gradcheck(lambda a, b, c: E.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True), (q, k, v))


def test_errors_are_pytorchs():
    q = E.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        E.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=E.ones(3, 3, dtype=E.bool), is_causal=True)
    with pytest.raises(RuntimeError):
        E.nn.functional.scaled_dot_product_attention(q, E.ones(2, 3, 5), q)
