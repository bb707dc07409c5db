"""The damaged files the fuzz tests (test_checkpoint_fuzzed.py, test_pretrained_files_fuzzed.py,
tests/npformer/data/tokenizers/test_tokenizer_files_fuzzed.py) found, one explicit case each: every
one used to raise a raw exception of another type, or a ValueError that did not name the file."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from npformer.io import checkpoint as ck
from npformer.io import hub
from npformer.io.checkpoint_file import CheckpointError
from npformer.io.safetensors import read_safetensors
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig, gpt2_config

HUGE_NUMBER = "1" * 5000                 # Python's int() refuses more than 4300 digits


def _checkpoint(path):
    c = TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=0, num_decoder_layers=1,
                          vocab_size=7, max_len=6, dropout=0.0, dtype="float32")
    model = CausalLM(c)
    ck.save_checkpoint(path, model)
    return model


def _rewrite(path, change):
    src = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, change(info.filename, zin.read(info)))


def test_an_encrypted_zip_entry_is_a_named_error(tmp_path):
    path = tmp_path / "enc.npz"
    _checkpoint(path)
    data = bytearray(path.read_bytes())
    at = data.index(b"PK\x01\x02") + 8                 # the first central entry's flag bits
    data[at] |= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="enc.npz.*encrypted"):   # was RuntimeError
        ck.load_checkpoint(path)


def test_an_npy_header_whose_dtype_is_an_empty_tuple_is_a_named_error(tmp_path):
    path = tmp_path / "descr.npz"
    _checkpoint(path)

    def change(name, raw):
        if name != "format_version.npy":
            return raw
        text = b"{'descr': (), 'fortran_order': False, 'shape': (), }"
        text += b" " * (64 - (10 + len(text) + 1) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + raw[-8:]

    _rewrite(path, change)
    with pytest.raises(CheckpointError, match="descr.npz.*bad .npy header"):   # was IndexError
        ck.load_checkpoint(path)


def test_big_endian_weights_load_as_the_numbers_they_hold(tmp_path):
    path = tmp_path / "be.npz"
    model = _checkpoint(path)

    def change(name, raw):
        if not name.startswith("model/"):
            return raw
        out = io.BytesIO()
        a = np.load(io.BytesIO(raw), allow_pickle=False)
        np.save(out, a.astype(">f4"))
        return out.getvalue()

    _rewrite(path, change)
    loaded = ck.load_model(path)          # was a ValueError from load_state_dict naming no file
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(loaded.state_dict()[k], v)


def test_a_float128_weight_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "ld.npz"
    _checkpoint(path)

    def change(name, raw):
        if name != "model/output_proj.bias.npy":
            return raw
        out = io.BytesIO()
        np.save(out, np.load(io.BytesIO(raw), allow_pickle=False).astype(np.longdouble))
        return out.getvalue()

    _rewrite(path, change)
    if np.dtype(np.longdouble).itemsize == 8:
        pytest.skip("long double is float64 on this platform")
    with pytest.raises(CheckpointError, match="ld.npz.*float16, float32 or float64"):
        ck.load_model(path)


def test_a_checkpoint_header_with_a_5000_digit_number_names_the_file(tmp_path):
    path = tmp_path / "digits.npz"
    _checkpoint(path)

    def change(name, raw):
        if name != "header.npy":
            return raw
        text = str(np.load(io.BytesIO(raw), allow_pickle=False)[()])
        out = io.BytesIO()
        np.save(out, np.array(text.replace('"step": 0', f'"step": {HUGE_NUMBER}')))
        return out.getvalue()

    _rewrite(path, change)
    with pytest.raises(CheckpointError, match="digits.npz.*not valid JSON"):
        ck.load_checkpoint(path)


def _safetensors(path, header: str, data: bytes = b"\0" * 4):
    raw = header.encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + data)
    return path


@pytest.mark.parametrize("dtype", [["F32"], {"a": 1}])
def test_a_safetensors_dtype_that_is_not_a_string_names_the_file(tmp_path, dtype):
    path = _safetensors(tmp_path / "w.safetensors",
                        json.dumps({"w": {"dtype": dtype, "shape": [1], "data_offsets": [0, 4]}}))
    with pytest.raises(ValueError, match="w.safetensors.*dtype"):     # was TypeError: unhashable
        read_safetensors(path)


def test_safetensors_offsets_that_are_booleans_are_refused(tmp_path):
    path = _safetensors(tmp_path / "b.safetensors", json.dumps(
        {"w": {"dtype": "U8", "shape": [1], "data_offsets": [False, True]}}), b"\0")
    with pytest.raises(ValueError, match="b.safetensors.*data_offsets"):
        read_safetensors(path)


def test_a_safetensors_header_with_a_5000_digit_number_names_the_file(tmp_path):
    path = _safetensors(tmp_path / "n.safetensors",
                        '{"w": {"dtype": "F32", "shape": [' + HUGE_NUMBER + '], "data_offsets": [0, 4]}}')
    with pytest.raises(ValueError, match="n.safetensors.*not JSON"):
        read_safetensors(path)


@pytest.fixture
def gpt2_dir(tmp_path):
    path = tmp_path / "gpt2"
    c = gpt2_config(vocab_size=9, max_len=8, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1)
    hub.save_pretrained(CausalLM(c), path)
    return path


@pytest.mark.parametrize("key,value", [
    ("architectures", True),                   # was TypeError: 'bool' object is not iterable
    ("architectures", [["GPT2LMHeadModel"]]),  # was TypeError: unhashable type: 'list'
    ("model_type", ["gpt2"]),
    ("activation_function", None),             # a ValueError naming only hf_config
    ("attn_pdrop", None),                      # a ValueError naming only config.json
    ("n_embd", "8"),
])
def test_a_config_json_value_of_the_wrong_type_names_the_folder(gpt2_dir, key, value):
    cfg = gpt2_dir / "config.json"
    d = json.loads(cfg.read_text())
    d[key] = value
    if key == "model_type":
        d.pop("architectures")
    cfg.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=str(gpt2_dir)):
        hub.from_pretrained(gpt2_dir)


def test_a_config_json_with_a_5000_digit_number_names_the_file(gpt2_dir):
    cfg = gpt2_dir / "config.json"
    cfg.write_text(cfg.read_text().replace('"n_layer": 1', f'"n_layer": {HUGE_NUMBER}'))
    with pytest.raises(ValueError, match="config.json.*not JSON"):
        hub.from_pretrained(gpt2_dir)


def test_a_tokenizer_dict_whose_type_is_a_list_is_a_named_error():
    from npformer.data.tokenizers import tokenizer_from_dict
    with pytest.raises(ValueError, match="tokenizer dict"):          # was TypeError: unhashable
        tokenizer_from_dict({"type": [], "chars": "abc"})


def test_a_merges_file_naming_a_token_the_vocabulary_lacks_names_the_file(tmp_path):
    from npformer.data.tokenizers import GPT2Tokenizer
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2}), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na c\n", encoding="utf-8")
    with pytest.raises(ValueError, match="merges.txt"):   # was "merges: ..." naming no file
        GPT2Tokenizer.from_folder(str(tmp_path))


def test_a_vocab_json_with_a_5000_digit_id_names_the_file(tmp_path):
    from npformer.data.tokenizers import GPT2Tokenizer
    (tmp_path / "vocab.json").write_text('{"a": ' + HUGE_NUMBER + "}", encoding="utf-8")
    (tmp_path / "merges.txt").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="vocab.json.*invalid JSON"):
        GPT2Tokenizer.from_folder(str(tmp_path))
