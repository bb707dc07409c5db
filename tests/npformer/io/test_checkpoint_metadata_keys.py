"""Checkpoint metadata is JSON, whose object keys are strings: a dict key that is not a str (an int
label id, a bool, a tuple) would be read back as its str, and {3: x, "3": y} would lose a value.
save_checkpoint (both twins) refuses it, naming where the key is; nothing is written. Str keys,
nested dicts, lists and NumPy scalars round-trip."""
import numpy as np
import pytest

import npformer as nf
from npformer.io.checkpoint_file import CheckpointError

SAVES = [(nf.save_checkpoint, nf.load_checkpoint, lambda: nf.Linear(3, 2))]
try:
    import torchformer as tf
    SAVES.append((tf.save_checkpoint, nf.load_checkpoint, lambda: tf.Linear(3, 2)))
except ImportError:                                     # numpy only: npformer's own
    pass


@pytest.mark.parametrize("save,load,make", SAVES)
@pytest.mark.parametrize("metadata,where,key", [
    ({"labels": {0: "neg", 1: "pos"}}, r"metadata\['labels'\]", "0"),
    ({"runs": [{"a": 1}, {True: 2}]}, r"metadata\['runs'\]\[1\]", "True"),
    ({7: "x"}, "metadata", "7"),
    ({"ids": {np.int64(3): "c"}}, r"metadata\['ids'\]", r"np\.int64\(3\)"),
])
def test_a_key_that_is_not_a_str_is_named_and_nothing_is_written(tmp_path, save, load, make,
                                                                 metadata, where, key):
    path = tmp_path / "m.npz"
    with pytest.raises(CheckpointError, match=f"{where}: key {key} is a .*; expected str keys"):
        save(path, make(), metadata=metadata)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("save,load,make", SAVES)
def test_str_keyed_metadata_round_trips(tmp_path, save, load, make):
    meta = {"labels": {"0": "neg", "1": "pos"}, "curve": [1.5, 2.0], "nested": {"a": {"b": [1, "x"]}},
            "n": np.int64(4)}
    save(tmp_path / "m.npz", make(), metadata=meta)
    assert load(tmp_path / "m.npz").metadata == {**meta, "n": 4}


@pytest.mark.parametrize("metadata", [{"step": 3}, {3: "x"}, {"ok": "yes", "flag": True}, "pt"])
def test_safetensors_metadata_that_is_not_text_is_named_and_nothing_is_written(tmp_path, metadata):
    """The safetensors header keeps str: str only; {"step": 3} was written as "3" and read back so."""
    from npformer.io.safetensors import write_safetensors
    with pytest.raises(TypeError, match=r"metadata: expected (str keys and str values \(safetensors "
                                        r"stores text\)|a dict of str to str), got"):
        write_safetensors(tmp_path / "m.safetensors", {"w": np.zeros(2)}, metadata)
    assert list(tmp_path.iterdir()) == []


def test_safetensors_text_metadata_round_trips(tmp_path):
    from npformer.io.safetensors import read_header, write_safetensors
    write_safetensors(tmp_path / "m.safetensors", {"w": np.zeros(2)}, {"format": "pt", "n": "3"})
    assert {"format": "pt", "n": "3"} in read_header(tmp_path / "m.safetensors")
