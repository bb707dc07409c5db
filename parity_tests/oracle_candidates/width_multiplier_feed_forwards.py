"""Feed-forwards whose hidden width is given as a multiple of the model width (`forward_expansion`,
`expansion_factor`, `mlp_ratio`), required or with a default: d_ff = multiplier x d_model. Right
unless BUG."""
from torch import nn


class ExpansionFeedForward(nn.Module):
    def __init__(self, embed_size, forward_expansion):
        super().__init__()
        self.up = nn.Linear(embed_size, forward_expansion * embed_size)
        self.down = nn.Linear(forward_expansion * embed_size, embed_size)

    def forward(self, x):
        return self.down(nn.functional.relu(self.up(x)))


class ExpansionFactorFeedForward(ExpansionFeedForward):
    """Built as (d_model, expansion_factor)."""

    def __init__(self, d_model, expansion_factor):
        super().__init__(d_model, expansion_factor)


class RatioMlp(nn.Module):
    """A float ratio, rounded as a width: int(dim * mlp_ratio)."""

    def __init__(self, dim, mlp_ratio):
        super().__init__()
        hidden = int(dim * mlp_ratio)
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ExpansionFeedForwardBUG(ExpansionFeedForward):
    """BUG: the activation is applied after the down projection as well."""

    def forward(self, x):
        return nn.functional.relu(self.down(nn.functional.relu(self.up(x))))


class ExpansionEncoderLayer(nn.Module):
    """A post-norm encoder layer built as (embed_size, heads, dropout, forward_expansion), its
    feed-forward width forward_expansion * embed_size."""

    def __init__(self, embed_size, heads, dropout, forward_expansion):
        super().__init__()
        self.attention = nn.MultiheadAttention(embed_size, heads, dropout=dropout, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(embed_size), nn.LayerNorm(embed_size)
        self.feed_forward = ExpansionFeedForward(embed_size, forward_expansion)
        self.dropout, self.heads = nn.Dropout(dropout), heads

    def forward(self, x, mask=None):
        blocked = None if mask is None else ~mask.bool()[:, 0].repeat_interleave(self.heads, 0)
        a = self.attention(x, x, x, attn_mask=blocked, need_weights=False)[0]
        x = self.norm1(x + self.dropout(a))
        return self.norm2(x + self.dropout(self.feed_forward(x)))
