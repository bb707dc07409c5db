"""save_pretrained's files as a user meets them: a file another program writes into the folder while
it is saved is kept (without overwrite=True), every file gets the mode any new file gets, and the
temp files of a save killed with kill -9 are removed by the next save into the folder."""
import os
import stat
import subprocess
import sys

import pytest

import npformer as nf
from npformer.io import files, hub
from npformer.models.config import gpt2_config

NAMES = ["config.json", "merges.txt", "model.safetensors", "vocab.json"]


def model(vocab: int = 20, seed: int = 0):
    c = gpt2_config(vocab_size=vocab, max_len=16, d_model=8, num_heads=2, d_ff=16,
                    num_decoder_layers=1)
    return nf.CausalLM(c, seed=seed)


def tokenizer() -> dict:
    return {"vocab.json": b'{"a": 0}', "merges.txt": b"#version 0.2\n"}


def listing(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "merges.txt"])
def test_a_file_written_meanwhile_is_kept_and_nothing_of_the_save_is_left(tmp_path, monkeypatch,
                                                                           name):
    """The checks passed; then, while the weights were written, another program wrote `name`. It
    used to be replaced by the save's rename."""
    out = tmp_path / "tuned"
    real = hub.write_safetensors

    def weights_then_another_program(*a, **kw):
        real(*a, **kw)
        (out / name).write_bytes(b"the other program's file")
    monkeypatch.setattr(hub, "write_safetensors", weights_then_another_program)
    with pytest.raises(FileExistsError, match=f"{name} was written by another program") as err:
        hub.save_pretrained(model(), out, extra_files=tokenizer())
    assert err.value.filename == str(out)
    assert listing(out) == [name]                                  # no new file, no temp file
    assert (out / name).read_bytes() == b"the other program's file"


def test_overwrite_replaces_a_file_written_meanwhile(tmp_path, monkeypatch):
    out = tmp_path / "tuned"
    real = hub.write_safetensors

    def weights_then_another_program(*a, **kw):
        real(*a, **kw)
        (out / "config.json").write_bytes(b"{}")
    monkeypatch.setattr(hub, "write_safetensors", weights_then_another_program)
    hub.save_pretrained(model(), out, overwrite=True, extra_files=tokenizer())
    assert listing(out) == NAMES
    assert hub.from_pretrained(out).config.vocab_size == 20


def test_every_file_gets_the_mode_of_a_new_file(tmp_path):
    """config.json and the tokenizer files were created 0600 (tempfile.mkstemp) beside weights of
    0644: a folder shared with another user or served by another account could not be loaded."""
    old = os.umask(0o022)
    try:
        hub.save_pretrained(model(), tmp_path / "tuned", extra_files=tokenizer())
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "tuned").iterdir()}
    assert modes == dict.fromkeys(NAMES, 0o644)


def test_temps_of_a_killed_save_are_removed_by_the_next_save(tmp_path):
    out = tmp_path / "tuned"
    out.mkdir()
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()                                                       # a process that is gone
    stale = [files.temp_name(out / n, p.pid) for n in NAMES]
    for s in stale:
        s.write_bytes(b"half a file")                              # what kill -9 mid-save leaves
    hub.save_pretrained(model(), out, extra_files=tokenizer())
    assert listing(out) == NAMES


def test_remove_deletes_an_earlier_saves_file_once_the_new_ones_are_in(tmp_path):
    out = tmp_path / "tuned"
    hub.save_pretrained(model(), out, extra_files={**tokenizer(), "tokenizer_config.json": b"{}"})
    hub.save_pretrained(model(30, 1), out, overwrite=True, extra_files=tokenizer(),
                        remove=("tokenizer_config.json",))
    assert listing(out) == NAMES
    assert hub.from_pretrained(out).config.vocab_size == 30


def test_a_failed_save_removes_nothing(tmp_path, monkeypatch):
    import errno
    out = tmp_path / "tuned"
    hub.save_pretrained(model(), out, extra_files={**tokenizer(), "tokenizer_config.json": b"{}"})
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(hub, "write_safetensors", full)
    with pytest.raises(OSError, match="No space left"):
        hub.save_pretrained(model(30, 1), out, overwrite=True, extra_files=tokenizer(),
                            remove=("tokenizer_config.json",))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("kwargs,says", [
    (dict(remove=("tokenizer_config.json",)), "only with overwrite=True"),
    (dict(overwrite=True, remove=("config.json",)), "remove: expected plain names of files this save"),
    (dict(overwrite=True, remove=("vocab.json",)), "remove: expected plain names of files this save"),
    (dict(overwrite=True, remove=("../x",)), "remove: expected plain names"),
])
def test_remove_is_checked_before_anything_is_written(tmp_path, kwargs, says):
    with pytest.raises(ValueError, match=says):
        hub.save_pretrained(model(), tmp_path / "tuned", extra_files=tokenizer(), **kwargs)
    assert not (tmp_path / "tuned").exists()
