"""Ctrl-C and SIGTERM during `npformer train --save`: one line saying whether the checkpoint was
written, no traceback, no temp file, an earlier file unchanged. SIGTERM used to kill the process
silently (status 143, no message); Ctrl-C printed only "interrupted"."""
import os
import signal

import pytest

import npformer.training.train as T
from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=3)


def interrupting_train(how):
    """A T.train that is interrupted at its start: Ctrl-C, or a real SIGTERM to this process."""
    def train(*a, **kw):
        if how == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)         # delivered to the main thread, here
        raise KeyboardInterrupt
    return train


@pytest.mark.parametrize("how,code,word", [("ctrl-c", 130, "interrupted (Ctrl-C)"),
                                           ("sigterm", 143, "terminated (SIGTERM)")])
@pytest.mark.parametrize("earlier", [False, True])
def test_interrupted_train_says_nothing_was_saved(tmp_path, capsys, monkeypatch, how, code, word,
                                                  earlier):
    ckpt = tmp_path / "run.npz"
    if earlier:
        ckpt.write_bytes(b"PK\x03\x04 an earlier checkpoint")
    monkeypatch.setattr(T, "train", interrupting_train(how))
    before = signal.getsignal(signal.SIGTERM)
    rc = main(["train", *TINY, "--save", str(ckpt), "--overwrite"])
    err = capsys.readouterr().err
    assert rc == code and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert word in err and f"--save {ckpt} was not written" in err
    assert ("an earlier file there is unchanged" if earlier else "nothing was saved") in err
    assert os.listdir(tmp_path) == (["run.npz"] if earlier else [])       # no temp file
    if earlier:
        assert ckpt.read_bytes() == b"PK\x03\x04 an earlier checkpoint"
    assert signal.getsignal(signal.SIGTERM) is before                      # handler restored


def test_interrupt_after_the_save_says_it_was_saved(tmp_path, capsys, monkeypatch):
    ckpt = tmp_path / "run.npz"
    import npformer.cli.train as cli_train

    def boom(*a, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli_train, "train_plots", boom)       # Ctrl-C while the plots are drawn
    pytest.importorskip("matplotlib")
    rc = main(["train", *TINY, "--save", str(ckpt), "--plot", str(tmp_path / "plots")])
    err = capsys.readouterr().err
    assert rc == 130 and f"the checkpoint {ckpt} was saved complete" in err
    assert ckpt.exists()
