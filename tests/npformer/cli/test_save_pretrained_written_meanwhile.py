"""`train --init FOLDER --save-pretrained DIR` checks DIR before training; files another program
writes into DIR while the run trains are never replaced without `--overwrite`: the run's folder is
saved beside it as DIR-1 (the next free name), and one line says both, exit status 2. The message
used to be the Python API's (`pass overwrite=True`) and the fine-tuned model was lost."""
from __future__ import annotations

import pytest

from npformer.cli import train as cli_train
from tests.npformer.conftest import run_cli
from tests.npformer.io.tiny_folders import gpt2_folder, text_file

pytest.importorskip("torch")
pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

OTHER = b"the other run's config"
NAMES = ["config.json", "merges.txt", "model.safetensors", "vocab.json"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return gpt2_folder(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return text_file(tmp_path_factory.mktemp("text") / "corpus.txt")


@pytest.fixture
def written_during_training(monkeypatch):
    """Write the given paths (another program) once training has finished, before the saves."""
    paths = []
    shown = cli_train.print_examples

    def print_examples(*args, **kwargs):
        for p in paths:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(OTHER)
        return shown(*args, **kwargs)
    monkeypatch.setattr(cli_train, "print_examples", print_examples)
    return paths


def argv(gpt2, corpus, out, *more):
    return ["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2), "--steps", "1",
            "--context", "16", "--no-progress", "--save-pretrained", str(out), *more]


def test_files_written_while_the_run_trained_are_kept_and_the_folder_saved_beside(
        gpt2, corpus, tmp_path, capsys, written_during_training):
    out = tmp_path / "tuned"
    written_during_training.append(out / "config.json")
    code, _, err = run_cli(argv(gpt2, corpus, out), capsys)
    assert code == 2
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]
    assert (out / "config.json").read_bytes() == OTHER
    beside = tmp_path / "tuned-1"
    assert sorted(p.name for p in beside.iterdir()) == NAMES
    assert err == (f"npformer train: error: --save-pretrained {out}: files were written there by "
                   f"another program while this run trained (another run saving there?) and are "
                   f"left as they are; this run's model is saved as {beside} (with --overwrite a "
                   f"run replaces them)\n")
    from npformer.io.hub import from_pretrained
    assert from_pretrained(beside).config.vocab_size > 0


def test_with_overwrite_the_run_replaces_them(gpt2, corpus, tmp_path, capsys,
                                              written_during_training):
    out = tmp_path / "tuned"
    written_during_training.append(out / "config.json")
    code, out_text, _ = run_cli(argv(gpt2, corpus, out, "--overwrite"), capsys)
    assert code == 0 and f"saved Hugging Face folder {out}" in out_text
    assert sorted(p.name for p in out.iterdir()) == NAMES
    assert (out / "config.json").read_bytes() != OTHER
