"""Ctrl-C or SIGTERM landing just after a checkpoint's rename (while the folder is fsynced, before
the command noted the save): the new file is whole under its name, and the one line says it was
saved, not "--save ... was not written (an earlier file there is unchanged)"."""
import os
import signal

import numpy as np
import pytest

import npformer.io.files as files
from npformer.cli.main import main
from npformer.io.checkpoint import load_model
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=2)


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt, as in a command started from a terminal (a background
    shell starts its jobs with SIGINT ignored, and the test process may have inherited that)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_right_after_the_rename_says_the_checkpoint_was_saved(tmp_path, capsys, monkeypatch,
                                                                      ctrl_c_raises, sig, code):
    ckpt = tmp_path / "run.npz"
    ckpt.write_bytes(b"PK\x03\x04 the earlier checkpoint")
    real = files.fsync_dir
    sent = []

    def fsync_then_signal(folder):
        real(folder)
        if not sent:                                      # the checkpoint's rename is done
            sent.append(sig)
            os.kill(os.getpid(), sig)
    monkeypatch.setattr(files, "fsync_dir", fsync_then_signal)
    assert main(["train", *TINY, "--save", str(ckpt), "--overwrite"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert f"the checkpoint {ckpt} was saved complete before the interruption" in err[0], err
    model = load_model(ckpt)                              # the new checkpoint, whole
    assert all(np.isfinite(p.data).all() for p in model.parameters())
    assert sorted(os.listdir(tmp_path)) == ["run.npz"]


def test_the_handlers_in_place_are_back_after_a_write(tmp_path):
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    files.atomic_write(tmp_path / "x.txt", lambda f: f.write(b"x"))
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
