"""Tutorial layers wrapping torch.nn.MultiheadAttention, handing their mask straight to it (torch's
form: True = hidden, (batch*heads, Tq, Tk)). Written for the oracle's reach tests. Correct unless a
docstring says BUG."""
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, query, key, value, attn_mask=None):
        out, _ = self.mha(query, key, value, attn_mask=attn_mask, need_weights=False)
        return out


class EncoderLayer(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def ffn_norm(self, x):
        return self.norm2(x + self.dropout(self.linear2(F.relu(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        a = self.self_attn(src, src, src, attn_mask=src_mask, key_padding_mask=src_key_padding_mask,
                           need_weights=False)[0]
        return self.ffn_norm(self.norm1(src + self.dropout(a)))


class EncoderLayerOneNorm(EncoderLayer):
    """BUG: norm1 used after the feed-forward too."""

    def ffn_norm(self, x):
        return self.norm1(x + self.linear2(F.relu(self.linear1(x))))
