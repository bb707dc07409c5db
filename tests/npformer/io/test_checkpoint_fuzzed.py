"""Checkpoints from outside, fuzzed: a small checkpoint written by save_checkpoint (a CausalLM with an
Adam state), its bytes, zip header fields, .npy headers and JSON header mutated. Both twins' readers
either load the values the file really holds or raise CheckpointError naming the file (the rule:
tests/fuzz_files.py). The explicit cases below the fuzz tests are the bugs it found."""
from __future__ import annotations

import json
import re
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.io import checkpoint as ck
from npformer.io.checkpoint_file import CheckpointError
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.optim import Adam
from tests.fuzz_files import (
    HOSTILE,
    byte_mutations,
    draw_json_mutation,
    dumps,
    fuzz_settings,
    loads_or_names_the_file,
    mutate_bytes,
)


def _model():
    c = TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=0, num_decoder_layers=1,
                          vocab_size=7, max_len=6, dropout=0.0, dtype="float32")
    model = CausalLM(c)
    opt = Adam(model.parameters(), lr=1e-3)
    ids = np.array([[1, 2, 3, 4]])
    loss = CrossEntropyLoss()
    loss.forward(model(ids[:, :-1]), ids[:, 1:])
    model.backward(loss.backward())
    opt.step()
    return model, opt


class Original(tuple):
    def __repr__(self):                   # Hypothesis prints the arguments of a failing example
        return "Original(checkpoint bytes, weights)"


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """(bytes of a valid checkpoint, its weights)."""
    path = tmp_path_factory.mktemp("ckpt") / "good.npz"
    model, opt = _model()
    ck.save_checkpoint(path, model, opt, step=3, metadata={"note": "fuzz"})
    return Original((path.read_bytes(), {k: v.copy() for k, v in model.state_dict().items()}))


def _check_npformer(path, weights):
    """npformer's reader on `path`: loaded values equal what the file holds, or a named error."""
    ckpt = loads_or_names_the_file(lambda: ck.load_checkpoint(path), path, (CheckpointError,))
    if ckpt is not None:
        model = loads_or_names_the_file(lambda: ck.load_model(ckpt), path, (CheckpointError,))
        with np.load(path, allow_pickle=False) as npz:       # what the file really holds
            for k, v in ckpt.state.items():
                np.testing.assert_array_equal(v, npz[f"model/{k}"])
        if model is not None:
            for k, v in model.state_dict().items():
                np.testing.assert_array_equal(v, ckpt.state[k])
    return ckpt


def _check_torchformer(path):
    tck = pytest.importorskip("torchformer.io.checkpoint")
    loads_or_names_the_file(lambda: tck.load_model(path), path, (CheckpointError,))


@fuzz_settings(60)
@given(ops=byte_mutations)
def test_mutated_bytes_load_the_same_weights_or_name_the_file(original, tmp_path_factory, ops):
    data, weights = original
    path = tmp_path_factory.mktemp("m") / "bytes.npz"
    path.write_bytes(mutate_bytes(data, ops))
    ckpt = _check_npformer(path, weights)
    if ckpt is not None:                  # the zip's CRCs cover every array: only metadata changed
        for k, v in weights.items():
            np.testing.assert_array_equal(ckpt.state[k], v)


# zip fields: (signature, offset of the field after it, struct format)
ZIP_FIELDS = [(b"PK\x03\x04", off, fmt) for off, fmt in
              ((6, "<H"), (8, "<H"), (14, "<I"), (18, "<I"), (22, "<I"), (26, "<H"), (28, "<H"))]
ZIP_FIELDS += [(b"PK\x01\x02", off, fmt) for off, fmt in
               ((8, "<H"), (10, "<H"), (20, "<I"), (24, "<I"), (28, "<H"), (30, "<H"), (32, "<H"),
                (42, "<I"))]
ZIP_FIELDS += [(b"PK\x05\x06", off, fmt) for off, fmt in
               ((8, "<H"), (10, "<H"), (12, "<I"), (16, "<I"), (20, "<H"))]


@fuzz_settings(60)
@given(field=st.sampled_from(ZIP_FIELDS), which=st.integers(0, 100),
       value=st.one_of(st.sampled_from([0, 1, 2, 8, 9, 12, 99, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF]),
                       st.integers(0, 0xFFFF)))
def test_mutated_zip_header_fields_name_the_file(original, tmp_path_factory, field, which, value):
    data, weights = original
    sig, off, fmt = field
    starts = [m.start() for m in re.finditer(re.escape(sig), data)]
    at = starts[which % len(starts)] + off
    value &= (1 << (8 * struct.calcsize(fmt))) - 1
    b = bytearray(data)
    b[at:at + struct.calcsize(fmt)] = struct.pack(fmt, value)
    path = tmp_path_factory.mktemp("z") / "fields.npz"
    path.write_bytes(bytes(b))
    _check_npformer(path, weights)


def _rewrite(src: bytes, path, change) -> None:
    """Write `src`'s archive to `path`, each member's bytes passed through change(name, bytes)."""
    import io
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, change(info.filename, zin.read(info)))


def _npy(array_header: dict, payload: bytes) -> bytes:
    text = repr(array_header).encode("latin1", "backslashreplace")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + payload


@fuzz_settings(60)
@given(which=st.integers(0, 100), key=st.sampled_from(["descr", "shape", "fortran_order"]),
       value=st.one_of(HOSTILE, st.sampled_from(["<f8", "|O", "<U5", "|S3", "<c16", "<f2", ">f4",
                                                 "[('a', '<f4')]", "<M8[s]", "V8", "<i8"]),
                       st.lists(st.integers(-2, 2 ** 62), max_size=3).map(tuple)),
       payload=st.sampled_from(["same", "empty", "short"]))
def test_mutated_npy_headers_name_the_file(original, tmp_path_factory, which, key, value, payload):
    data, weights = original
    import io
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    target = names[which % len(names)]

    def change(name, raw):
        if name != target:
            return raw
        arr = np.load(io.BytesIO(raw), allow_pickle=False)
        head = {"descr": np.lib.format.dtype_to_descr(arr.dtype), "fortran_order": False,
                "shape": arr.shape, key: value}
        body = raw[len(raw) - arr.nbytes:] if arr.nbytes else b""
        body = {"same": body, "empty": b"", "short": body[: len(body) // 2]}[payload]
        return _npy(head, body)

    path = tmp_path_factory.mktemp("n") / "npy.npz"
    _rewrite(data, path, change)
    _check_npformer(path, weights)


@fuzz_settings(30)                        # each example loads in both twins
@given(data=st.data(), text_ops=st.one_of(st.none(), byte_mutations))
def test_mutated_json_header_names_the_file(original, tmp_path_factory, data, text_ops):
    src, weights = original
    import io

    def change(name, raw):
        if name != "header.npy":
            return raw
        text = str(np.load(io.BytesIO(raw), allow_pickle=False)[()])
        text = dumps(draw_json_mutation(data, json.loads(text)))
        if text_ops is not None:                       # the JSON text itself: bytes, digits, nesting
            text = mutate_bytes(text.encode(), text_ops).decode("utf-8", "surrogateescape")
        out = io.BytesIO()
        np.save(out, np.array(text))
        return out.getvalue()

    path = tmp_path_factory.mktemp("j") / "header.npz"
    _rewrite(src, path, change)
    _check_npformer(path, weights)
    _check_torchformer(path)
