"""Malformed Hugging Face folders are refused with a message naming the file and what is wrong,
never a raw JSONDecodeError, AttributeError, KeyError, OverflowError or MemoryError, and never
NaN or integer weights loaded silently. Both twins share the reader, so both are checked where torch
is installed."""
import json
import os

import numpy as np
import pytest

import npformer as nf
from npformer.io import hub
from npformer.io.safetensors import read_safetensors, write_safetensors
from npformer.models.config import gpt2_config


def loaders():
    out = [hub.from_pretrained]
    try:
        import torchformer.io.hub as th
        out.append(th.from_pretrained)
    except ImportError:
        pass
    return out


@pytest.fixture()
def folder(tmp_path):
    c = gpt2_config(vocab_size=20, max_len=16, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1)
    path = tmp_path / "gpt2"
    hub.save_pretrained(nf.CausalLM(c, seed=0), path)
    return path


def refused(folder, match):
    for load in loaders():
        with pytest.raises(ValueError if match[0] != "!" else FileNotFoundError,
                           match=match.lstrip("!")):
            load(folder)


def edit_config(folder, **kw):
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **kw}))


def edit_tensor(folder, fn):
    st = folder / "model.safetensors"
    t = read_safetensors(st)
    fn(t)
    write_safetensors(st, t, overwrite=True)


def test_config_json_not_json(folder):
    (folder / "config.json").write_text("{nope")
    refused(folder, r"config\.json: expected a JSON object .* not JSON")


def test_config_json_a_list(folder):
    (folder / "config.json").write_text("[1, 2]")
    refused(folder, r"config\.json: expected a JSON object .*got a JSON list")


def test_config_larger_than_its_weights_refused_before_allocating(folder):
    edit_config(folder, n_positions=2 ** 40)            # used to ask numpy for 64 TiB
    refused(folder, r"transformer\.wpe\.weight: expected shape \(1099511627776, 8\) .*got \(16, 8\)")


def test_config_vocab_disagreeing_with_weights(folder):
    edit_config(folder, vocab_size=10)
    refused(folder, r"transformer\.wte\.weight: expected shape \(10, 8\) for this config")


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_non_float_weights_refused(folder, dtype):
    edit_tensor(folder, lambda t: t.update({k: (v > 0).astype(dtype) for k, v in t.items()}))
    refused(folder, rf"expected a floating-point tensor, got {np.dtype(dtype)}")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_weights_refused(folder, bad):
    def poison(t):
        t["transformer.h.0.mlp.c_fc.bias"] = t["transformer.h.0.mlp.c_fc.bias"].copy()
        t["transformer.h.0.mlp.c_fc.bias"][3] = bad
    edit_tensor(folder, poison)
    refused(folder, r"h\.0\.mlp\.c_fc\.bias: 1 non-finite values")


def _raw_header_edit(folder, fn):
    st = folder / "model.safetensors"
    raw = st.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    fn(header)
    b = json.dumps(header).encode()
    st.write_bytes(len(b).to_bytes(8, "little") + b + raw[8 + n:])


@pytest.mark.parametrize("shape,match", [([True, 16], "shape must be a list of non-negative ints"),
                                         ([2 ** 70], r"needs \d+ bytes"),
                                         ([2 ** 62, 4], r"needs 73786976294838206464 bytes")])
def test_header_shapes_that_overflow_or_are_bools(folder, shape, match):
    _raw_header_edit(folder, lambda h: h["transformer.h.0.mlp.c_fc.bias"].update(shape=shape))
    refused(folder, match)


def test_shard_index_malformed(folder):
    os.remove(folder / "model.safetensors")
    index = folder / "model.safetensors.index.json"
    index.write_text('{"metadata": {}}')
    refused(folder, r'index\.json: expected "weight_map"')
    index.write_text("[1]")
    refused(folder, r"index\.json: expected a JSON object .*got a JSON list")
    index.write_text('{"weight_map": {"a": "gone.safetensors"}}')
    refused(folder, r"!index\.json: lists shard 'gone\.safetensors', which is not a file")


def test_save_pretrained_disk_full_on_the_second_file_keeps_the_earlier_pair(folder, monkeypatch):
    """The weights used to be replaced before config.json was written: a full disk then left new
    weights beside the old config (a folder that no longer loads, the old weights lost)."""
    import errno
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    c = gpt2_config(vocab_size=30, max_len=16, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1)

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(hub.json, "dumps", full)
    with pytest.raises(OSError, match="No space left"):
        hub.save_pretrained(nf.CausalLM(c, seed=1), folder, overwrite=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before    # no temp file either
    hub.from_pretrained(folder)


def test_save_pretrained_into_a_file_is_a_named_error(tmp_path):
    f = tmp_path / "f"
    f.write_text("keep me")
    c = gpt2_config(vocab_size=20, max_len=16, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1)
    for target, msg in ((f, "is a file; expected a folder"), (f / "sub", "is a file, not a folder")):
        with pytest.raises(ValueError, match=f"folder .*{msg}"):
            hub.save_pretrained(nf.CausalLM(c, seed=0), target)
    assert f.read_text() == "keep me"


def test_absurd_layer_count_refused_before_listing_names(folder, monkeypatch):
    """`"n_layer": 2**1000` used to enumerate every layer's weight names (never returning); the
    name plan must not even be asked for such a config."""
    from npformer.io import hub_mapping
    real = hub_mapping.plan

    def plan(kind, c):
        assert c.num_decoder_layers < 10 ** 6, "plan() asked to list 2**1000 layers"
        return real(kind, c)
    monkeypatch.setattr(hub_mapping, "plan", plan)
    edit_config(folder, n_layer=2 ** 1000)
    refused(folder, r"config\.json: n_layer=10715086.*, but the weights hold 1 layer\(s\)")


def test_bert_layer_count_disagreeing_with_weights(tmp_path):
    from npformer.models.config import bert_config
    c = bert_config(vocab_size=20, max_len=16, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=2)
    path = tmp_path / "bert"
    hub.save_pretrained(nf.BertModel(c, seed=0), path)
    edit_config(path, num_hidden_layers=3)
    refused(path, r"config\.json: num_hidden_layers=3, but the weights hold 2 layer\(s\)")


def test_deeply_nested_config_json_is_one_line_naming_the_file(folder):
    """JSON nested 100,000 deep used to end in a raw RecursionError."""
    (folder / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(folder, r"config\.json: expected a JSON object .*nested too deeply")


def test_deeply_nested_safetensors_header_is_one_line_naming_the_file(folder):
    header = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    refused(folder, r"model\.safetensors.*nested too deeply")


@pytest.mark.parametrize("key,value,needle", [
    ("n_head", 3, r"config\.json: n_embd: expected a multiple of n_head=3, got 8"),
    ("resid_pdrop", 2.0, r"config\.json: resid_pdrop: expected a float in \[0, 1\), got 2\.0"),
    ("layer_norm_epsilon", -1, r"config\.json: layer_norm_epsilon: expected a positive finite float"),
])
def test_bad_config_values_are_named_by_their_config_json_key(folder, key, value, needle):
    """They used to be reported under npformer's names (TransformerConfig.num_heads, .dropout)."""
    edit_config(folder, **{key: value})
    refused(folder, needle)


def test_bad_bert_config_value_named_by_its_key():
    from npformer.io.hub_mapping import config_from_hf
    hf = dict(model_type="bert", vocab_size=20, max_position_embeddings=16, hidden_size=8,
              num_attention_heads=2, intermediate_size=16, num_hidden_layers=1,
              hidden_dropout_prob=1.5)
    with pytest.raises(ValueError, match=r"^config\.json: hidden_dropout_prob: expected a float"):
        config_from_hf(hf, "bert")
