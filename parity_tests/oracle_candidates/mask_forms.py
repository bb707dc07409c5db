"""Attention whose `mask` argument has fewer axes than (batch, 1, Tq, Tk): a key padding,
(batch, keys), True (or 1) where the key is a token (or, in one, True where it is padding),
expanded over heads and queries by the layer itself; or one (queries, keys) mask for the whole
batch. Right ones match; the BUG twins do not (their bug is named in the class)."""
import math

import torch
from torch import nn


class KeyPaddingAttention(nn.Module):
    """mask: (batch, keys), 1 where the key is a token (None: every key)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def hidden(self, mask):
        return ~mask.bool()[:, None, None, :]                  # (B, 1, 1, Tk): True = hidden

    def scale(self, q):
        return 1.0 / math.sqrt(q.shape[-1])

    def masked(self, s, mask):
        """(B, H, Tq, Tk) scores with the hidden keys at -inf."""
        return s.masked_fill(self.hidden(mask), float("-inf"))

    def weights(self, s, mask):
        return torch.softmax(s if mask is None else self.masked(s, mask), dim=-1)

    def forward(self, query, key, value, mask=None):
        b, tq, d = query.shape
        split = lambda t: t.view(b, -1, self.h, d // self.h).transpose(1, 2)   # noqa: E731
        q, k, v = split(self.q(query)), split(self.k(key)), split(self.v(value))
        z = self.weights(q @ k.transpose(-1, -2) * self.scale(q), mask) @ v
        return self.o(z.transpose(1, 2).reshape(b, tq, d))


class PaddingTrueAttention(KeyPaddingAttention):
    """key_padding_mask convention: (batch, keys), True where the key is padding."""

    def hidden(self, mask):
        return mask.bool()[:, None, None, :]


class KeyPaddingAttentionBUG(KeyPaddingAttention):
    """BUG: the scores are not divided by sqrt(d_head)."""

    def scale(self, q):
        return 1.0


class KeyPaddingAfterSoftmaxBUG(KeyPaddingAttention):
    """BUG: padded keys are zeroed after the softmax, the rest not renormalised."""

    def weights(self, s, mask):
        p = torch.softmax(s, dim=-1)
        return p if mask is None else p.masked_fill(self.hidden(mask), 0.0)


class KeyPaddingEncoderLayer(nn.Module):
    """Post-norm encoder layer around KeyPaddingAttention."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = KeyPaddingAttention(d_model, num_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.attn(x, x, x, mask))
        return self.norm2(x + self.ff(x))


class SharedMaskAttention(KeyPaddingAttention):
    """mask: one (queries, keys) mask for the whole batch, 1 where the query may attend, applied
    by boolean indexing over the last two axes (so it must have exactly those two)."""

    def hidden(self, mask):
        return ~mask.bool()

    def masked(self, s, mask):
        s = s.clone()
        s[:, :, self.hidden(mask)] = float("-inf")
        return s


class SharedMaskAttentionBUG(SharedMaskAttention):
    """BUG: the mask is read transposed, (keys, queries), where it is square."""

    def hidden(self, mask):
        return ~mask.bool().T if mask.shape[0] == mask.shape[1] else ~mask.bool()


class WordNamedMaskAttention(KeyPaddingAttention):
    """The mask under a name no list holds, `pad_attn_mask=None`: a (batch, 1, Tq, Tk) keep mask."""

    def hidden(self, mask):
        return ~mask.bool()

    def forward(self, query, key, value, pad_attn_mask=None):
        return super().forward(query, key, value, pad_attn_mask)


class WordNamedMaskAttentionBUG(WordNamedMaskAttention):
    """BUG: masked scores are set to 0 instead of -inf (hidden keys still get weight)."""

    def masked(self, s, mask):
        return s.masked_fill(self.hidden(mask), 0.0)


class WordNamedKeyPadding(KeyPaddingAttention):
    """A (batch, keys) key padding under a name no list holds: `keys_mask=None`."""

    def forward(self, query, key, value, keys_mask=None):
        return super().forward(query, key, value, keys_mask)


class CausalKeyPaddingAttention(KeyPaddingAttention):
    """KeyPaddingAttention that also hides later keys itself."""

    def hidden(self, mask):
        tk = mask.shape[-1]
        later = torch.ones(tk, tk, dtype=torch.bool).triu(1)     # (T, T) True above the diagonal
        return super().hidden(mask) | later


class SequenceNamedDecoderLayer(nn.Module):
    """Post-norm decoder layer in seq2seq words: the input sequence is the encoder's (the memory),
    the output sequence the decoder's own; both masks (batch, keys) key paddings, the self-attention
    masking the future itself."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attention = CausalKeyPaddingAttention(d_model, num_heads)
        self.cross_attention = KeyPaddingAttention(d_model, num_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def cross_mask(self, input_attention_mask):
        return input_attention_mask

    def forward(self, input_sequence, input_attention_mask, output_sequence, output_attention_mask):
        y = output_sequence
        y = self.norm1(y + self.self_attention(y, y, y, output_attention_mask))
        y = self.norm2(y + self.cross_attention(y, input_sequence, input_sequence,
                                                self.cross_mask(input_attention_mask)))
        return self.norm3(y + self.ff(y))


class SequenceNamedDecoderLayerBUG(SequenceNamedDecoderLayer):
    """BUG: the cross-attention ignores the memory's padding."""

    def cross_mask(self, input_attention_mask):
        return None
