"""`npformer generate FOLDER "text"` on a Hugging Face GPT-2 folder prints the continuation as text,
equal to what transformers generates and its own tokenizer decodes (a tiny folder built offline:
random weights, a byte-level BPE trained here with the `tokenizers` library)."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from npformer.data.display import visible

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

CORPUS = ("the quick brown fox jumps over the lazy dog. " * 20 +
          "Alan Turing theorized that machines could think; they're learning. " * 20)
PROMPTS = ["Alan Turing theorized that", "the lazy fox"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("gpt2")
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([CORPUS], vocab_size=300, min_frequency=2,
                            special_tokens=["<|endoftext|>"])
    bpe.save_model(str(path))                                     # vocab.json, merges.txt
    vocab = bpe.get_vocab_size()
    cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                  bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():                                         # sharper logits than the init's
        for p in model.parameters():
            p.mul_(4.0)
    model.save_pretrained(str(path), safe_serialization=True)
    return path


def transformers_continuation(folder, text: str, n: int) -> str:
    tok = transformers.GPT2TokenizerFast.from_pretrained(str(folder))
    model = transformers.GPT2LMHeadModel.from_pretrained(str(folder)).double().eval()
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=n, do_sample=False, pad_token_id=0, eos_token_id=0)
    return text + tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_generate_from_a_gpt2_folder_prints_what_transformers_generates(folder, backend, capsys):
    assert main(["generate", str(folder), *PROMPTS, "--max-new-tokens", "12", "--backend", backend,
                 "--dtype", "float64"]) == 0
    out = capsys.readouterr().out                 # (random weights: any bytes, control codes too,
    # which are printed escaped: npformer.data.display.visible, tested on its own in test_display.py)
    assert out == "".join(visible(transformers_continuation(folder, p, 12)) + "\n" for p in PROMPTS)


def test_sampling_from_a_folder_is_seeded(folder, capsys):
    args = ["generate", str(folder), PROMPTS[0], "--temperature", "0.9", "--seed", "3"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first and first.startswith(PROMPTS[0])


def test_a_folder_without_tokenizer_files_is_one_line(tmp_path, capsys):
    (tmp_path / "config.json").write_text("{}")
    assert main(["generate", str(tmp_path), "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vocab.json" in err[0] and "merges.txt" in err[0]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_folder_stops_at_a_stop_string_and_writes_the_samples(folder, backend, capsys, tmp_path):
    new = [transformers_continuation(folder, p, 12)[len(p):] for p in PROMPTS]
    stop = new[0][len(new[0]) // 2]                       # a character from the middle of the first
    out = tmp_path / "samples.txt"
    assert main(["generate", str(folder), *PROMPTS, "--max-new-tokens", "12", "--backend", backend,
                 "--dtype", "float64", "--stop", stop, "--out", str(out)]) == 0
    expected = [p + (n[: n.index(stop)] if stop in n else n) for p, n in zip(PROMPTS, new)]
    assert out.read_text(encoding="utf-8") == "".join(e + "\n" for e in expected)
    assert capsys.readouterr().out.startswith("".join(visible(e) + "\n" for e in expected))


def test_more_new_tokens_than_the_folder_positions_leave_get_a_note(folder, capsys):
    assert main(["generate", str(folder), "the lazy fox", "--max-new-tokens", "500"]) == 0
    err = capsys.readouterr().err
    assert "note: --max-new-tokens 500: the model reads 64 tokens at most (n_positions)" in err
