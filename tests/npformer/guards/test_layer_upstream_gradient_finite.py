"""A layer's or stage's own backward, called by the user, refuses a NaN or inf upstream gradient as a
model's does (it used to return NaN gradients silently); inside a parent's backward the same check
does not scan again, so a model's backward scans its upstream gradient once."""
import numpy as np
import pytest

import npformer as nf
import npformer.guards.layers as guard_layers
import npformer.guards.models as guard_models
from npformer.models.decoder import Decoder, DecoderLayer
from npformer.models.encoder import Encoder, EncoderLayer

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8))
MEM = RNG.standard_normal((2, 4, 8))


def cfg():
    return nf.TransformerConfig(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2,
                                num_decoder_layers=2, max_len=6, vocab_size=13, pad_id=0,
                                dropout=0.0, dtype="float64")


def rng():
    return np.random.default_rng(1)


# (name, build, forward returning the output whose gradient backward takes)
LAYERS = [
    ("Linear", lambda: nf.Linear(8, 5, dtype="float64", rng=rng()), lambda m: m(X)),
    ("LayerNorm", lambda: nf.LayerNorm(8, dtype="float64"), lambda m: m(X)),
    ("Activation", lambda: nf.Activation("gelu"), lambda m: m(X)),
    ("Dropout", lambda: nf.Dropout(0.5, rng=rng()), lambda m: m(X)),
    ("Embedding", lambda: nf.Embedding(13, 8, dtype="float64", rng=rng()),
     lambda m: m(np.array([[1, 2, 3]]))),
    ("SinusoidalPositionalEncoding", lambda: nf.SinusoidalPositionalEncoding(8, 6, dtype="float64"),
     lambda m: m(X)),
    ("MultiHeadAttention", lambda: nf.MultiHeadAttention(8, 2, dtype="float64", rng=rng()),
     lambda m: m(X, MEM, MEM)),
    ("PositionwiseFeedForward", lambda: nf.PositionwiseFeedForward(8, 12, dtype="float64", rng=rng()),
     lambda m: m(X)),
    ("EncoderLayer", lambda: EncoderLayer(cfg(), rng=rng()), lambda m: m(X)),
    ("Encoder", lambda: Encoder(cfg(), rng=rng()), lambda m: m(X)),
    ("DecoderLayer", lambda: DecoderLayer(cfg(), rng=rng()), lambda m: m(X, MEM)),
    ("Decoder", lambda: Decoder(cfg(), rng=rng()), lambda m: m(X, MEM)),
]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name, build, forward", LAYERS, ids=[c[0] for c in LAYERS])
def test_a_layers_own_backward_refuses_a_non_finite_upstream_gradient(name, build, forward, bad):
    model = build()
    out = forward(model)
    g = np.random.default_rng(3).standard_normal(out.shape).astype(out.dtype)
    poisoned = g.copy()
    poisoned.flat[[0, -1]] = bad
    with pytest.raises(ValueError, match=rf"^dout: expected a finite upstream gradient, got 2 NaN/inf "
                                         rf"entries of {g.size}$"):
        model.backward(poisoned)
    for pname, p in model.named_parameters():
        assert not p.grad.any(), pname                            # nothing accumulated
    grads = model.backward(g)                                     # the cache survived the refusal
    for got in grads if isinstance(grads, tuple) else [grads]:
        assert got is None or np.isfinite(got).all()


def test_a_models_backward_scans_its_upstream_gradient_once(monkeypatch):
    """Every backward inside the model's checks shape and dtype only; the model's own entry scans."""
    scans = []

    def spy(check_grad):
        def checked(name, dout, like, *, finite=False):
            scans.append((name, finite))
            return check_grad(name, dout, like, finite=finite)
        return checked

    monkeypatch.setattr(guard_layers, "check_grad", spy(guard_layers.check_grad))
    monkeypatch.setattr(guard_models, "check_grad", spy(guard_models.check_grad))
    model = nf.Transformer(cfg())
    logits = model(np.array([[1, 2, 3], [4, 5, 0]]), np.array([[1, 2], [3, 4]]))
    model.backward(np.random.default_rng(4).standard_normal(logits.shape))
    assert len(scans) > 10                                        # the inner checks ran
    assert [s for s in scans if s[1]] == [("dlogits", True)], scans
