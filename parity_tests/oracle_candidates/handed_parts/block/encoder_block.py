"""A post-norm encoder block taking its parts built (`self_attention`, `position_ff`, `norm`),
whose classes live in `layer/`, a folder beside this one; nothing here imports them. Our own code;
the BUG twin leaves out the feed-forward's residual."""
from __future__ import annotations

import copy

from torch import nn


class HandedEncoderBlock(nn.Module):
    def __init__(self, self_attention, position_ff, norm, dr_rate=0):
        super().__init__()
        self.self_attention = self_attention
        self.position_ff = position_ff
        self.norm1, self.norm2 = copy.deepcopy(norm), copy.deepcopy(norm)
        self.dropout = nn.Dropout(dr_rate)

    def residual(self, x):
        return x

    def forward(self, src, src_mask):
        x = self.norm1(src + self.dropout(self.self_attention(query=src, key=src, value=src,
                                                              mask=src_mask)))
        return self.norm2(self.residual(x) + self.dropout(self.position_ff(x)))


class HandedEncoderBlockBUG(HandedEncoderBlock):
    def residual(self, x):
        return 0.0 * x                                  # no residual around the feed-forward
