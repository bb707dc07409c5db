"""A whole model whose constructor takes its encoder and decoder built, and whose file holds no
function building it from sizes (test data for parity_tests/test_oracle_parts_handed_models.py):
the oracle cannot build it, and says so rather than handing the parts sizes."""
import torch
from torch import nn


class PartsHandedTransformer(nn.Module):
    def __init__(self, encoder, decoder, pad_idx=0):
        super().__init__()
        self.encoder, self.decoder, self.pad_idx = encoder, decoder, pad_idx

    def forward(self, src, tgt):
        keep_src = (src != self.pad_idx)[:, None, None, :]            # (B, 1, 1, S)
        t = tgt.size(1)
        keep_tgt = torch.tril(torch.ones(t, t, dtype=torch.bool))[None, None]
        return self.decoder(tgt, self.encoder(src, keep_src), keep_src, keep_tgt)
