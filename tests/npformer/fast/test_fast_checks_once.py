"""The fast forward methods check each input once, as the plain ones do: Module.__call__ runs the
class's check_inputs, and neither forward checks again (a second check_float is one more pass over
the array). Counted over a whole model's training step, plain against accelerated."""
from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

import npformer as nf
from npformer.fast.accelerate import accelerate
from npformer.guards import validation
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig


@pytest.fixture
def check_calls(monkeypatch):
    """Counts check_float / check_mask calls by argument name, wherever npformer imported them."""
    calls = collections.Counter()
    for fname in ("check_float", "check_mask"):
        original = getattr(validation, fname)

        def counting(name, *a, _original=original, _f=fname, **k):
            calls[(_f, name)] += 1
            return _original(name, *a, **k)
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("npformer.") and \
                    getattr(mod, fname, None) is original:
                monkeypatch.setattr(mod, fname, counting)
    return calls


def _models():
    seq = nf.Transformer(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                                              num_decoder_layers=1, vocab_size=13, max_len=9,
                                              dtype="float64", dropout=0.1), seed=0)
    lm = CausalLM(TransformerConfig(vocab_size=13, pad_id=0, d_model=8, num_heads=2, d_ff=16,
                                    num_decoder_layers=2, num_encoder_layers=0, max_len=9,
                                    dtype="float64", dropout=0.1, activation="gelu_tanh",
                                    norm_first=True, final_norm=True), seed=0)
    return {"Transformer": seq, "CausalLM": lm}


def _step(model, loss):
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(3, 13, size=(3, 5)), rng.integers(3, 13, size=(3, 6))
    model.train()
    logits = model(src, tgt) if isinstance(model, nf.Transformer) else model(tgt)
    value = loss(logits, rng.integers(3, 13, size=tgt.shape))
    model.backward(loss.backward())
    model.eval()
    model(src, tgt) if isinstance(model, nf.Transformer) else model(tgt)
    return value


@pytest.mark.parametrize("kind", ["Transformer", "CausalLM"])
def test_accelerated_forward_checks_each_input_as_often_as_the_plain_one(kind, check_calls):
    plain_model, loss = _models()[kind], CrossEntropyLoss()
    want = _step(plain_model, loss)
    plain_counts = dict(check_calls)
    check_calls.clear()
    fast_model, fast_loss = _models()[kind], CrossEntropyLoss()
    accelerate(fast_model, 2)
    accelerate(fast_loss, 2)
    got = _step(fast_model, fast_loss)
    assert dict(check_calls) == plain_counts
    assert plain_counts                                   # the counter saw the checks at all
    assert got == want


def test_bad_input_is_still_refused_by_an_accelerated_module():
    ln = accelerate(nf.LayerNorm(4, dtype="float64"), 2)
    with pytest.raises(ValueError, match="x: expected finite values"):
        ln(np.array([[1.0, np.nan, 0.0, 2.0]]))
    with pytest.raises(ValueError, match="x: expected last dimension 4"):
        ln(np.ones((2, 3)))


def test_bad_upstream_gradient_is_refused_by_an_accelerated_backward():
    """The fast backward methods check nothing themselves: the class's registered backward guard
    runs before them, as before the plain ones."""
    ln = accelerate(nf.LayerNorm(4, dtype="float64"), 2)
    ln(np.ones((2, 4)))
    with pytest.raises(ValueError, match="dout"):
        ln.backward(np.ones((2, 3)))
    loss = accelerate(CrossEntropyLoss(), 2)
    loss(np.zeros((2, 5)), np.array([1, 2]))
    with pytest.raises((TypeError, ValueError), match="dout"):
        loss.backward(np.ones(3))
    mha = accelerate(nf.MultiHeadAttention(4, 2, dtype="float64"), 2)
    x = np.ones((1, 3, 4))
    mha(x, x, x)
    with pytest.raises(ValueError, match="dout"):
        mha.backward(np.ones((1, 3, 5)))
