"""Small shared pieces of the npformer layer/model tests (tiny configs, parameter jitter)."""
import numpy as np

from npformer.models.config import TransformerConfig

TOL = 1e-6  # the project's bound for float64 finite differences


def tiny_config(**changes) -> TransformerConfig:
    """d_model 8, 2 heads, d_ff 16, one layer each, vocabulary 11, float64, no dropout (tests turn
    dropout on where they mean to)."""
    base = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                max_len=6, vocab_size=11, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")
    base.update(changes)
    return TransformerConfig(**base)


def jitter(module, seed=0, scale=0.1):
    """Move every parameter off its initial value (zero biases, unit LayerNorm gains), so a backward
    that, say, forgot a gain is not hidden by gain == 1. Padding rows of embeddings stay as they are
    only if the caller re-zeroes them; gradients do not depend on that."""
    rng = np.random.default_rng(seed + 1000)
    for _, p in module.named_parameters():
        p.data += (scale * rng.standard_normal(p.data.shape)).astype(p.data.dtype)
    return module


def padding_keep(lengths, T):
    """(B, 1, 1, T) keep-mask: key j of row b is kept when j < lengths[b]."""
    return (np.arange(T)[None, :] < np.asarray(lengths)[:, None])[:, None, None, :]


def causal_keep(T):
    """(1, 1, T, T) lower-triangular keep-mask."""
    return np.tril(np.ones((T, T), bool))[None, None]
