"""A model fine-tuned from a GPT-2 folder whose weights hold more ids than its tokenizer (a padded
vocabulary): training, `evaluate` and `generate` on its checkpoint never choose an id the saved
tokenizer cannot write. Training failed after its last step with `ids: expected ids present in
vocab.json` (the evaluation's sample), nothing saved; `evaluate` refused the checkpoint naming
`--num-symbols`; `generate` crashed as training did."""
from __future__ import annotations

import pytest

from tests.npformer.conftest import run_cli
from tests.npformer.io.tiny_folders import padded_gpt2_folder, text_file

pytest.importorskip("torch")
pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")


@pytest.fixture(scope="module")
def padded(tmp_path_factory):
    return padded_gpt2_folder(tmp_path_factory.mktemp("gpt2_padded"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return text_file(tmp_path_factory.mktemp("text") / "corpus.txt")


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_fine_tuning_evaluating_and_generating_stay_inside_the_tokenizer(padded, corpus, tmp_path,
                                                                         capsys, backend):
    folder, vocab = padded
    ckpt = tmp_path / "tuned.npz"
    code, out, err = run_cli(["train", "--task", "lm", "--data", str(corpus), "--init", str(folder),
                              "--steps", "1", "--context", "16", "--no-progress", "--backend",
                              backend, "--save", str(ckpt)], capsys)
    assert code == 0, err
    assert "sample: " in out and ckpt.is_file()
    code, out, err = run_cli(["evaluate", str(ckpt), "--backend", backend], capsys)
    assert code == 0, err
    assert "sample: " in out
    for more in ([], ["--beam", "3"], ["--temperature", "2", "--seed", "1"]):
        code, out, err = run_cli(["generate", str(ckpt), "the quick brown fox", "--max-new-tokens",
                                  "5", "--backend", backend, *more], capsys)
        assert code == 0, (more, err)
        assert out.strip().splitlines()[-1].startswith("the quick brown fox")
