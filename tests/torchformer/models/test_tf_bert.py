"""torchformer.models.bert beyond parity: the same argument errors as npformer (named, before any work),
the first layer's input kept with its gradient, dropout only in training mode, the fused attention
path (no weights requested) giving the eval logits of the explicit path, state_dict keys equal to
npformer's, and torchformer.io.hub.to_transformers on a model built here."""
import numpy as np
import pytest
import torch

import npformer.models.bert as nb
import torchformer as tf
from npformer.models.config import bert_config
from tests.torchformer.helpers import assert_close

IDS = np.array([[2, 5, 3, 9, 0],
                [2, 7, 1, 0, 0]])
TYPES = np.array([[0, 0, 1, 1, 0],
                  [0, 1, 1, 0, 0]])


def cfg(**k):
    base = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=2, max_len=6, vocab_size=11,
                pad_id=0, num_classes=3, dropout=0.1, attention_dropout=0.1, dtype="float64")
    return bert_config(**{**base, **k})


@pytest.mark.parametrize("call, match", [
    (lambda m: m(IDS, TYPES + 2), r"token_type_ids: expected token ids in \[0, 2\)"),
    (lambda m: m(IDS, TYPES[:, :3]), "token_type_ids: expected input_ids' shape"),
    (lambda m: m(IDS, TYPES, (IDS != 0)[:, :4]), r"attention_mask: expected shape \(2, 5\)"),
    (lambda m: m(IDS, TYPES, (IDS != 0).astype(np.int64) * 2), "attention_mask: expected 0/1"),
    (lambda m: m(np.ones((1, 7), np.int64)), "input_ids: expected a sequence length <= max_len=6"),
])
def test_errors_match_npformer(call, match):
    with pytest.raises(ValueError, match=match):
        call(tf.BertForMaskedLM(cfg()))
    with pytest.raises(ValueError, match=match):
        call(nb.BertForMaskedLM(cfg()))
    with pytest.raises(ValueError, match="type_vocab_size=0"):
        tf.BertModel(cfg(type_vocab_size=0))(IDS, TYPES)


def test_keys_input_gradient_dropout_and_fused_path():
    c = cfg()
    t = tf.BertForSequenceClassification(c, seed=4)
    n = nb.BertForSequenceClassification(c, seed=4)
    assert list(t.state_dict()) == list(n.state_dict())
    m = tf.BertForMaskedLM(c, seed=1).eval()
    assert m.output_proj.weight is m.bert.tok_embed.weight
    fused = m(IDS, TYPES)                                           # F.scaled_dot_product_attention
    tf.set_need_weights(m, True)
    explicit = m(IDS, TYPES)
    assert_close("logits", fused, explicit, "float64")
    explicit.sum().backward()
    assert m.encoder_input.grad is not None and m.encoder_input.grad.shape == (2, 5, 8)
    m.train()
    torch.manual_seed(0)
    assert not torch.equal(m(IDS, TYPES), explicit)                 # dropout active
    m.eval()
    assert torch.equal(m(IDS, TYPES), explicit)


def test_to_transformers_builds_an_equal_model():
    pytest.importorskip("transformers", reason="needs the [hf] extra")
    from torchformer.io.hub import to_transformers

    m = nb.BertForMaskedLM(cfg(dropout=0.0, attention_dropout=0.0), seed=2).eval()
    hf = to_transformers(m)
    keep = (IDS != 0).astype(np.int64)
    ref = hf(input_ids=torch.from_numpy(IDS), token_type_ids=torch.from_numpy(TYPES),
             attention_mask=torch.from_numpy(keep)).logits
    assert_close("logits", m(IDS, TYPES, keep), ref, "float64")


@pytest.mark.parametrize("make", [lambda c: nb.BertModel(c, seed=3, pooler=False),
                                  lambda c: nb.BertForMaskedLM(c, seed=3),
                                  lambda c: nb.BertForSequenceClassification(c, seed=3)])
def test_bridge_both_ways(make):
    n = make(cfg()).eval()
    t = tf.to_torch(n)
    assert type(t).__name__ == type(n).__name__ and list(t.state_dict()) == list(n.state_dict())
    out_n, out_t = n(IDS, TYPES), t(IDS, TYPES)
    if isinstance(out_n, tuple):
        assert out_n[1] is None and out_t[1] is None
        out_n, out_t = out_n[0], out_t[0]
    assert_close("output", out_t, out_n, "float64")
    back = tf.to_numpy(t)
    for k, v in n.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[k], v)


@pytest.mark.parametrize("kind", ["BertModel", "BertForMaskedLM", "BertForSequenceClassification"])
def test_dropout_masks_come_from_the_seed_alone(kind):
    # like every npformer model and torchformer's Transformer/CausalLM: a seed fixes every dropout
    # mask, and torch's global generator neither decides them nor is consumed by them
    def run(seed, global_seed):
        torch.manual_seed(global_seed)
        m = getattr(tf, kind)(cfg(), seed=seed).train()
        out = m(IDS, TYPES)
        out = out[0] if isinstance(out, tuple) else out
        return out.detach().numpy(), torch.rand(1).item()

    a, after_a = run(3, 0)
    b, after_b = run(3, 1)
    np.testing.assert_array_equal(a, b)
    torch.manual_seed(0)
    assert after_a == torch.rand(1).item()      # the global generator was not drawn from
