"""`npformer train` never writes an output over one of the run's own inputs: --overwrite replaces an
earlier output, not the text being trained on (nor the pretrained folder being fine-tuned)."""
from __future__ import annotations

import pytest

from npformer.cli.main import main

TINY = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1", "--context", "16",
        "--batch-size", "4", "--steps", "1", "--no-progress", "--threads", "1"]
TEXT = "the cat sat on the mat.\nthe dog ran to the log.\n" * 20


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    (folder / "b.txt").write_text(TEXT.upper(), encoding="utf-8")
    return folder


def lm(data, *more):
    return ["train", "--task", "lm", "--data", *map(str, data), *TINY, *more]


@pytest.mark.parametrize("where", ["file", "file in folder"])
def test_save_over_a_data_file_is_refused_even_with_overwrite(corpus, capsys, where):
    target = corpus / "a.txt"
    data = [target] if where == "file" else [corpus]
    before = target.read_bytes()
    assert main(lm(data, "--save", str(target), "--overwrite")) == 2
    err = capsys.readouterr().err
    assert f"--save {target}: is an input of this run (--data {data[0]})" in err
    assert target.read_bytes() == before


def test_save_over_the_second_data_file_is_refused(corpus, capsys):
    a, b = corpus / "a.txt", corpus / "b.txt"
    assert main(lm([a, b], "--save", str(b), "--overwrite")) == 2
    assert f"(--data {b})" in capsys.readouterr().err
    assert b.read_text(encoding="utf-8") == TEXT.upper()


def test_a_data_file_reached_through_a_symbolic_link_is_refused(corpus, tmp_path, capsys):
    link = tmp_path / "link.txt"
    link.symlink_to(corpus / "a.txt")
    assert main(lm([corpus / "a.txt"], "--save", str(link), "--overwrite")) == 2
    assert "is an input of this run" in capsys.readouterr().err
    assert (corpus / "a.txt").read_text(encoding="utf-8") == TEXT


def test_a_checkpoint_inside_the_data_folder_can_still_be_replaced(corpus, capsys):
    """A checkpoint is binary, so the folder's corpus skips it: replacing it replaces no input."""
    ckpt = corpus / "lm.npz"
    assert main(lm([corpus], "--save", str(ckpt))) == 0
    assert main(lm([corpus], "--save", str(ckpt), "--overwrite")) == 0
    assert "is an input" not in capsys.readouterr().err


def test_save_pretrained_into_the_init_folder_is_refused(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("transformers", reason="the [hf] extra is not installed")
    from tests.npformer.io.tiny_folders import gpt2_folder, text_file
    gpt2, corpus = gpt2_folder(tmp_path / "gpt2"), text_file(tmp_path / "corpus.txt")
    before = {p.name: p.read_bytes() for p in gpt2.iterdir()}
    code = main(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2), "--context",
                 "16", "--steps", "1", "--no-progress", "--save-pretrained", str(gpt2),
                 "--overwrite"])
    assert code == 2
    assert f"--save-pretrained {gpt2}: is an input of this run (--init {gpt2})" in \
        capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in gpt2.iterdir()} == before


def test_a_resumed_run_refuses_to_save_over_the_text_its_checkpoint_reads(corpus, tmp_path, capsys):
    run, text = tmp_path / "run.npz", corpus / "a.txt"
    assert main(lm([text], "--save", str(run))) == 0
    assert main(["train", "--resume", str(run), "--steps", "1", "--no-progress", "--save",
                 str(text), "--overwrite"]) == 2
    assert f"--save {text}: is an input of this run" in capsys.readouterr().err
    assert text.read_text(encoding="utf-8") == TEXT
    assert main(["train", "--resume", str(run), "--steps", "1", "--no-progress", "--save",
                 str(run), "--overwrite"]) == 0                        # continuing in place
