"""nn.MultiheadAttention (torch/nn/modules/activation.py) with F.multi_head_attention_forward's math, composed from the
engine's primitives: the packed in-projection, heads as a batch, scaled scores (+ masks as -inf), softmax, dropout,
the out-projection, and the attention weights averaged over heads. Parameters are made and initialised in PyTorch's
order (out_proj's Linear init, then xavier_uniform_ of in_proj_weight, zero biases), so under a seed they are
PyTorch's. NOTE: PyTorch runs a fused kernel in eval mode without gradients; its sums may differ in the last bits."""
from __future__ import annotations

import copy
import math

from .. import creation
from ..dtypes import bool_
from ..functional import cat
from ..grad_mode import STATE
from ..limits import LimitExceeded
from . import functional as F
from . import init
from .dropout import Dropout
from .modules import Linear, Module, ModuleList, Parameter
from .normalization import LayerNorm


class NonDynamicallyQuantizableLinear(Linear):
    """The out-projection's class in PyTorch (a Linear; its name shows in the module's repr)."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("nn.MultiheadAttention with add_bias_kv, add_zero_attn or kdim / vdim other "
                                      "than embed_dim is not available in flowgrad yet")
        self.embed_dim = self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.in_proj_weight = Parameter(creation.empty(3 * embed_dim, embed_dim, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                 "query tensor")
        if self.batch_first and batched:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        if not batched:
            query, key, value = (x.unsqueeze(1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        if not batched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average):
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        heads, head_dim = self.num_heads, self.head_dim
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {embed_dim}")
        w, b = self.in_proj_weight, self.in_proj_bias
        w_q, w_k, w_v = w.chunk(3)
        b_q, b_k, b_v = b.chunk(3) if b is not None else (None, None, None)
        if query is key and key is value:  # self-attention: one packed projection, as PyTorch's
            proj = F.linear(query, w, b).unflatten(-1, (3, embed_dim))
            q, k, v = proj[..., 0, :], proj[..., 1, :], proj[..., 2, :]
        elif key is value:
            q = F.linear(query, w_q, b_q)
            kv = F.linear(key, cat([w_k, w_v]), None if b is None else cat([b_k, b_v])).unflatten(-1, (2, embed_dim))
            k, v = kv[..., 0, :], kv[..., 1, :]
        else:
            q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
        mask = None
        if attn_mask is not None:
            mask = _float_mask(attn_mask, q.dtype)
            if mask.dim() == 2:
                if tuple(mask.shape) != (tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(tgt_len, src_len)}.")
                mask = mask.unsqueeze(0)
            elif tuple(mask.shape) != (bsz * heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                   f"{(bsz * heads, tgt_len, src_len)}.")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (bsz, src_len):
                raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                     f"{tuple(key_padding_mask.shape)}")
            padding = _float_mask(key_padding_mask, q.dtype).view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1)
            padding = padding.reshape(bsz * heads, 1, src_len)
            mask = padding if mask is None else mask + padding
        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        scores = (q * math.sqrt(1.0 / float(head_dim))).bmm(k.transpose(-2, -1))
        if mask is not None:
            scores = mask + scores
        weights = F.softmax(scores, dim=-1)
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, p=self.dropout)
        out = weights.bmm(v).transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).view(tgt_len, bsz, embed_dim)
        if not need_weights:
            return out, None
        weights = weights.view(bsz, heads, tgt_len, src_len)
        return out, weights.mean(dim=1) if average else weights


def _float_mask(mask, dtype):
    """A boolean mask (True: left out) as the additive float mask PyTorch makes of it (-inf where True)."""
    if mask.dtype == bool_:
        return creation.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    return mask


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with dropout, a residual and LayerNorm (after, or before with
    norm_first), made in PyTorch's order (so its initial weights under a seed)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _copies(layer, num_layers, what):
    """num_layers deep copies of a layer (as PyTorch: the same initial weights in each, no random numbers drawn), each
    counted as the tensors it holds; a huge num_layers is refused before any copy is made."""
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 0:
        raise TypeError(f"num_layers must be a non-negative int, not {num_layers!r}")
    limits = STATE.limits
    need = num_layers * sum(p.numel() for p in layer.parameters())
    if limits is not None and limits.over_live(need):
        raise LimitExceeded(f"{num_layers:,} copies of the {what} layer would hold {need:,} tensor elements; "
                            f"the limit is max_live_elements = {limits.max_live_elements:,}")
    layers = []
    for _ in range(num_layers):
        copied = copy.deepcopy(layer)
        if STATE.limits is not None:  # each copy counts as the tensors it holds: a run's memory stays bounded
            for p in copied.parameters():
                STATE.limits.track(p)
        layers.append(copied)
    return ModuleList(layers)


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer, then an optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        if type(encoder_layer) is not TransformerEncoderLayer:
            raise TypeError("nn.TransformerEncoder takes an nn.TransformerEncoderLayer in flowgrad (a copy of another "
                            "module would copy program code)")
        self.layers = _copies(encoder_layer, num_layers, "encoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory and a feed-forward block, each with dropout, a residual and
    LayerNorm (after, or before with norm_first), made in PyTorch's order."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, then an optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        if type(decoder_layer) is not TransformerDecoderLayer:
            raise TypeError("nn.TransformerDecoder takes an nn.TransformerDecoderLayer in flowgrad (a copy of another "
                            "module would copy program code)")
        self.layers = _copies(decoder_layer, num_layers, "decoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder model (torch/nn/modules/transformer.py): an encoder and a decoder of copied layers, each
    with a final LayerNorm, every matrix parameter then re-drawn by xavier_uniform_ in parameters() order (as
    PyTorch's _reset_parameters: under a seed, the same weights)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None or custom_decoder is not None:
            raise NotImplementedError("nn.Transformer's custom_encoder / custom_decoder are not available in flowgrad: "
                                      "build the model from nn.TransformerEncoder and nn.TransformerDecoder instead")
        encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                                batch_first, norm_first, bias, dtype=dtype)
        self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                                batch_first, norm_first, bias, dtype=dtype)
        self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        if src.dim() == 3:
            batch = 0 if self.batch_first else 1
            if src.size(batch) != tgt.size(batch):
                raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return creation.full((sz, sz), float("-inf"), dtype=dtype).triu(diagonal=1)
