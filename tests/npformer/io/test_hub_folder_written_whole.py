"""save_pretrained with a tokenizer's files (`extra_files`, what `train --init ... --save-pretrained`
writes): the folder is replaced whole or not at all. A full disk on any file leaves the earlier folder
byte for byte and no temp file; Ctrl-C between two renames finishes the renames, so the folder never
holds new weights beside an earlier run's tokenizer."""
import errno
import os
import stat

import pytest

import npformer as nf
from npformer.io import hub
from npformer.models.config import gpt2_config


def model(vocab: int, seed: int):
    c = gpt2_config(vocab_size=vocab, max_len=16, d_model=8, num_heads=2, d_ff=16,
                    num_decoder_layers=1)
    return nf.CausalLM(c, seed=seed)


def tokenizer(tag: str) -> dict:
    return {"vocab.json": f'{{"{tag}": 0}}'.encode(), "merges.txt": f"#version {tag}\n".encode()}


@pytest.fixture()
def folder(tmp_path):
    path = tmp_path / "tuned"
    hub.save_pretrained(model(20, 0), path, extra_files=tokenizer("old"))
    return path


def contents(folder) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_extra_files_are_written_beside_the_pair(folder):
    assert sorted(contents(folder)) == ["config.json", "merges.txt", "model.safetensors", "vocab.json"]
    assert (folder / "merges.txt").read_bytes() == b"#version old\n"
    assert hub.from_pretrained(folder).config.vocab_size == 20


@pytest.mark.parametrize("failing", [1, 2, 3, 4])    # the weights, config.json, each tokenizer file
def test_a_full_disk_on_any_file_leaves_the_earlier_folder(folder, monkeypatch, failing):
    before = contents(folder)
    real, calls = os.fsync, []

    def fsync(fd):                                        # the failing-th file (folders not counted)
        calls.extend([fd] if stat.S_ISREG(os.fstat(fd).st_mode) else [])
        if len(calls) == failing and stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left") as err:
        hub.save_pretrained(model(30, 1), folder, overwrite=True, extra_files=tokenizer("new"))
    monkeypatch.undo()
    assert "the earlier files there are unchanged" in " ".join(getattr(err.value, "__notes__", []))
    assert contents(folder) == before                     # nothing replaced, no temp file left


@pytest.mark.parametrize("interrupted_at", [2, 3, 4])   # after 1, 2 or 3 of the 4 renames
def test_ctrl_c_between_renames_finishes_the_folder(folder, monkeypatch, interrupted_at):
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == interrupted_at:
            raise KeyboardInterrupt
        return real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        hub.save_pretrained(model(30, 1), folder, overwrite=True, extra_files=tokenizer("new"))
    monkeypatch.undo()
    after = contents(folder)
    assert sorted(after) == ["config.json", "merges.txt", "model.safetensors", "vocab.json"]
    assert after["merges.txt"] == b"#version new\n" and after["vocab.json"] == b'{"new": 0}'
    assert hub.from_pretrained(folder).config.vocab_size == 30


def test_an_existing_tokenizer_file_needs_overwrite(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "merges.txt").write_bytes(b"the user's merges")
    with pytest.raises(FileExistsError, match="merges.txt"):
        hub.save_pretrained(model(20, 0), out, extra_files=tokenizer("new"))
    assert sorted(p.name for p in out.iterdir()) == ["merges.txt"]


@pytest.mark.parametrize("bad, match", [({"../x.json": b""}, "extra_files: expected plain file names"),
                                        ({"a.txt": "text"}, r"extra_files\['a.txt'\]: expected bytes")])
def test_bad_extra_files_are_named_before_writing(tmp_path, bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        hub.save_pretrained(model(20, 0), tmp_path / "out", extra_files=bad)
    assert not (tmp_path / "out").exists()
