"""Ctrl-C while an output is being produced or written: no half-written file under the real name, no
temp file, an earlier file unchanged, and the one line says, for every output the command was given
(--save, --save-pretrained, generate --out), whether it was written.

Before: `generate --out` said only "interrupted (Ctrl-C)"; --save-pretrained copied the tokenizer
files with shutil.copyfile, so Ctrl-C (or a full disk) in the middle of a copy left a truncated
vocab.json or merges.txt under its real name in the saved folder."""
import os

import numpy as np
import pytest

import npformer.io.checkpoint_file as checkpoint_file
from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=2)


def one_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_ctrl_c_in_the_middle_of_the_checkpoint_write_keeps_the_earlier_file(tmp_path, capsys,
                                                                             monkeypatch):
    """Regression guard: the atomic write already removed its temp file on Ctrl-C."""
    ckpt = tmp_path / "run.npz"
    ckpt.write_bytes(b"PK\x03\x04 the earlier checkpoint")
    real = np.savez

    def half_then_ctrl_c(f, **arrays):
        real(f, **dict(list(arrays.items())[:3]))               # some bytes are in the temp file
        raise KeyboardInterrupt
    monkeypatch.setattr(checkpoint_file.np, "savez", half_then_ctrl_c)
    assert main(["train", *TINY, "--save", str(ckpt), "--overwrite"]) == 130
    line = one_line(capsys)
    assert f"--save {ckpt} was not written (an earlier file there is unchanged)" in line
    assert ckpt.read_bytes() == b"PK\x03\x04 the earlier checkpoint"
    assert os.listdir(tmp_path) == ["run.npz"]


@pytest.fixture(scope="module")
def lm_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lm")
    (folder / "corpus.txt").write_text("".join(f"line {i} of some text\n" for i in range(200)),
                                       encoding="utf-8")
    path = folder / "lm.npz"
    argv = tiny_train_args(max_len=None, num_symbols=None, steps=1)
    assert main(["train", *argv, "--task", "lm", "--data", str(folder / "corpus.txt"),
                 "--context", "16", "--save", str(path)]) == 0
    return path


@pytest.mark.parametrize("earlier", [False, True])
def test_ctrl_c_while_generating_says_out_was_not_written(lm_checkpoint, tmp_path, capsys,
                                                          monkeypatch, earlier):
    import npformer.decoding as decoding  # what `generate` decodes with

    def ctrl_c(*a, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(decoding, "greedy_decode", ctrl_c)
    out = tmp_path / "samples.txt"
    if earlier:
        out.write_text("earlier samples\n")
    capsys.readouterr()
    argv = ["generate", str(lm_checkpoint), "line", "--out", str(out)] + (["--overwrite"] if earlier
                                                                          else [])
    assert main(argv) == 130
    line = one_line(capsys)
    kept = "what was there before is unchanged" if earlier else "nothing was written"
    assert line == f"npformer generate: interrupted (Ctrl-C); --out {out} was not written ({kept})"
    assert os.listdir(tmp_path) == (["samples.txt"] if earlier else [])
    if earlier:
        assert out.read_text() == "earlier samples\n"


def test_ctrl_c_after_out_was_written_says_so(lm_checkpoint, tmp_path, capsys, monkeypatch):
    import npformer.cli.text_output as text_output
    out = tmp_path / "samples.txt"
    real_print = print

    def ctrl_c_at_the_last_line(*a, **kw):
        if a and str(a[0]).startswith("wrote "):
            raise KeyboardInterrupt
        real_print(*a, **kw)
    monkeypatch.setattr(text_output, "print", ctrl_c_at_the_last_line, raising=False)
    capsys.readouterr()
    assert main(["generate", str(lm_checkpoint), "line", "--out", str(out)]) == 130
    assert f"--out {out} was written complete before the interruption" in one_line(capsys)
    assert out.exists()


def test_ctrl_c_while_writing_the_tokenizer_files_leaves_the_folder_as_it_was(tmp_path, capsys,
                                                                             monkeypatch):
    """The weights, config.json and the tokenizer files are all written before any of them replaces
    an earlier file: Ctrl-C while the second tokenizer file is written leaves the folder as it was
    (it used to hold the new weights beside an earlier run's or no tokenizer files)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers", reason="the [hf] extra is not installed")
    import stat

    from tests.npformer.io.tiny_folders import gpt2_folder, text_file
    gpt2 = gpt2_folder(tmp_path / "gpt2")
    corpus = text_file(tmp_path / "corpus.txt")
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    (tuned / "notes.txt").write_text("the user's notes")
    capsys.readouterr()                                  # what building the folder printed
    real, written = os.fsync, []

    def ctrl_c_at_the_fourth_file(fd):                   # weights, config, first tokenizer file, ...
        if stat.S_ISREG(os.fstat(fd).st_mode) and str(tuned) in os.readlink(f"/proc/self/fd/{fd}"):
            written.append(fd)
            if len(written) == 4:
                raise KeyboardInterrupt
        return real(fd)
    monkeypatch.setattr(os, "fsync", ctrl_c_at_the_fourth_file)
    rc = main(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2), "--steps", "1",
               "--batch-size", "2", "--eval-size", "4", "--no-progress",
               "--save-pretrained", str(tuned)])
    monkeypatch.undo()
    assert rc == 130 and len(written) == 4
    line = one_line(capsys)
    assert f"--save-pretrained {tuned} was not written (what was there before is unchanged)" in line
    assert sorted(os.listdir(tuned)) == ["notes.txt"]    # nothing new, no temp file
