"""A model's backward refuses a NaN or inf upstream gradient at its entry, naming the argument and
the count, before any gradient is accumulated; the forward's cache survives the refusal, so a finite
gradient afterwards gives what a fresh model gives. (It used to accept one and fill every `.grad`
with NaN silently.)"""
import numpy as np
import pytest

import npformer as nf
from npformer.models.bert import BertForMaskedLM, BertForSequenceClassification, BertModel
from npformer.models.config import bert_config

SRC = np.array([[1, 2, 3], [4, 5, 0]])
TGT = np.array([[1, 2], [3, 4]])
IDS = np.array([[2, 5, 3, 9], [2, 7, 1, 0]])


def cfg():
    return nf.TransformerConfig(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=1,
                                num_decoder_layers=1, max_len=6, vocab_size=13, pad_id=0,
                                num_classes=3, dropout=0.0, dtype="float64")


def bcfg():
    return bert_config(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=1, max_len=6,
                       vocab_size=11, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")


# (name, build, forward, argument the check names, backward call given the upstream gradient)
MODELS = [
    ("Transformer", lambda: nf.Transformer(cfg()), lambda m: m(SRC, TGT), "dlogits",
     lambda m, g: m.backward(g)),
    ("EncoderClassifier", lambda: nf.EncoderClassifier(cfg()), lambda m: m(SRC), "dlogits",
     lambda m, g: m.backward(g)),
    ("CausalLM", lambda: nf.CausalLM(cfg()), lambda m: m(IDS), "dlogits",
     lambda m, g: m.backward(g)),
    ("BertForMaskedLM", lambda: BertForMaskedLM(bcfg()), lambda m: m(IDS), "dlogits",
     lambda m, g: m.backward(g)),
    ("BertForSequenceClassification", lambda: BertForSequenceClassification(bcfg()),
     lambda m: m(IDS), "dlogits", lambda m, g: m.backward(g)),
    ("BertModel-dhidden", lambda: BertModel(bcfg()), lambda m: m(IDS)[0], "dhidden",
     lambda m, g: m.backward(g)),
    ("BertModel-dpooled", lambda: BertModel(bcfg()), lambda m: m(IDS)[1], "dpooled",
     lambda m, g: m.backward(None, g)),
]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name, build, forward, arg, backward", MODELS, ids=[c[0] for c in MODELS])
def test_a_non_finite_upstream_gradient_is_refused_and_nothing_accumulates(name, build, forward,
                                                                          arg, backward, bad):
    model, fresh = build(), build()
    out, out_fresh = forward(model), forward(fresh)
    g = np.random.default_rng(3).standard_normal(out.shape)
    poisoned = g.copy()
    poisoned.flat[[0, -1]] = bad                                  # two entries of many
    with pytest.raises(ValueError) as err:
        backward(model, poisoned)
    msg = str(err.value)
    assert msg.startswith(f"{arg}: expected a finite upstream gradient"), msg
    assert f"got 2 NaN/inf entries of {g.size}" in msg, msg
    for pname, p in model.named_parameters():
        assert not p.grad.any(), pname                            # nothing accumulated
    backward(model, g)                                            # the cache survived the refusal
    backward(fresh, g)
    for (pname, p), (_, q) in zip(model.named_parameters(), fresh.named_parameters()):
        assert np.array_equal(p.grad, q.grad), pname
    assert np.array_equal(out, out_fresh)


@pytest.mark.parametrize("dout", [float("nan"), np.float32("inf"), np.array(np.nan, np.float32)])
def test_the_loss_refuses_a_non_finite_upstream_scalar(dout):
    """CrossEntropyLoss.backward is where a training step's backward starts: a NaN there used to fill
    dlogits (and then every .grad) with NaN silently."""
    loss = nf.CrossEntropyLoss()
    logits = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    loss(logits, np.array([1, 2]))
    with pytest.raises(ValueError, match=r"^dout: expected a finite upstream gradient, got 1 NaN/inf entries of 1$"):
        loss.backward(dout)
    assert np.isfinite(loss.backward()).all()                     # the cache survived the refusal
