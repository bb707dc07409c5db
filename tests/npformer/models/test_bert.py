"""BERT (npformer.models.bert): finite differences of every parameter of both heads and of BertModel's two
outputs (float64, random upstream gradients, dropout active with replayed masks, segments, padding);
the tanh pair and the pooler alone; masks and segments change what they should; config defaults; bad input."""
import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.dropout import Dropout
from npformer.layers.module import Module
from npformer.models.bert import (
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    Pooler,
    bert_config,
    tanh_backward,
    tanh_forward,
)
from npformer.models.config import TransformerConfig
from tests.npformer.layer_helpers import TOL, jitter

IDS = np.array([[2, 5, 3, 9, 0],
                [2, 7, 1, 0, 0]])
TYPES = np.array([[0, 0, 1, 1, 0],
                  [0, 1, 1, 0, 0]])
KEEP = (IDS != 0).astype(np.int64)                                 # Hugging Face's (B, T) 1 = real
PER_TENSOR = 16


def tiny_bert(**changes) -> TransformerConfig:
    base = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=2, max_len=6, vocab_size=11,
                pad_id=0, num_classes=3, dropout=0.1, attention_dropout=0.1, dtype="float64")
    base.update(changes)
    return bert_config(**base)


class BothOutputs(Module):
    """BertModel with its two outputs side by side, so gradcheck sees one array: (B, T*D + D)."""

    def __init__(self, bert: BertModel):
        super().__init__()
        self.bert = bert

    def forward(self, ids, token_type_ids=None, attention_mask=None):
        h, p = self.bert(ids, token_type_ids, attention_mask)          # (B, T, D), (B, D)
        self._cache = h.shape
        return np.concatenate([h.reshape(h.shape[0], -1), p], axis=1)  # (B, T*D + D)

    def backward(self, dout):
        B, T, D = self._cache
        return self.bert.backward(dout[:, :T * D].reshape(B, T, D), dout[:, T * D:].copy())


def test_tanh_pair_finite_differences():
    x = np.random.default_rng(0).normal(size=(3, 4)) * 2
    check_pair(tanh_forward, tanh_backward, [x], tol=TOL).raise_if_failed()


def test_pooler_finite_differences_reads_only_the_first_position():
    """Pooler alone: h (B, T, D) with T != D, a random upstream gradient; dh is zero past position 0."""
    pooler = Pooler(6, "float64", np.random.default_rng(1))
    h = np.random.default_rng(2).normal(size=(2, 5, 6))
    gradcheck(pooler, h, tol=TOL).raise_if_failed()
    pooler(h)
    dh = pooler.backward(np.random.default_rng(3).normal(size=(2, 6)))
    assert dh.shape == h.shape and not dh[:, 1:].any() and dh[:, 0].any()


@pytest.mark.parametrize("changes", [dict(), dict(type_vocab_size=0, embedding_norm=False),
                                     dict(output_bias=False, tie_embeddings=False, bias=False)],
                         ids=["bert", "no-segments-no-embed-norm", "untied-nobias"])
def test_masked_lm_gradcheck(changes):
    m = jitter(BertForMaskedLM(tiny_bert(**changes), seed=1))
    m.train()
    types = TYPES if m.config.type_vocab_size else None
    gradcheck(m, IDS, tol=TOL, max_per_tensor=PER_TENSOR, token_type_ids=types,
              attention_mask=KEEP).raise_if_failed()
    assert any(d.last_mask is not None for _, d in m.named_modules() if isinstance(d, Dropout))


def test_sequence_classification_gradcheck():
    m = jitter(BertForSequenceClassification(tiny_bert(), seed=2))
    m.train()
    gradcheck(m, IDS, tol=TOL, max_per_tensor=PER_TENSOR, token_type_ids=TYPES).raise_if_failed()


def test_bert_model_both_outputs_gradcheck():
    m = BothOutputs(jitter(BertModel(tiny_bert(num_encoder_layers=1), seed=3)))
    m.train()
    gradcheck(m, IDS, tol=TOL, max_per_tensor=PER_TENSOR, token_type_ids=TYPES,
              attention_mask=KEEP).raise_if_failed()


def test_tied_output_weight_sums_both_uses():
    m = BertForMaskedLM(tiny_bert(dropout=0.0, attention_dropout=0.0), seed=0)
    assert m.output_proj.weight is m.bert.tok_embed.weight
    names = [n for n, _ in m.named_parameters()]
    assert "output_proj.weight" not in names and "bert.tok_embed.weight" in names
    assert "output_proj.weight" in m.state_dict()                  # as torch: under both names


def test_masks_and_segments_change_what_they_should():
    m = BertForMaskedLM(tiny_bert(dropout=0.0, attention_dropout=0.0), seed=0).eval()
    base = m(IDS, TYPES, KEEP)
    # a padded key does not affect real positions: change the token under a masked key
    ids2 = IDS.copy()
    ids2[1, 4] = 6
    out = m(ids2, TYPES, KEEP)
    np.testing.assert_allclose(out[1, :3], base[1, :3], rtol=1e-12, atol=1e-12)
    # the default mask (None) is the pad_id padding mask: the same as passing KEEP
    np.testing.assert_allclose(m(IDS, TYPES), base, rtol=0, atol=0)
    # the segment of a real token changes the output; token_type_ids None means all zeros
    assert not np.allclose(m(IDS, 1 - TYPES * 0, KEEP)[0, :4], base[0, :4])
    np.testing.assert_array_equal(m(IDS, None, KEEP), m(IDS, np.zeros_like(TYPES), KEEP))


def test_config_defaults_leave_other_models_unchanged():
    c = TransformerConfig()
    assert c.type_vocab_size == 0 and c.embedding_norm is False
    b = bert_config()
    assert (b.layer_norm_eps, b.activation, b.norm_first, b.positional, b.type_vocab_size,
            b.embedding_norm, b.scale_embeddings) == (1e-12, "gelu", False, "learned", 2, True, False)
    assert TransformerConfig.from_dict({k: v for k, v in c.to_dict().items()
                                        if k not in ("type_vocab_size", "embedding_norm")}) == c
    with pytest.raises(ValueError, match="type_vocab_size"):
        TransformerConfig(type_vocab_size=-1)
    with pytest.raises(ValueError, match="embedding_norm"):
        TransformerConfig(embedding_norm=1)


def test_bad_input_is_named():
    m = BertForMaskedLM(tiny_bert(), seed=0)
    with pytest.raises(ValueError, match="token_type_ids: expected token ids in \\[0, 2\\)"):
        m(IDS, TYPES + 2)
    with pytest.raises(ValueError, match="token_type_ids: expected input_ids' shape"):
        m(IDS, TYPES[:, :3])
    with pytest.raises(ValueError, match=r"attention_mask: expected shape \(2, 5\)"):
        m(IDS, TYPES, KEEP[:, :4])
    with pytest.raises(ValueError, match="attention_mask: expected 0/1"):
        m(IDS, TYPES, KEEP * 2)
    with pytest.raises(ValueError, match="input_ids: expected a sequence length <= max_len=6"):
        m(np.ones((1, 7), np.int64))
    with pytest.raises(ValueError, match="type_vocab_size=0"):
        BertForMaskedLM(tiny_bert(type_vocab_size=0), seed=0)(IDS, TYPES)
    with pytest.raises(RuntimeError, match="before forward"):
        BertForSequenceClassification(tiny_bert(), seed=0).backward(np.zeros((2, 3)))
    b = BertModel(tiny_bert(), seed=0, pooler=False)
    b(IDS)
    with pytest.raises(ValueError, match="dpooled: this BertModel has no pooler"):
        b.backward(None, np.zeros((2, 8)))


def test_float32_stays_float32_and_seed_is_deterministic():
    c = tiny_bert(dtype="float32")
    a, b = BertForMaskedLM(c, seed=5), BertForMaskedLM(c, seed=5)
    a.train(), b.train()
    out_a, out_b = a(IDS, TYPES), b(IDS, TYPES)
    assert out_a.dtype == np.float32
    np.testing.assert_array_equal(out_a, out_b)
    g = np.random.default_rng(0).standard_normal(out_a.shape).astype(np.float32)
    assert a.backward(g)["encoder_input"].dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in a.parameters())
