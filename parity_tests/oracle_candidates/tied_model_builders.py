"""Builder functions returning whole models that share one vocabulary table between both
embeddings and the pre-softmax projection, as the paper does, where the projection is a Linear
under a name no list holds (`last_linear`) whose bias stays its own beside the tied table (the
translation-package style: `build_transformer(config)` returning the model). A correct builder and
a twin whose docstring says BUG."""
from __future__ import annotations

from shared_vocab_tables import PaperTransformer, PaperTransformerBUG
from torch import nn


class _LastLinearTables:
    def tables(self):
        self.src_embedding = nn.Embedding(self.vocab_size, self.d)
        self.tgt_embedding = nn.Embedding(self.vocab_size, self.d)
        self.last_linear = nn.Linear(self.d, self.vocab_size)
        self.tgt_embedding.weight = self.src_embedding.weight
        self.last_linear.weight = self.src_embedding.weight

    def logits(self, y):
        return self.last_linear(y)                                                      # (B, T, V)


class LastLinearTransformer(_LastLinearTables, PaperTransformer):
    pass


class LastLinearTransformerBUG(_LastLinearTables, PaperTransformerBUG):
    pass


def build_tied_transformer(vocab_size, d_model, n_heads, d_ff, n_layers):
    return LastLinearTransformer(vocab_size, d_model, n_heads, d_ff, n_layers)


def build_tied_transformer_BUG(vocab_size, d_model, n_heads, d_ff, n_layers):
    """BUG: the target embeddings are not scaled by sqrt(d_model) (the source ones are)."""
    return LastLinearTransformerBUG(vocab_size, d_model, n_heads, d_ff, n_layers)
