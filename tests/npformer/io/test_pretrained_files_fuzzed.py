"""Hugging Face folders from outside, fuzzed: a tiny GPT-2 folder written by save_pretrained, its
model.safetensors (bytes, header JSON) and config.json mutated. read_safetensors returns exactly the
bytes its header points at (read here independently), and both twins' from_pretrained load or raise
a ValueError naming the file (the rule: tests/fuzz_files.py)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.io import hub
from npformer.io.safetensors import DTYPES, read_safetensors
from npformer.models.causal_lm import CausalLM
from npformer.models.config import gpt2_config
from tests.fuzz_files import (
    byte_mutations,
    draw_json_mutation,
    dumps,
    fuzz_settings,
    loads_or_names_the_file,
    mutate_bytes,
)


class Folder(str):
    def __repr__(self):
        return "Folder(tiny GPT-2)"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "gpt2"
    c = gpt2_config(vocab_size=9, max_len=8, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                    dropout=0.0, attention_dropout=0.0)
    hub.save_pretrained(CausalLM(c), path)
    return Folder(path)


def _copy(folder, tmp_path_factory):
    dest = tmp_path_factory.mktemp("m") / "gpt2"
    shutil.copytree(folder, dest)
    return dest


def held(path) -> dict:
    """{name: array} as the file's own bytes say, parsed here without the library."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=DTYPES[e["dtype"]])
        if e["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = a.reshape(e["shape"])
    return out


def _check_folder(path):
    loads_or_names_the_file(lambda: hub.from_pretrained(path), path, (ValueError,))
    tf_hub = pytest.importorskip("torchformer.io.hub")
    loads_or_names_the_file(lambda: tf_hub.from_pretrained(path), path, (ValueError,))


def _check_safetensors(path):
    got = loads_or_names_the_file(lambda: read_safetensors(path), path, (ValueError,))
    if got is not None:
        want = held(path)
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])


@fuzz_settings(60)
@given(ops=byte_mutations)
def test_mutated_safetensors_bytes_read_what_the_file_holds_or_name_it(folder, tmp_path_factory, ops):
    path = _copy(folder, tmp_path_factory)
    st_file = path / "model.safetensors"
    st_file.write_bytes(mutate_bytes(st_file.read_bytes(), ops))
    _check_safetensors(st_file)
    _check_folder(path)


@fuzz_settings(80)
@given(data=st.data(), pad=st.integers(0, 9))
def test_mutated_safetensors_header_fields_name_the_file(folder, tmp_path_factory, data, pad):
    path = _copy(folder, tmp_path_factory)
    st_file = path / "model.safetensors"
    raw = st_file.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = draw_json_mutation(data, json.loads(raw[8:8 + n]))
    text = dumps(header).encode("utf-8", "surrogatepass") + b" " * pad
    st_file.write_bytes(len(text).to_bytes(8, "little") + text + raw[8 + n:])
    _check_safetensors(st_file)
    _check_folder(path)


@fuzz_settings(80)
@given(data=st.data(), text_ops=st.one_of(st.none(), byte_mutations))
def test_mutated_config_json_names_the_file(folder, tmp_path_factory, data, text_ops):
    path = _copy(folder, tmp_path_factory)
    cfg = path / "config.json"
    text = dumps(draw_json_mutation(data, json.loads(cfg.read_text()))).encode("utf-8", "surrogatepass")
    if text_ops is not None:
        text = mutate_bytes(text, text_ops)
    cfg.write_bytes(text)
    _check_folder(path)
