"""`npformer train --task lm --data FILE`: a language model on a text corpus generated here, its
metrics, checkpoint (tokenizer inside), resume, both backends and `generate` printing text."""
from __future__ import annotations

import collections
import math
import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.data.text_lm import TextLMTask, build_text_task, split_text
from npformer.io import checkpoint as ck
from npformer.training.resume import BatchStream

SMALL = ["--d-model", "32", "--heads", "2", "--d-ff", "64", "--layers", "1", "--context", "32",
         "--batch-size", "16", "--lr", "1e-2", "--warmup", "30", "--label-smoothing", "0",
         "--no-progress", "--threads", "1"]


def sentences(n_chars: int, seed: int = 0) -> str:
    """Lines 'the big cat sat on the mat.' of random words: strong character structure."""
    rng = random.Random(seed)
    det, adj = ["the", "a", "one", "my"], ["big", "red", "old", "small", "happy"]
    noun, verb = ["cat", "dog", "bird", "fox", "cow"], ["sat", "ran", "slept", "jumped", "stood"]
    place = ["mat", "log", "hill", "road", "bed"]
    lines: list[str] = []
    while sum(map(len, lines)) < n_chars:
        lines.append(f"{rng.choice(det)} {rng.choice(adj)} {rng.choice(noun)} {rng.choice(verb)} "
                     f"on the {rng.choice(place)}.\n")
    return "".join(lines)


def unigram_entropy(text: str) -> float:
    """Nats per character of the corpus's character frequencies."""
    n = len(text)
    return -sum(c / n * math.log(c / n) for c in collections.Counter(text).values())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "corpus.txt"
    path.write_text(sentences(6000))
    return path


def test_validation_loss_ends_well_below_the_unigram_entropy(corpus, tmp_path, capsys):
    save = str(tmp_path / "lm.npz")
    assert main(["train", "--task", "lm", "--data", str(corpus), *SMALL, "--steps", "150",
                 "--eval-every", "75", "--save", save]) == 0
    cap = capsys.readouterr()
    out = cap.out + cap.err                                  # progress lines may go to stderr
    assert out.count("bits/char") == 2 and out.count("sample:") == 2      # step 75, the end
    metrics = ck.load_checkpoint(save).metadata["metrics"]
    h = unigram_entropy(split_text(corpus.read_text(), 0.1)[1])           # the validation side's
    assert metrics["loss"] < 0.5 * h, (metrics["loss"], h)
    # char tokens: one per character, so bits per character is the loss in bits
    assert metrics["bits_per_char"] == pytest.approx(metrics["loss"] / math.log(2), rel=1e-9)
    assert metrics["perplexity"] == pytest.approx(math.exp(metrics["loss"]), rel=1e-9)


def test_checkpoint_holds_the_tokenizer_and_generate_prints_text(corpus, tmp_path, capsys):
    save = str(tmp_path / "lm.npz")
    assert main(["train", "--task", "lm", "--data", str(corpus), *SMALL, "--steps", "2",
                 "--save", save]) == 0
    meta = ck.load_checkpoint(save).metadata["task"]
    assert meta["tokenizer"]["type"] == "char"
    assert set(meta["tokenizer"]["chars"]) == set(corpus.read_text())
    corpus_moved = tmp_path / "elsewhere.npz"                             # generate needs no corpus
    corpus_moved.write_bytes(Path(save).read_bytes())
    capsys.readouterr()
    assert main(["generate", str(corpus_moved), "the big", "--temperature", "0.8", "--top-k", "5",
                 "--seed", "1", "--max-new-tokens", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("sampling (temperature 0.8, top-k 5")
    text = "\n".join(lines[1:])
    assert text.startswith("the big") and len(text) == len("the big") + 10
    assert set(text) <= set(corpus.read_text())                           # no UNK, no specials


def test_bpe_tokenizer_round_trips_through_the_checkpoint(corpus, tmp_path, capsys):
    save = str(tmp_path / "bpe.npz")
    assert main(["train", "--task", "lm", "--data", str(corpus), *SMALL, "--tokenizer", "bpe",
                 "--vocab-size", "300", "--steps", "2", "--save", save]) == 0
    task = TextLMTask(**{k: v for k, v in ck.load_checkpoint(save).metadata["task"].items()
                         if k not in ("name", "data")}, files=[str(corpus)])
    assert task.tokenizer.kind == "bpe" and task.vocab_size == 300
    text = corpus.read_text()
    assert task.tokenizer.decode(task.tokenizer.encode(text)) == text


def test_bits_per_character_divide_by_characters_not_bpe_tokens(corpus):
    import npformer as nf
    from npformer.training.text_eval import evaluate_text
    task = build_text_task([corpus], tokenizer="bpe", vocab_size=320, context=16)
    model = nf.CausalLM(nf.TransformerConfig(vocab_size=task.vocab_size, max_len=16, d_model=16,
                                             num_heads=2, d_ff=16, num_decoder_layers=1), seed=0)
    ev = evaluate_text(model, task)
    val_text = split_text(corpus.read_text(), 0.1)[1]
    assert ev.num_tokens == 16 * len(task.heldout())
    # the scored targets are the validation text but its first token and the last partial window
    longest = max(len(b) for b in task.tokenizer.token_bytes)            # bytes >= characters
    assert len(val_text) - 17 * longest <= ev.num_chars < len(val_text)
    assert ev.num_chars > ev.num_tokens                                  # merges: tokens < chars
    assert ev.bits_per_char == pytest.approx(ev.loss * ev.num_tokens / math.log(2) / ev.num_chars)


def test_resume_continues_bit_identically(corpus, tmp_path):
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    run = ["train", "--task", "lm", "--data", str(corpus), *SMALL, "--dropout", "0.1"]
    assert main([*run, "--steps", "6", "--save", full]) == 0
    assert main([*run, "--steps", "4", "--save", half]) == 0
    assert main(["train", "--resume", half, "--steps", "2", "--save", resumed, "--no-progress"]) == 0
    a, b = ck.load_checkpoint(full), ck.load_checkpoint(resumed)
    assert a.step == b.step == 6 and a.state.keys() == b.state.keys()
    for k in a.state:
        assert np.array_equal(a.state[k], b.state[k]), k                  # bit for bit


def test_resume_refuses_a_changed_corpus_and_text_options(corpus, tmp_path, capsys):
    data = tmp_path / "c.txt"
    data.write_text(corpus.read_text())
    half = str(tmp_path / "half.npz")
    assert main(["train", "--task", "lm", "--data", str(data), *SMALL, "--steps", "1",
                 "--save", half]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", half, "--steps", "1", "--context", "16"]) == 2
    assert "--context: not allowed with --resume" in capsys.readouterr().err
    data.write_text(corpus.read_text() + "one more line.\n")
    assert main(["train", "--resume", half, "--steps", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(data) in err and "has changed" in err and len(err.strip().splitlines()) == 1


def test_torch_backend_trains_saves_and_generates(corpus, tmp_path, capsys):
    pytest.importorskip("torch")
    save = str(tmp_path / "torch.npz")
    assert main(["train", "--task", "lm", "--data", str(corpus), *SMALL, "--backend", "torch",
                 "--steps", "3", "--save", save]) == 0
    assert "bits/char" in capsys.readouterr().out
    assert main(["train", "--backend", "torch", "--resume", save, "--steps", "1",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["generate", save, "the", "--backend", "torch", "--max-new-tokens", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("greedy, KV cache, torch") and lines[1].startswith("the")


def test_a_folder_is_read_in_sorted_order_skipping_non_text(tmp_path):
    (tmp_path / "b.txt").write_text(sentences(3000, seed=2))
    (tmp_path / "a.md").write_text(sentences(3000, seed=1))
    (tmp_path / "image.bin").write_bytes(b"\x89PNG\0\0\0")
    task = build_text_task([tmp_path], context=16)
    assert [p.rsplit("/", 1)[-1] for p in task.corpus.files] == ["a.md", "b.txt"]
    assert task.corpus.text == sentences(3000, seed=1) + sentences(3000, seed=2)
    assert [p.rsplit("/", 1)[-1] for p, _ in task.corpus.skipped] == ["image.bin"]


def test_windows_are_contiguous_slices_and_validation_follows_training(corpus):
    task = build_text_task([corpus], context=8)
    tr, _ = task.arrays()
    text = corpus.read_text()
    train_text, val_text = split_text(text, 0.1)
    assert train_text + val_text == text and val_text.startswith(text[len(train_text):])
    assert task.tokenizer.decode(tr.tolist()) == train_text
    batch = task.sample(np.random.default_rng(0), 5).collate()
    for row_ids, row_tgt in zip(batch.ids, batch.targets):
        assert np.array_equal(row_ids[1:], row_tgt[:-1])                  # targets: shifted by one
    held = task.heldout()
    assert np.array_equal(held.starts, np.arange(len(held)) * 8)          # non-overlapping
    assert task.characters(held) == 8 * len(held)


def test_drawing_batches_does_not_grow_memory(corpus):
    task = build_text_task([corpus], context=32)
    stream = BatchStream(task, 16, seed=0)
    for _ in range(20):
        next(stream)
    tracemalloc.start()
    for _ in range(20):
        next(stream)
    early = tracemalloc.get_traced_memory()[0]
    for _ in range(400):
        next(stream)
    late = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert late - early < 64 * 1024, (early, late)                        # nothing accumulates


def test_summary_writes_a_huge_perplexity_in_a_few_digits():
    """A nearly diverged model's perplexity (exp of a loss in the hundreds) used to print as a
    300-digit number."""
    from npformer.training.text_eval import TextEvalResult, text_metrics
    loss, ppl, bpc = text_metrics(total_nats=650.0 * 10, tokens=10, chars=10)
    line = TextEvalResult(loss, 0.0, 0.0, 1, 10, perplexity=ppl, bits_per_char=bpc,
                          num_chars=10).summary()
    assert "perplexity 1.96e+282  " in line and len(line) < 200
    small = TextEvalResult(1.0, 0.5, 0.0, 1, 10, perplexity=math.e, bits_per_char=1.0,
                           num_chars=10).summary()
    assert "perplexity 2.72  " in small


def test_the_python_train_function_takes_a_text_task_as_it_is(corpus):
    """`train(model, task, config)` with a text task and no `batches=` (docs/TEXT.md's Python API)
    draws the task's batches itself; the same seed gives the same batches."""
    import npformer as nf
    from npformer.data.tasks import batch_iterator
    from npformer.training.train import TrainConfig, train
    task = build_text_task([corpus], context=16)
    a, b = (next(batch_iterator(task, 3, seed=4)) for _ in range(2))
    assert a.ids.shape == (3, 16) and np.array_equal(a.ids, b.ids)
    model = nf.CausalLM(nf.TransformerConfig(vocab_size=task.vocab_size, max_len=16, d_model=16,
                                             num_heads=2, d_ff=16, num_decoder_layers=1), seed=0)
    result = train(model, task, TrainConfig(steps=3, batch_size=4, lr=1e-3, warmup=2, eval_every=0))
    assert result.steps == 3 and all(np.isfinite(result.losses))
