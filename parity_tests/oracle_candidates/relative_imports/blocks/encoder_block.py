"""A post-norm encoder layer whose parts come from the folder above, relatively."""
from torch import nn

from ..attention import SiblingImportAttention
from ..feed_forward import FeedForward


class ParentImportEncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float = 1e-5):
        super().__init__()
        self.self_attn = SiblingImportAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(x + self.ffn(x))


class ParentImportEncoderLayerBUG(ParentImportEncoderLayer):
    """BUG: the feed-forward's residual is missing."""

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(self.ffn(x))
