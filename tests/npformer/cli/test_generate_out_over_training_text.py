"""`generate CKPT --out FILE --overwrite` never replaces the text the checkpoint was trained on (the
file its evaluation and --resume read again): refused before any sample is drawn, naming --out and
the file, as `train --save` is; another existing file is still replaced with --overwrite."""
from __future__ import annotations

import os

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import train_text_lm


@pytest.fixture()
def lm(tmp_path):
    return train_text_lm(tmp_path, context=16, steps=1)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_out_over_the_checkpoints_training_text_is_refused(lm, tmp_path, capsys, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    corpus = tmp_path / "corpus.txt"
    before = corpus.read_bytes()
    capsys.readouterr()
    code = main(["generate", lm, "the", "--max-new-tokens", "3", "--out", str(corpus), "--overwrite",
                 "--backend", backend])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--out {corpus}: is an input of this run (--data " in err and "corpus.txt" in err
    assert corpus.read_bytes() == before                       # the training text is unchanged
    assert main(["evaluate", lm, "--eval-size", "2"]) == 0     # and the checkpoint still evaluates


def test_out_through_a_link_to_the_training_text_is_refused(lm, tmp_path, capsys):
    link = tmp_path / "samples.txt"
    os.symlink(tmp_path / "corpus.txt", link)
    before = (tmp_path / "corpus.txt").read_bytes()
    assert main(["generate", lm, "the", "--max-new-tokens", "3", "--out", str(link),
                 "--overwrite"]) == 2
    assert (tmp_path / "corpus.txt").read_bytes() == before


def test_another_existing_file_is_replaced_with_overwrite(lm, tmp_path, capsys):
    out = tmp_path / "samples.txt"
    out.write_text("an earlier sample\n")
    assert main(["generate", lm, "the", "--max-new-tokens", "3", "--out", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("the")
