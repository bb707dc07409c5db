"""`npformer train --task classify --data ROWS.tsv --init BERT_FOLDER`: a BERT classifier with a fresh
head, the folder's WordPiece, learns a labelled corpus in both backends; its checkpoint is read by
evaluate, generate and --resume, its --save-pretrained folder by transformers with equal logits;
conflicting options are refused in one line before any work."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.io.tiny_folders import bert_folder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

KEYS = {"france": "paris", "germany": "berlin", "italy": "rome"}
FILLER = "the capital of is in fox jumps over lazy dog machines could think quick brown".split()


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return bert_folder(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """Texts of filler words and one key word; the label is the key word's country."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(240):
        label = list(KEYS)[int(rng.integers(3))]
        words = list(rng.choice(FILLER, size=int(rng.integers(3, 7))))
        words.insert(int(rng.integers(len(words) + 1)), KEYS[label])
        lines.append(" ".join(words) + "\t" + label)
    path = tmp_path_factory.mktemp("rows") / "rows.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path




def held_out(out: str) -> list[tuple[float, float, float]]:
    """(accuracy %, majority %, loss) of every held-out line of train's output."""
    return [(float(a), float(m), float(loss)) for a, loss, m in re.findall(
        r"held-out: accuracy ([\d.]+)%  macro F1 [\d.]+  loss ([\d.]+) .*majority-class rate "
        r"([\d.]+)%", out)]


FIT = ["--context", "16", "--steps", "80", "--batch-size", "16", "--lr", "2e-3", "--warmup", "10",
       "--no-progress"]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bert_classifier_learns_the_labels(bert, rows, capsys, backend):
    with pytest.warns(UserWarning, match="classifier.weight"):
        code, out, err = run(["train", "--task", "classify", "--data", str(rows), "--init",
                              str(bert), "--backend", backend, *FIT], capsys)
    assert code == 0, err
    (before_acc, majority, before), (acc, _, after) = held_out(out)
    assert "BertForSequenceClassification: d_model=32 heads=4 d_ff=64 2 layers" in out
    assert "wordpiece tokenizer" in out
    assert acc >= 90.0 and acc > majority + 40.0, out
    assert after < before - 0.5, out


def test_checkpoint_is_read_by_evaluate_generate_resume_and_transformers(bert, rows, tmp_path,
                                                                          capsys):
    ckpt, tuned = tmp_path / "cls.npz", tmp_path / "tuned"
    with pytest.warns(UserWarning):
        code, out, err = run(["train", "--task", "classify", "--data", str(rows), "--init",
                              str(bert), "--dtype", "float64", "--save", str(ckpt),
                              "--save-pretrained", str(tuned), *FIT], capsys)
    assert code == 0, err
    final = held_out(out)[-1]
    code, out, err = run(["evaluate", str(ckpt)], capsys)
    assert code == 0 and held_out(out)[-1] == final, out + err
    code, out, err = run(["generate", str(ckpt), "the paris fox", "rome is lazy",
                          "berlin could think"], capsys)
    assert code == 0, err
    assert re.findall(r" -> (\w+) \(p=", out) == ["france", "italy", "germany"], out
    test = tmp_path / "test.tsv"
    test.write_text("the paris dog\tfrance\nberlin is lazy\tgermany\nrome fox\titaly\n")
    code, out, err = run(["evaluate", str(ckpt), "--data", str(test)], capsys)
    assert code == 0 and "every one held out" in out, out + err
    assert held_out(out)[-1][0] == 100.0, out
    code, out, err = run(["train", "--resume", str(ckpt), "--steps", "2", "--no-progress"], capsys)
    assert code == 0 and "at step 80" in out, out + err
    from npformer.data.tokenizers import WordPieceTokenizer
    from npformer.io.checkpoint import load_model
    ours = load_model(str(ckpt)).eval()
    ref = transformers.BertForSequenceClassification.from_pretrained(
        str(tuned), dtype=torch.float64).eval()
    ids = np.array([WordPieceTokenizer.from_folder(str(tuned)).encode("the rome fox")])
    with torch.no_grad():
        want = ref(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(ours(ids), want, rtol=0, atol=1e-12)
    assert ref.config.num_labels == 3


@pytest.mark.parametrize("extra, needle", [
    (["--tokenizer", "bpe", "--vocab-size", "300"],
     "--tokenizer, --vocab-size: not allowed with --init"),
    (["--d-model", "16"], "--d-model: not allowed with --init"),
    (["--context", "65"], "--context 65: the model of --init"),
    (["--context", "2"], "--context 2: a BERT row is [CLS] + text + [SEP]"),
])
def test_options_the_folder_decides_are_refused_first(bert, rows, tmp_path, capsys, extra, needle):
    save = tmp_path / "never.npz"
    code, out, err = run(["train", "--task", "classify", "--data", str(rows), "--init", str(bert),
                          "--save", str(save), *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and needle in lines[0], err
    assert out == "" and not save.exists()


def test_a_classifier_folder_takes_classify_with_its_number_of_labels(tmp_path, rows, capsys):
    folder = bert_folder(tmp_path / "cls", head="BertForSequenceClassification")
    capsys.readouterr()
    code, out, err = run(["train", "--task", "mlm", "--data", str(rows), "--init", str(folder)],
                         capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "use --task classify --data FILE" in lines[0], err
    code, out, err = run(["train", "--task", "classify", "--data", str(rows), "--init",
                          str(folder), "--save", str(tmp_path / "never.npz")], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "num_labels" in lines[0], err       # 2 heads, 3 labels
    assert not (tmp_path / "never.npz").exists()
