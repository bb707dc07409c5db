"""Every config.json field npformer reads, set to a value that is NOT its default, is shown to take
effect: the loaded config holds it and, where it changes what an eval-mode model computes, the
model's output equals the transformers model's written with that config. (A field read under the
wrong key falls back to its default and fails here; with default values it would pass.)"""
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from npformer.io import hub  # noqa: E402

GPT2 = dict(vocab_size=11, n_positions=8, n_embd=8, n_head=2, n_layer=1, n_inner=12,
            activation_function="gelu_new", bos_token_id=10, eos_token_id=10)
BERT = dict(vocab_size=11, hidden_size=8, num_attention_heads=2, num_hidden_layers=1,
            intermediate_size=12, hidden_act="gelu", max_position_embeddings=8, type_vocab_size=2,
            pad_token_id=0)

# (config.json key, non-default value, our config field, the value it must hold there)
GPT2_FIELDS = [
    ("vocab_size", 17, "vocab_size", 17), ("n_positions", 13, "max_len", 13),
    ("n_embd", 12, "d_model", 12), ("n_head", 4, "num_heads", 4),
    ("n_layer", 3, "num_decoder_layers", 3), ("n_inner", 20, "d_ff", 20),
    ("n_inner", None, "d_ff", 32), ("activation_function", "relu", "activation", "relu"),
    ("activation_function", "gelu", "activation", "gelu"),
    ("layer_norm_epsilon", 0.3, "layer_norm_eps", 0.3),
    ("tie_word_embeddings", False, "tie_embeddings", False),
    ("resid_pdrop", 0.27, "dropout", 0.27), ("attn_pdrop", 0.31, "attention_dropout", 0.31),
]
BERT_FIELDS = [
    ("vocab_size", 17, "vocab_size", 17), ("hidden_size", 12, "d_model", 12),
    ("num_attention_heads", 4, "num_heads", 4), ("num_hidden_layers", 3, "num_encoder_layers", 3),
    ("intermediate_size", 20, "d_ff", 20), ("hidden_act", "relu", "activation", "relu"),
    ("hidden_act", "gelu_new", "activation", "gelu_tanh"),
    ("max_position_embeddings", 13, "max_len", 13), ("type_vocab_size", 3, "type_vocab_size", 3),
    ("layer_norm_eps", 0.3, "layer_norm_eps", 0.3), ("pad_token_id", 5, "pad_id", 5),
    ("num_labels", 4, "num_classes", 4), ("hidden_dropout_prob", 0.27, "dropout", 0.27),
    ("attention_probs_dropout_prob", 0.31, "attention_dropout", 0.31),
    ("tie_word_embeddings", False, "tie_embeddings", False),
]


def _write(tmp_path, cls_name, cfg_cls, cfg, seed=0):
    model = getattr(transformers, cls_name)(cfg_cls(**cfg, attn_implementation="eager")).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = re.search(r"(LayerNorm|ln_\w+)\.weight$", name)
            p.copy_(torch.from_numpy((1.0 if gain else 0.0) + 0.4 * rng.standard_normal(tuple(p.shape))))
    model.eval().save_pretrained(tmp_path)
    return model


@pytest.mark.parametrize("key, value, field, want", GPT2_FIELDS,
                         ids=[f"{k}={v}" for k, v, _, _ in GPT2_FIELDS])
def test_gpt2_field_takes_effect(tmp_path, key, value, field, want):
    cfg = dict(GPT2, **{key: value})
    if key == "n_embd":
        cfg["n_inner"] = None                                   # 4 * 12 = 48
    if key == "resid_pdrop":
        cfg["embd_pdrop"] = value                               # one rate for both (see below)
    ref = _write(tmp_path, "GPT2LMHeadModel", transformers.GPT2Config, cfg)
    ours = hub.from_pretrained(tmp_path, dtype="float64")
    assert getattr(ours.config, field) == want
    ids = np.random.default_rng(1).integers(0, cfg["vocab_size"], (2, min(cfg["n_positions"], 10)))
    with torch.no_grad():
        expected = ref(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(ours(ids), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("key, value, field, want", BERT_FIELDS,
                         ids=[f"{k}={v}" for k, v, _, _ in BERT_FIELDS])
def test_bert_field_takes_effect(tmp_path, key, value, field, want):
    cfg = dict(BERT, **{key: value})
    cls = "BertForSequenceClassification" if key == "num_labels" else "BertForMaskedLM"
    ref = _write(tmp_path, cls, transformers.BertConfig, cfg)
    ours = hub.from_pretrained(tmp_path, dtype="float64")
    assert getattr(ours.config, field) == want
    rng = np.random.default_rng(2)
    T = min(cfg["max_position_embeddings"], 10)
    ids = rng.integers(1, cfg["vocab_size"], (2, T))
    types = rng.integers(0, cfg["type_vocab_size"], (2, T))
    mask = np.ones((2, T), dtype=np.int64)
    mask[1, T - 2:] = 0                                         # a padded row
    with torch.no_grad():
        expected = ref(input_ids=torch.from_numpy(ids), token_type_ids=torch.from_numpy(types),
                       attention_mask=torch.from_numpy(mask)).logits.numpy()
    got = ours(ids, types, mask)
    keep = mask.astype(bool) if got.ndim == 3 else slice(None)  # padded positions: no meaning
    np.testing.assert_allclose(got[keep], expected[keep], rtol=1e-9, atol=1e-9)


def test_gpt2_embedding_dropout_different_from_the_residual_one_is_refused(tmp_path):
    """npformer has one dropout rate for embeddings and residuals; a config.json whose embd_pdrop
    differs from resid_pdrop cannot be modelled and is refused naming both keys (it was silently
    trained with resid_pdrop on the embeddings)."""
    _write(tmp_path, "GPT2LMHeadModel", transformers.GPT2Config, dict(GPT2, embd_pdrop=0.05,
                                                                      resid_pdrop=0.2))
    with pytest.raises(ValueError, match="embd_pdrop.*resid_pdrop|resid_pdrop.*embd_pdrop"):
        hub.from_pretrained(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["embd_pdrop"] = 0.2                                     # equal: accepted
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert hub.from_pretrained(tmp_path).config.dropout == 0.2
