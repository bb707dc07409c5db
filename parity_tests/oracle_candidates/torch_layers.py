"""Layer norm, feed-forward, positional encoding, encoder and decoder layers, tutorial style (torch).

Correct: LayerNorm, PositionwiseFeedForward, PositionalEncoding, EncoderLayer, DecoderLayer.
Broken in one place each (docstring): LayerNormWrongEps, PositionalEncodingInPlace,
EncoderLayerNoResidual.
"""
import math

import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    """Correct: gamma/beta, biased variance, eps inside the square root."""

    def __init__(self, features, eps=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(features))
        self.beta = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class LayerNormWrongEps(nn.Module):
    """BUG: epsilon hard-wired to 1e-6 (the reference and torch.nn.LayerNorm use 1e-5)."""

    def __init__(self, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.weight * (x - mean) / torch.sqrt(var + 1e-6) + self.bias


class PositionwiseFeedForward(nn.Module):
    """Correct: w_2(dropout(relu(w_1(x))))."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))


class PositionalEncoding(nn.Module):
    """Correct: x + PE[:T] (batch first), then dropout."""

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64)
                             * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model, dtype=torch.float64)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)].to(x.dtype))


class PositionalEncodingInPlace(PositionalEncoding):
    """Misbehaves: adds the table into the caller's tensor (x += pe)."""

    def forward(self, x):
        x += self.pe[:, : x.size(1)].to(x.dtype)
        return self.dropout(x)


class MultiHeadAttention(nn.Module):
    """Correct attention block used by the layers below (returns only the output)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        B, Tq, D = Q.shape
        q = self.W_q(Q).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, Tq, D))


class EncoderLayer(nn.Module):
    """Correct post-norm encoder layer."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerNoResidual(EncoderLayer):
    """BUG: the feed-forward sublayer has no residual connection."""

    def forward(self, x, mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(self.dropout(self.feed_forward(x)))


class DecoderLayer(nn.Module):
    """Correct post-norm decoder layer; forward(x, enc_output, src_mask, tgt_mask) (the popular
    tutorial order: the cross-attention mask comes first)."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, enc_output, src_mask, tgt_mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, enc_output, enc_output, src_mask)))
        return self.norm3(x + self.dropout(self.feed_forward(x)))


class Transformer(nn.Module):
    """Correct encoder-decoder model in the paper's form: embeddings times sqrt(d_model), sinusoidal
    positions, post-norm layers, a final Linear; masks built from padding id 0."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff,
                 max_seq_length, dropout):
        super().__init__()
        self.d_model = d_model
        self.encoder_embedding = nn.Embedding(src_vocab_size, d_model)
        self.decoder_embedding = nn.Embedding(tgt_vocab_size, d_model)
        self.positional_encoding = PositionalEncoding(d_model, dropout, max_seq_length)
        self.encoder_layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])
        self.decoder_layers = nn.ModuleList(
            [DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])
        self.fc = nn.Linear(d_model, tgt_vocab_size)

    def generate_mask(self, src, tgt):
        src_mask = (src != 0)[:, None, None, :]                             # (B,1,1,S)
        T = tgt.size(1)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=tgt.device))
        tgt_mask = (tgt != 0)[:, None, None, :] & causal[None, None]        # (B,1,T,T)
        return src_mask, tgt_mask

    def forward(self, src, tgt):
        src_mask, tgt_mask = self.generate_mask(src, tgt)
        scale = math.sqrt(self.d_model)
        x = self.positional_encoding(self.encoder_embedding(src) * scale)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        y = self.positional_encoding(self.decoder_embedding(tgt) * scale)
        for layer in self.decoder_layers:
            y = layer(y, x, src_mask, tgt_mask)
        return self.fc(y)
