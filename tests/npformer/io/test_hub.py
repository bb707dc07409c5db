"""npformer.io.safetensors and npformer.io.hub without torch: the safetensors reader/writer (round trip,
every dtype, bfloat16, the `safetensors` library reading our files and we reading its files, damaged
files refused before any data is read, no silent overwrite), the name plan (every parameter mapped
exactly once, both directions inverse), config mapping and its refusals, folder loading (a GPT-2
folder written here runs; pickle files are refused) and the GPT-2 fine-tuning recipe of the README."""
import json
import struct

import numpy as np
import pytest

import npformer as nf
from npformer.io import hub
from npformer.io.safetensors import SafetensorsError, read_safetensors, write_safetensors

TINY_GPT2 = dict(vocab_size=13, max_len=8, d_model=8, num_heads=2, d_ff=12, num_decoder_layers=2)
TINY_BERT = dict(vocab_size=13, max_len=8, d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2,
                 pad_id=0, num_classes=3)


def jitter(model, seed=0):
    rng = np.random.default_rng(seed)
    for _, p in model.named_parameters():
        p.data += (0.1 * rng.standard_normal(p.shape)).astype(p.dtype)
    return model


# --------------------------------------------------------------------------------------------------
# safetensors format
# --------------------------------------------------------------------------------------------------
def test_write_read_round_trip_every_dtype(tmp_path):
    rng = np.random.default_rng(0)
    t = {"a": rng.standard_normal((3, 4)).astype(np.float32), "b": rng.standard_normal(5),
         "c": np.arange(6, dtype=np.int64).reshape(2, 3), "d": np.array([True, False]),
         "e": rng.standard_normal((2, 2)).astype(np.float16), "empty": np.zeros((0, 3), np.float32)}
    write_safetensors(tmp_path / "m.safetensors", t, {"format": "pt"})
    back = read_safetensors(tmp_path / "m.safetensors")
    assert sorted(back) == sorted(t)
    for k, v in t.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        write_safetensors(tmp_path / "m.safetensors", t)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]   # no temp file left


def test_bfloat16_is_widened_exactly(tmp_path):
    x = np.array([1.0, -2.5, 3.140625, 1e-3], np.float32)
    bf16 = (x.view(np.uint32) >> 16).astype(np.uint16)                   # truncate to bfloat16
    header = json.dumps({"x": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}).encode()
    (tmp_path / "b.safetensors").write_bytes(struct.pack("<Q", len(header)) + header
                                             + bf16.astype("<u2").tobytes())
    got = read_safetensors(tmp_path / "b.safetensors")["x"]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (bf16.astype(np.uint32) << 16).view(np.float32))


def test_the_safetensors_library_agrees_both_ways(tmp_path):
    st = pytest.importorskip("safetensors.numpy", reason="the [hf] extra is not installed")
    rng = np.random.default_rng(1)
    t = {"w": rng.standard_normal((4, 3)).astype(np.float32), "i": np.arange(5, dtype=np.int32)}
    write_safetensors(tmp_path / "ours.safetensors", t)
    theirs = st.load_file(str(tmp_path / "ours.safetensors"))
    st.save_file(t, str(tmp_path / "theirs.safetensors"))
    ours = read_safetensors(tmp_path / "theirs.safetensors")
    for k, v in t.items():
        np.testing.assert_array_equal(theirs[k], v)
        np.testing.assert_array_equal(ours[k], v)


def _file(tmp_path, header: dict, data: bytes, n: int | None = None):
    raw = json.dumps(header).encode()
    p = tmp_path / "bad.safetensors"
    p.write_bytes(struct.pack("<Q", len(raw) if n is None else n) + raw + data)
    return p


@pytest.mark.parametrize("header, data, n, match", [
    ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8, 10 ** 12,
     "header length"),
    ({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, None,
     "needs 12 bytes"),
    ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, None,
     "cover 8 bytes of data, the file holds 4"),
    ({"x": {"dtype": "X9", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8, None, "dtype 'X9'"),
    ({"x": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8, None, "shape"),
    ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "y": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, b"\0" * 12, None, "gap"),
    ({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4, None, "expected keys"),
])
def test_damaged_files_are_refused_with_the_reason(tmp_path, header, data, n, match):
    with pytest.raises(SafetensorsError, match=match):
        read_safetensors(_file(tmp_path, header, data, n))


def test_not_json_and_too_short(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(b"\x03\0\0\0\0\0\0\0abc")
    with pytest.raises(SafetensorsError, match="not JSON"):
        read_safetensors(p)
    p.write_bytes(b"\x01\0")
    with pytest.raises(SafetensorsError, match="at least 8 bytes"):
        read_safetensors(p)


# --------------------------------------------------------------------------------------------------
# the name plan and configs
# --------------------------------------------------------------------------------------------------
MODELS = {"gpt2": lambda **k: nf.CausalLM(nf.gpt2_config(**TINY_GPT2, **k)),
          "bert": lambda **k: nf.BertModel(nf.bert_config(**TINY_BERT, **k)),
          "bert_mlm": lambda **k: nf.BertForMaskedLM(nf.bert_config(**TINY_BERT, **k)),
          "bert_cls": lambda **k: nf.BertForSequenceClassification(nf.bert_config(**TINY_BERT, **k))}


@pytest.mark.parametrize("tie", [True, False])
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_plan_maps_every_parameter_once_and_inverts(kind, tie):
    m = jitter(MODELS[kind](tie_embeddings=tie, dtype="float64"))
    P = hub.plan(kind, m.config)
    distinct = [n for n, _ in m.named_parameters()]
    assert sorted(o for o, _, _ in P) == sorted(distinct)
    hf = hub.to_hf_state_dict(m)
    back, skipped = hub.hf_to_state(kind, m.config, hf)
    from npformer.io.hub_mapping import unused_copies
    extra = hub.tied(kind, m.config).keys() | unused_copies(kind, m.config).keys()
    assert skipped == sorted(extra & hf.keys())
    sd = m.state_dict()
    assert sorted(back) == sorted(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(back[k], v, err_msg=k)


def test_config_round_trip_and_refusals():
    for kind, make in MODELS.items():
        c = make().config
        unused = ({"pad_id": None, "num_classes": 2} if kind == "gpt2"     # not in HF's config
                  else {} if kind == "bert_cls" else {"num_classes": 2})
        assert hub.config_from_hf(hub.hf_config_for(kind, c), kind) == c.replace(**unused)
    with pytest.raises(ValueError, match="no Hugging Face GPT2LMHeadModel has this layout"):
        hub.hf_config_for("gpt2", nf.gpt2_config(**TINY_GPT2, norm_first=False))
    with pytest.raises(ValueError, match="hidden_act: expected one of"):
        hub.config_from_hf({**hub.hf_config_for("bert", MODELS["bert"]().config),
                            "hidden_act": "silu"}, "bert")
    with pytest.raises(ValueError, match="position_embedding_type"):
        hub.config_from_hf({**hub.hf_config_for("bert", MODELS["bert"]().config),
                            "position_embedding_type": "relative_key"}, "bert")
    with pytest.raises(ValueError, match="missing 'n_embd'"):
        hub.config_from_hf({"model_type": "gpt2", "vocab_size": 5, "n_positions": 8}, "gpt2")
    with pytest.raises(ValueError, match="expected a GPT-2 or BERT model"):
        hub.kind_from_hf({"model_type": "t5", "architectures": ["T5Model"]})


def test_missing_unexpected_and_conflicting_keys_are_named():
    m = MODELS["gpt2"]()
    hf = hub.to_hf_state_dict(m)
    bad = {k: v for k, v in hf.items() if k != "transformer.h.1.ln_2.bias"}
    bad["transformer.h.0.extra"] = np.zeros(2, np.float32)
    with pytest.raises(ValueError, match=r"missing \['transformer.h.1.ln_2.bias'\], unexpected "
                                         r"\['transformer.h.0.extra'\]"):
        hub.hf_to_state("gpt2", m.config, bad)
    hf["lm_head.weight"] = hf["lm_head.weight"] + 1
    with pytest.raises(ValueError, match="lm_head.weight differs from transformer.wte.weight"):
        hub.hf_to_state("gpt2", m.config, hf)


def test_original_checkpoint_names_load():
    """GPT-2's released file has no "transformer." prefix and holds attn.bias mask buffers; old
    BERT files say LayerNorm.gamma/beta and carry the next-sentence head."""
    m = MODELS["gpt2"]()
    hf = {k.replace("transformer.", ""): v for k, v in hub.to_hf_state_dict(m).items()
          if k != "lm_head.weight"}
    hf["h.0.attn.bias"] = np.tril(np.ones((1, 1, 8, 8), np.float32))
    state, skipped = hub.hf_to_state("gpt2", m.config, hf)
    assert skipped == ["transformer.h.0.attn.bias"]
    b = MODELS["bert_mlm"]()
    hf = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
          for k, v in hub.to_hf_state_dict(b).items()}
    hf["cls.seq_relationship.weight"] = np.zeros((2, 8), np.float32)
    hf["bert.pooler.dense.weight"] = np.zeros((8, 8), np.float32)
    state, skipped = hub.hf_to_state("bert_mlm", b.config, hf)
    assert "cls.seq_relationship.weight" in skipped and "bert.pooler.dense.weight" in skipped
    np.testing.assert_array_equal(state["bert.embed_norm.weight"], b.bert.embed_norm.weight.data)


# --------------------------------------------------------------------------------------------------
# folders and the README recipe
# --------------------------------------------------------------------------------------------------
def test_pickle_files_are_never_loaded(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(hub.hf_config_for(
        "gpt2", MODELS["gpt2"]().config)))
    (tmp_path / "pytorch_model.bin").write_bytes(b"not opened")
    with pytest.raises(FileNotFoundError, match="pickle files and are never loaded"):
        hub.from_pretrained(tmp_path)


def test_gpt2_recipe_from_a_folder_runs_and_fine_tunes(tmp_path):
    """The README recipe on a tiny folder: load, generate greedily, fine-tune a few Adam steps."""
    src = jitter(MODELS["gpt2"](), seed=3)
    hub.save_pretrained(src, tmp_path / "gpt2")
    model = hub.from_pretrained(tmp_path / "gpt2")              # what the recipe calls
    assert isinstance(model, nf.CausalLM) and not model.training
    ids = np.array([[1, 5, 7, 2, 9, 4]])
    np.testing.assert_array_equal(model(ids), src.eval()(ids))
    from npformer.decoding.generate import greedy_decode
    out = greedy_decode(model, ids[:, :3], max_new_tokens=4, eos_id=None, suppress_ids=())
    seq = ids[:, :3]
    for _ in range(4):                                          # the same without the KV cache
        seq = np.concatenate([seq, model(seq)[:, -1].argmax(-1)[:, None]], axis=1)
    np.testing.assert_array_equal(out.tokens, seq[:, 3:])
    model.train()
    opt = nf.Adam(model.parameters(), lr=1e-2)
    loss_fn = nf.CrossEntropyLoss()
    losses = []
    for _ in range(5):
        logits = model(ids[:, :-1])                             # predict token t+1 from tokens <= t
        losses.append(float(loss_fn(logits, ids[:, 1:])))
        model.zero_grad()
        model.backward(loss_fn.backward())
        opt.step()
    assert losses[-1] < losses[0]
    hub.save_pretrained(model, tmp_path / "tuned")
    again = hub.from_pretrained(tmp_path / "tuned")
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(again.state_dict()[k], v)


def test_untied_bert_mlm_reads_the_bias_transformers_adds():
    """With tie_word_embeddings=False transformers keeps cls.predictions.bias beside the decoder's own
    bias and adds only the decoder's: the converted model must use that one (it used to refuse the
    model because the two differ)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
    cfg = transformers.BertConfig(vocab_size=11, hidden_size=8, num_attention_heads=2,
                                  num_hidden_layers=1, intermediate_size=16, max_position_embeddings=16,
                                  tie_word_embeddings=False, pad_token_id=0)
    torch.manual_seed(0)
    hf = transformers.BertForMaskedLM(cfg).double().eval()
    with torch.no_grad():
        hf.cls.predictions.decoder.bias.copy_(torch.randn(11, dtype=torch.float64))
        hf.cls.predictions.bias.copy_(torch.randn(11, dtype=torch.float64))   # never read by HF
    ids = np.array([[2, 5, 7, 1]])
    with torch.no_grad():
        want = hf(torch.from_numpy(ids)).logits.numpy()
    model = hub.from_transformers(hf, dtype="float64")
    np.testing.assert_allclose(model(ids), want, rtol=1e-12, atol=1e-12)
    back = hub.to_hf_state_dict(model)                    # both biases written, as the one it reads
    np.testing.assert_array_equal(back["cls.predictions.bias"], back["cls.predictions.decoder.bias"])
    np.testing.assert_array_equal(back["cls.predictions.decoder.bias"],
                                  hf.cls.predictions.decoder.bias.detach().numpy())
