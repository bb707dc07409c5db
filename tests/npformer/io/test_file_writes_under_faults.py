"""Files written through the API (both twins' save_checkpoint, write_safetensors, save_pretrained)
under faults: a write that fails (disk full), is interrupted (Ctrl-C) or raises part-way never leaves
the earlier file changed or a temp file behind, and the error names the file (an OSError keeps its
class, errno and strerror; its filename is the path asked for, and a note says what became of the
earlier file); safetensors are
written like checkpoints (checked path, temp file, fsync of the file and the folder, rename, a stale
temp of a killed writer removed); a model whose weights do not fit names both classes.

A real full disk is a 64 KiB tmpfs when this process may mount one (root in a container); otherwise
that test is skipped and the monkeypatched faults stand in for it.
"""
import errno
import os
import re
import subprocess
import sys
import uuid

import numpy as np
import pytest

import npformer as nf
import npformer.io.files as nio
from npformer.io.checkpoint import CheckpointError, load_checkpoint
from npformer.io.hub import save_pretrained
from npformer.io.safetensors import read_safetensors, write_safetensors
from npformer.models.config import gpt2_config

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                           vocab_size=11, pad_id=0, max_len=8)


def save_np(path):
    return nf.save_checkpoint(path, nf.Transformer(CFG, seed=1))


def twin(name: str):
    """npformer, or torchformer (the test is skipped where torch is not installed)."""
    return nf if name == "npformer" else pytest.importorskip("torchformer")


TWINS = ["npformer", "torchformer"]


def save_tf(path):
    tf = twin("torchformer")
    return tf.save_checkpoint(path, tf.Transformer(CFG, seed=1))


def save_st(path):
    return write_safetensors(path, {"w": np.arange(12.0).reshape(3, 4)}, overwrite=True)


WRITERS = {"npformer checkpoint": save_np, "torchformer checkpoint": save_tf,
           "safetensors": save_st}


def earlier(tmp_path, name: str) -> tuple:
    path = tmp_path / name
    path.write_bytes(b"the user's earlier file")
    return path, path.read_bytes()


def note_of(err) -> str:
    return " ".join(getattr(err, "__notes__", []))


def fail_fsync_with(monkeypatch, exc):
    def fsync(fd):
        raise exc
    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
def test_a_full_disk_names_the_file_and_keeps_the_earlier_one(tmp_path, monkeypatch, write):
    path, before = earlier(tmp_path, "out.bin")
    fail_fsync_with(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(OSError) as err:
        write(path)
    assert err.value.errno == errno.ENOSPC
    assert err.value.filename == str(path)
    assert str(err.value) == f"[Errno {errno.ENOSPC}] No space left on device: '{path}'"
    assert note_of(err.value) == (f"{path}: the earlier file there is unchanged; no temporary file "
                                  f"was left")
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["out.bin"]


def test_a_failed_first_write_says_nothing_was_written(tmp_path, monkeypatch):
    fail_fsync_with(monkeypatch, PermissionError(errno.EACCES, "Permission denied"))
    path = tmp_path / "new.npz"
    with pytest.raises(PermissionError, match=re.escape(f"Permission denied: '{path}'")) as err:
        save_np(path)
    assert note_of(err.value).startswith(f"{path}: nothing was written")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("write", WRITERS.values(), ids=WRITERS.keys())
@pytest.mark.parametrize("exc", [KeyboardInterrupt(), RuntimeError("a bug mid-write")],
                         ids=["Ctrl-C", "exception"])
def test_an_interrupted_write_keeps_the_earlier_file_and_leaves_no_temp(tmp_path, monkeypatch,
                                                                        write, exc):
    """Regression guard: the temp file is removed and the earlier file untouched."""
    path, before = earlier(tmp_path, "out.bin")
    fail_fsync_with(monkeypatch, exc)
    with pytest.raises(type(exc)):
        write(path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["out.bin"]


def test_a_checkpoint_cut_short_mid_write_is_never_left_under_the_name(tmp_path, monkeypatch):
    """np.savez writes part of the archive and then fails: the name keeps the earlier checkpoint,
    which still loads (that was so before; the message saying so is new)."""
    path = save_np(tmp_path / "m.npz")
    before = path.read_bytes()
    real = np.savez

    def half(f, **arrays):
        real(f, **dict(list(arrays.items())[:3]))
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(np, "savez", half)
    with pytest.raises(OSError) as err:
        save_np(path)
    assert err.value.filename == str(path) and "unchanged" in note_of(err.value)
    assert path.read_bytes() == before
    assert type(nf.load_model(path)).__name__ == "Transformer"


# -- safetensors: the same path rules and atomic write as checkpoints -----------------------------------
def test_safetensors_paths_that_cannot_be_files_are_named_before_writing(tmp_path):
    (tmp_path / "a_file").write_bytes(b"x")
    cases = [(tmp_path, IsADirectoryError, "is a folder; expected a file path"),
             (tmp_path / "missing" / "w.safetensors", FileNotFoundError,
              f"folder {tmp_path / 'missing'} does not exist (create it first)"),
             (tmp_path / "a_file" / "w.safetensors", NotADirectoryError,
              f"folder {tmp_path / 'a_file'} is a file")]
    for path, error, message in cases:
        with pytest.raises(error, match=re.escape(message)) as err:
            save_st(path)
        assert err.value.filename == str(path)
    assert sorted(os.listdir(tmp_path)) == ["a_file"]
    with pytest.raises(TypeError, match="path: expected a file path"):
        write_safetensors(None, {"w": np.zeros(2)})


def test_safetensors_fsyncs_the_file_and_the_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def spy(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}"))
        return real(fd)
    if not os.path.exists("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to tell a folder from a file")
    monkeypatch.setattr(os, "fsync", spy)
    save_st(tmp_path / "w.safetensors")
    assert synced[:1] == [False] and True in synced, synced


def test_safetensors_temp_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "w.safetensors"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = nio.temp_name(target, dead.pid)
    stale.write_bytes(b"half a file")
    save_st(target)
    assert not stale.exists()
    np.testing.assert_array_equal(read_safetensors(target)["w"], np.arange(12.0).reshape(3, 4))


def test_save_pretrained_full_disk_names_the_folder_and_keeps_the_earlier_pair(tmp_path, monkeypatch):
    model = nf.CausalLM(gpt2_config(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                                    vocab_size=11, max_len=8), seed=0)
    folder = tmp_path / "gpt"
    save_pretrained(model, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    fail_fsync_with(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(OSError, match="No space left on device") as err:
        save_pretrained(model, folder, overwrite=True)
    assert err.value.filename == str(folder)            # not the hidden temp file's name
    assert "the earlier files there are unchanged" in note_of(err.value)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


# -- wrong model -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", TWINS)
def test_restoring_another_models_checkpoint_names_both_classes(tmp_path, name):
    t = twin(name)
    lm_cfg = CFG.replace(num_encoder_layers=0)
    path = nf.save_checkpoint(tmp_path / "lm.npz", nf.CausalLM(lm_cfg, seed=0))
    with pytest.raises(CheckpointError, match=re.escape(
            f"checkpoint {path}: holds a CausalLM's weights; the model is a Transformer, so they do "
            f"not fit: missing weights ['src_embed.weight'")) as err:
        t.restore(path, t.Transformer(CFG, seed=0))
    assert "... and" in str(err.value) and len(str(err.value)) < 1500      # the list is shortened


def test_restore_refuses_the_other_twins_model_by_name(tmp_path):
    tf = twin("torchformer")
    path = save_np(tmp_path / "m.npz")
    with pytest.raises(TypeError, match="restore: model: expected an npformer Module, got Transformer"):
        nf.restore(path, tf.Transformer(CFG))
    with pytest.raises(TypeError, match="restore: model: expected a torch.nn.Module, got Transformer"):
        tf.restore(path, nf.Transformer(CFG))


# -- a real full disk --------------------------------------------------------------------------------
def mounted_tmpfs(tmp_path):
    """A 64 KiB tmpfs under tmp_path (skips where it cannot be mounted); unmounted afterwards."""
    mount = tmp_path / f"tmpfs-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


@pytest.fixture
def tiny_disk(tmp_path):
    yield from mounted_tmpfs(tmp_path)


@pytest.fixture
def read_only_disk(tmp_path):
    """A tmpfs holding `earlier.npz` and `earlier.safetensors`, then remounted read-only (root
    ignores permission bits, a read-only mount refuses even root)."""
    for mount in mounted_tmpfs(tmp_path):
        save_np(mount / "earlier.npz")
        save_st(mount / "earlier.safetensors")
        done = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot remount read-only: {done.stderr.decode(errors='replace').strip()}")
        yield mount


@pytest.mark.parametrize("write, name", [(save_np, "earlier.npz"), (save_st, "earlier.safetensors"),
                                         (save_np, "new.npz")])
def test_a_read_only_folder_names_the_file_and_keeps_the_earlier_one(read_only_disk, write, name):
    path = read_only_disk / name
    before = sorted(os.listdir(read_only_disk))
    content = path.read_bytes() if path.exists() else None
    with pytest.raises(OSError) as err:
        write(path)
    assert err.value.errno == errno.EROFS and err.value.filename == str(path)
    assert ("unchanged" if content is not None else "nothing was written") in note_of(err.value)
    assert sorted(os.listdir(read_only_disk)) == before
    if content is not None:
        assert path.read_bytes() == content


@pytest.mark.parametrize("name", TWINS)
def test_a_really_full_disk_keeps_the_earlier_checkpoint_loadable(tiny_disk, name):
    t = twin(name)
    path = tiny_disk / "m.npz"
    small = t.Transformer(CFG, seed=0)
    t.save_checkpoint(path, small)
    before = path.read_bytes()
    big = t.Transformer(CFG.replace(d_model=64, d_ff=128), seed=0)
    with pytest.raises(OSError) as err:
        t.save_checkpoint(path, big)
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(path)
    assert "the earlier file there is unchanged" in note_of(err.value)
    assert path.read_bytes() == before and os.listdir(tiny_disk) == ["m.npz"]
    assert load_checkpoint(path).config.d_model == 8


# -- two threads saving the same path ----------------------------------------------------------------
def test_two_threads_saving_one_path_leave_one_complete_checkpoint(tmp_path):
    """Each thread writes its own temp file; the last rename wins and the file under the name is one
    of the two complete checkpoints. With one temp name per process the threads wrote into the same
    file: one of them failed with FileNotFoundError and the name was often left holding a corrupt
    archive (9 of 20 tries)."""
    import threading
    big = nf.TransformerConfig(d_model=64, num_heads=2, d_ff=128, num_encoder_layers=2,
                               num_decoder_layers=2, vocab_size=500, max_len=64)
    models = [nf.Transformer(big, seed=1), nf.Transformer(big, seed=2)]
    expected = [m.state_dict()["src_embed.weight"] for m in models]
    path = tmp_path / "m.npz"
    for _ in range(6):
        errors = []

        def save(model):
            try:
                nf.save_checkpoint(path, model)
            except Exception as e:                    # noqa: BLE001 - collected, asserted below
                errors.append(e)
        threads = [threading.Thread(target=save, args=(m,)) for m in models]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        saved = load_checkpoint(path).state["src_embed.weight"]
        assert any(np.array_equal(saved, w) for w in expected)
        assert os.listdir(tmp_path) == ["m.npz"]


def test_a_stale_temp_of_a_dead_processs_thread_is_removed(tmp_path):
    target = tmp_path / "m.npz"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".m.npz.tmp.{dead.pid}.140234"
    stale.write_bytes(b"half a file")
    save_np(target)
    assert not stale.exists() and target.exists()
