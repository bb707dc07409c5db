"""A BERT-style encoder-only model: token and segment embeddings, a stack of post-norm encoder
layers, no decoder. Not the paper's encoder-decoder: checked as `model` it is an interface error
that says so."""
from torch import nn


class EncoderOnlyModel(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.segments = nn.Embedding(2, d_model)
        layer = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers)

    def forward(self, ids, segment_ids):
        x = self.tokens(ids) + self.segments(segment_ids.clamp(0, 1))
        return self.blocks(x, src_key_padding_mask=(ids == 0))

