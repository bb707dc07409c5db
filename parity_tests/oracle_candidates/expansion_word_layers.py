"""A torch post-norm encoder layer whose feed-forward width is given as a multiple of the model
width under a name of its own, `layer_expansion` (Linear(d, d * layer_expansion)); it takes no
mask. The right class has a planted-bug twin (BUG)."""
import torch
from torch import nn


class ExpansionWordEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, layer_expansion, dropout=0.1):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=dropout, batch_first=True)
        self.grow = nn.Linear(d_model, d_model * layer_expansion)
        self.shrink = nn.Linear(d_model * layer_expansion, d_model)
        self.norm_a, self.norm_b = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def feed(self, x):
        return self.shrink(self.drop(torch.relu(self.grow(x))))

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm_a(x + self.drop(a))
        return self.norm_b(x + self.drop(self.feed(x)))


class ExpansionWordEncoderLayerBUG(ExpansionWordEncoderLayer):
    def feed(self, x):
        return torch.relu(self.shrink(torch.relu(self.grow(x))))     # a ReLU after the second layer
