"""The captioning decoder layer, taking its attention from the package above with a star import
(`from ..transformer_layers import *`), as the starter code of such assignments does."""
from torch import nn

from ..transformer_layers import *  # noqa: F403


class CaptionDecoderLayer(nn.Module):
    def __init__(self, input_dim, num_heads, dim_feedforward=2048, dropout=0.1):
        super().__init__()
        self.self_attn = CaptionAttention(input_dim, num_heads, dropout)  # noqa: F405
        self.multihead_attn = CaptionAttention(input_dim, num_heads, dropout)  # noqa: F405
        self.linear1 = nn.Linear(input_dim, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, input_dim)
        self.dropout = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(input_dim)
        self.norm2 = nn.LayerNorm(input_dim)
        self.norm3 = nn.LayerNorm(input_dim)
        self.activation = nn.ReLU()

    def forward(self, tgt, memory, tgt_mask=None):
        tgt = self.norm1(tgt + self.dropout(self.self_attn(tgt, tgt, tgt, attn_mask=tgt_mask)))
        tgt = self.norm2(tgt + self.dropout(self.multihead_attn(tgt, memory, memory)))
        ff = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
        return self.norm3(tgt + self.dropout(ff))


class CaptionDecoderLayerBUG(CaptionDecoderLayer):
    """BUG: the cross-attention's residual is left out (its output replaces the target)."""

    def forward(self, tgt, memory, tgt_mask=None):
        tgt = self.norm1(tgt + self.dropout(self.self_attn(tgt, tgt, tgt, attn_mask=tgt_mask)))
        tgt = self.norm2(self.dropout(self.multihead_attn(tgt, memory, memory)))
        ff = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
        return self.norm3(tgt + self.dropout(ff))
