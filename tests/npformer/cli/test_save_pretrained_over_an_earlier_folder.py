"""`train --init FOLDER --save-pretrained DIR --overwrite` over the folder of an earlier fine-tune
leaves none of the earlier tokenizer's files beside the new model: a cased BERT's
`tokenizer_config.json` ({"do_lower_case": false}) stayed beside an uncased model saved over it, so
the folder read text without lowercasing for a lowercase vocabulary; GPT-2's vocab.json and
merges.txt stayed beside a BERT saved over them."""
from __future__ import annotations

import pytest

from tests.npformer.conftest import run_cli
from tests.npformer.io.tiny_folders import bert_folder, gpt2_folder, text_file

pytest.importorskip("torch")
pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    return {"cased": bert_folder(root / "cased", lowercase=False), "uncased": bert_folder(root / "bert"),
            "gpt2": gpt2_folder(root / "gpt2"), "text": text_file(root / "corpus.txt")}


def fine_tune(folders, init, task, out, capsys, *more):
    code, _, err = run_cli(["train", "--init", str(folders[init]), "--task", task, "--data",
                            str(folders["text"]), "--steps", "1", "--context", "16", "--no-progress",
                            "--save-pretrained", str(out), *more], capsys)
    assert code == 0, err


def test_an_uncased_model_saved_over_a_cased_one_keeps_no_cased_tokenizer_config(folders, tmp_path,
                                                                                 capsys):
    out = tmp_path / "tuned"
    fine_tune(folders, "cased", "mlm", out, capsys)
    assert (out / "tokenizer_config.json").is_file()
    fine_tune(folders, "uncased", "mlm", out, capsys, "--overwrite")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "vocab.txt"]
    assert (out / "vocab.txt").read_bytes() == (folders["uncased"] / "vocab.txt").read_bytes()


def test_a_bert_saved_over_a_gpt2_keeps_no_gpt2_tokenizer(folders, tmp_path, capsys):
    out = tmp_path / "tuned"
    fine_tune(folders, "gpt2", "lm", out, capsys)
    fine_tune(folders, "uncased", "mlm", out, capsys, "--overwrite")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors", "vocab.txt"]
