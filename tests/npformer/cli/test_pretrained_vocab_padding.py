"""A Hugging Face folder whose weights hold more token ids than its tokenizer (a vocabulary padded in
the weights, or a tokenizer file cut short): generation and [MASK] filling choose only ids the
tokenizer can turn into text, even when the model rates the extra ids highest (they used to crash
decoding with `ids: expected token ids in [0, V)`)."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from tests.npformer.io.tiny_folders import bert_folder, padded_gpt2_folder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

CORPUS = "the quick brown fox jumps over the lazy dog. " * 40
PAD_IDS = 16


@pytest.fixture(scope="module")
def padded_gpt2(tmp_path_factory):
    """A GPT-2 folder with PAD_IDS ids past its vocab.json, their (tied) embedding rows pointed
    along the model's mean final hidden state, so that greedy decoding would pick them."""
    return padded_gpt2_folder(tmp_path_factory.mktemp("gpt2_padded"), PAD_IDS, CORPUS)


def test_generation_never_chooses_an_id_past_the_tokenizer(padded_gpt2, capsys):
    path, vocab = padded_gpt2
    import npformer.io.hub as hub
    model = hub.from_pretrained(str(path), "float64")
    assert model.config.vocab_size == vocab + PAD_IDS
    assert main(["generate", str(path), "the quick brown fox", "--max-new-tokens", "5"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("the quick brown fox") and len(out[-1]) > len("the quick brown fox")


def test_fill_mask_candidates_stay_inside_a_short_vocab_txt(tmp_path, capsys):
    folder = bert_folder(tmp_path / "bert")
    lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    keep = lines[:40]
    assert "[MASK]" in keep and "[UNK]" in keep
    (folder / "vocab.txt").write_text("\n".join(keep) + "\n", encoding="utf-8")
    assert main(["generate", str(folder), "the [MASK] is", "--top-k", "40"]) == 0
    shown = capsys.readouterr().out.strip().splitlines()[1:]
    assert len(shown) == 40                                    # every tokenizer id, none past it
    assert {line.split()[1] for line in shown} <= set(keep)
