"""Every TransformerConfig field, set to a value that is NOT its default, survives a checkpoint and
takes effect: the loaded model (npformer's load_model, and torchformer's) has the same config and
computes what the saved model computed, and a model with that one field at its base value either
cannot hold the weights or computes something else (so the field is really read, not defaulted).
The dropout rates do not act in eval mode: for them the loaded config is checked."""
import dataclasses

import numpy as np
import pytest

from npformer.io import checkpoint as ck
from npformer.models.bert import BertForMaskedLM
from npformer.models.causal_lm import CausalLM
from npformer.models.classifier import EncoderClassifier
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer

BASE = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
            max_len=12, vocab_size=11, pad_id=0, dropout=0.0, dtype="float64")
SRC = np.array([[4, 3, 5, 6, 2, 0], [7, 8, 3, 9, 2, 0]])              # 3 is a pad_id below
TGT = np.array([[1, 5, 3, 4], [1, 9, 8, 0]])

# (field, non-default value, model class, extra base fields the value needs)
CASES = [
    ("d_model", 12, Transformer, {}), ("num_heads", 4, Transformer, {}),
    ("d_ff", 24, Transformer, {}), ("num_encoder_layers", 2, Transformer, {}),
    ("num_decoder_layers", 2, Transformer, {}), ("max_len", 14, Transformer,
                                                 {"positional": "learned"}),
    ("vocab_size", 13, Transformer, {}), ("src_vocab_size", 10, Transformer, {}),
    ("tgt_vocab_size", 14, Transformer, {}), ("pad_id", 3, Transformer, {}),
    ("num_classes", 5, EncoderClassifier, {}), ("pooling", "mean", EncoderClassifier, {}),
    ("activation", "gelu", Transformer, {}), ("activation", "gelu_tanh", Transformer, {}),
    ("norm_first", True, Transformer, {}), ("final_norm", True, Transformer, {}),
    ("layer_norm_eps", 0.5, Transformer, {}), ("positional", "learned", Transformer, {}),
    ("scale_embeddings", False, Transformer, {}), ("tie_embeddings", True, CausalLM, {}),
    ("share_embeddings", True, Transformer, {}), ("bias", False, Transformer, {}),
    ("output_bias", False, CausalLM, {}), ("type_vocab_size", 3, BertForMaskedLM, {}),
    ("embedding_norm", True, BertForMaskedLM, {}), ("dropout", 0.3, Transformer, {}),
    ("attention_dropout", 0.2, Transformer, {}), ("activation_dropout", 0.25, Transformer, {}),
    ("dtype", "float32", Transformer, {}),
]
EVAL_INERT = {"dropout", "attention_dropout", "activation_dropout"}


def test_the_cases_cover_every_field():
    assert {f.name for f in dataclasses.fields(TransformerConfig)} == {c[0] for c in CASES}
    defaults = TransformerConfig()
    for field, value, _, _ in CASES:                # differs from the default, or from BASE's
        assert getattr(defaults, field) != value or BASE[field] != value, field
    assert BASE["dtype"] != defaults.dtype          # every case runs in float64, itself non-default


def _run(model):
    model.eval()
    name = type(model).__name__
    if name == "Transformer":
        return model(SRC, TGT)
    if name == "CausalLM":
        return model(TGT)
    if name == "EncoderClassifier":
        return model(SRC)
    types = np.array([[0, 1, 2, 0, 1, 2], [2, 2, 1, 1, 0, 0]]) % max(model.config.type_vocab_size, 1)
    return model(SRC, types if model.config.type_vocab_size else None)


def _unique_params(model) -> int:
    """Distinct Parameter objects held by all submodules (a shared one counts once)."""
    return len({id(p) for _, m in model.named_modules() for p in m._parameters.values()})


def _differs(cls, config, state, want):
    try:
        m = cls(config)
        m.load_state_dict(state)
        return not np.allclose(_run(m), want, rtol=1e-6, atol=1e-8)
    except ValueError:                                             # cannot hold the weights
        return True


@pytest.mark.parametrize("field, value, cls, extra", CASES,
                         ids=[f"{c[0]}={c[1]}" for c in CASES])
def test_field_survives_the_checkpoint_and_takes_effect(tmp_path, field, value, cls, extra):
    base = dict(BASE, **extra)
    if cls is BertForMaskedLM:
        base.update(positional="learned", type_vocab_size=2, embedding_norm=False,
                    num_decoder_layers=0)
        base.update({field: value})
    config = TransformerConfig(**dict(base, **{field: value}))
    model = cls(config, seed=3)
    want = _run(model)
    path = ck.save_checkpoint(tmp_path / "m.npz", model)
    loaded = ck.load_model(path)
    assert type(loaded) is cls and loaded.config == config
    assert getattr(loaded.config, field) == value
    got = _run(loaded)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    torch = pytest.importorskip("torch")
    from torchformer.io.checkpoint import load_model as tf_load
    tf = tf_load(path)
    assert tf.config == config
    if field in ("tie_embeddings", "share_embeddings"):
        # the field shares a Parameter (what training updates), it changes no eval-mode output
        other = cls(TransformerConfig(**base))
        assert _unique_params(loaded) == _unique_params(other) - 1, field
    elif field not in EVAL_INERT:
        # the field matters: at its base value the same weights give something else (or fail)
        other = TransformerConfig(**dict(base, **{field: BASE.get(field, getattr(
            TransformerConfig(), field))})) if field != "dtype" else None
        if other is not None and other != config:
            assert _differs(cls, other, model.state_dict(), want), field
    with torch.no_grad():
        tf.eval()
        if cls is Transformer:
            t_out = tf(torch.as_tensor(SRC), torch.as_tensor(TGT))
        elif cls is CausalLM:
            t_out = tf(torch.as_tensor(TGT))
        elif cls is EncoderClassifier:
            t_out = tf(torch.as_tensor(SRC))
        else:
            return                                                 # BERT twins: parity_tests
    np.testing.assert_allclose(t_out.numpy(), want, rtol=1e-5 if field == "dtype" else 1e-10,
                               atol=1e-6 if field == "dtype" else 1e-12)
