# A program people bring (issue 21): causal self-attention by hand (masked_fill with -inf, softmax, einsum) against
# F.scaled_dot_product_attention, and the view/transpose of multi-head; checked against PyTorch's stdout
import math
import torch
import torch.nn.functional as F
torch.manual_seed(0)
B, T, C = 2, 5, 8
x = torch.randn(B, T, C)
Wq, Wk, Wv = (torch.randn(C, C) / math.sqrt(C) for _ in range(3))
q, k, v = x @ Wq, x @ Wk, x @ Wv
scores = q @ k.transpose(-2, -1) / math.sqrt(C)
mask = torch.tril(torch.ones(T, T))
scores = scores.masked_fill(mask == 0, float('-inf'))
attn = F.softmax(scores, dim=-1)
out = attn @ v
print(attn[0])
print(out.shape, out[0, 0])
scores2 = torch.einsum('btc,bsc->bts', q, k) / math.sqrt(C)
print(torch.allclose(scores2.masked_fill(mask == 0, float('-inf')), scores))
ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print((ref - out).abs().max() < 1e-5)
heads = 2
qh = q.view(B, T, heads, C // heads).transpose(1, 2)
print(qh.shape, qh.is_contiguous(), qh.contiguous().view(B, heads, -1).shape)
