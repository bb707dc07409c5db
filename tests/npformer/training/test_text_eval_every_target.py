"""The held-out loss of a text language model counts every target token: with GPT-2's tokenizer id 0
is "!", a real token (no text window is padded), so a corpus full of "!" is scored over all its
targets, in both twins, equal to transformers' own loss over the same windows."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from npformer.data.text_lm import TextLMTask
from npformer.data.tokenizers import GPT2Tokenizer
from npformer.io import hub
from npformer.training.text_eval import evaluate_text
from tests.npformer.io.tiny_folders import gpt2_folder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

CONTEXT = 16
EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    root = tmp_path_factory.mktemp("bang")
    folder = gpt2_folder(root / "gpt2", dropout=0.0)
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    # GPT-2's own layout: the byte tokens from id 0 ("!" first), <|endoftext|> last
    order = sorted((t for t in vocab if t != EOT), key=vocab.get) + [EOT]
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(order)}),
                                       encoding="utf-8")
    rng = np.random.default_rng(0)
    words = ["wow!", "the dog!", "Paris!", "no!!", "the capital", "fox"]
    text = "\n".join(" ".join(rng.choice(words, size=6)) for _ in range(120)) + "\n"
    (root / "bang.txt").write_text(text, encoding="utf-8")
    tok = GPT2Tokenizer.from_folder(str(folder))
    assert tok.encode("!") == [0]                     # the premise: "!" is id 0 in this vocabulary
    task = TextLMTask([str(root / "bang.txt")], tok, context=CONTEXT)
    return folder, task


def transformers_loss(folder, windows) -> tuple[float, int]:
    """Mean cross-entropy over every target of the windows, by transformers itself."""
    ref = transformers.GPT2LMHeadModel.from_pretrained(str(folder), dtype=torch.float64).eval()
    batch = windows.collate()
    with torch.no_grad():
        logits = ref(torch.from_numpy(batch.ids)).logits                        # (B, T, V)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.from_numpy(batch.targets).reshape(-1))
    return float(loss), int(batch.targets.size)


def test_targets_equal_to_id_0_are_counted(setting):
    folder, task = setting
    windows = task.heldout()
    targets = windows.collate().targets
    assert (targets == 0).mean() > 0.05                   # many "!" targets in the held-out text
    want, n = transformers_loss(folder, windows)
    got = evaluate_text(hub.from_pretrained(str(folder), "float64"), task, windows, batch_size=4)
    assert got.num_tokens == n
    assert math.isclose(got.loss, want, rel_tol=1e-12), (got.loss, want)


def test_torch_twin_counts_them_too(setting):
    from torchformer.io import hub as tf_hub
    from torchformer.training.lm_train import evaluate_text as tf_evaluate_text
    folder, task = setting
    windows = task.heldout()
    want, n = transformers_loss(folder, windows)
    got = tf_evaluate_text(tf_hub.from_pretrained(str(folder), "float64"), task, windows,
                           batch_size=4)
    assert got.num_tokens == n
    assert math.isclose(got.loss, want, rel_tol=1e-12), (got.loss, want)


def test_padded_language_model_batches_still_leave_pad_out():
    from npformer.data.lm_data import ArithmeticTask
    from npformer.data.vocab import PAD
    batch = ArithmeticTask(name="lm", max_number=999, seed=0).heldout(64).collate()
    assert (batch.targets == PAD).any()
    assert batch.num_tokens == int((batch.targets != PAD).sum()) < batch.targets.size
    assert batch.loss_ignore_index == PAD
