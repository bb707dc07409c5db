"""`npformer train --task lm --data FILE --init GPT2_FOLDER`: fine-tunes the folder's model with its
own tokenizer in both backends, lowers the held-out loss, saves a checkpoint that evaluate, generate
and --resume read, and a folder (--save-pretrained) that transformers loads with equal logits;
options the folder decides are refused before any work, named in one line."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.io.tiny_folders import bert_folder, gpt2_folder, text_file

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return gpt2_folder(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return text_file(tmp_path_factory.mktemp("text") / "corpus.txt")




def final_loss(out: str) -> float:
    return float(re.findall(r"(?:validation|held-out): loss ([\d.]+)", out)[-1])


def losses(out: str) -> tuple[float, float]:
    """(held-out loss before, after) from train's output."""
    before = float(re.search(r"before fine-tuning, (?:validation|held-out): loss ([\d.]+)",
                             out).group(1))
    return before, final_loss(out)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_fine_tuning_lowers_the_held_out_loss(gpt2, corpus, tmp_path, capsys, backend):
    code, out, err = run(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2),
                          "--context", "24", "--steps", "40", "--lr", "1e-3", "--no-progress",
                          "--backend", backend, "--save", str(tmp_path / "run.npz")], capsys)
    assert code == 0, err
    before, after = losses(out)
    assert after < before - 0.5, out
    assert "gpt2_bpe tokenizer" in out and "context 24" in out


def test_checkpoint_is_read_by_evaluate_generate_and_resume(gpt2, corpus, tmp_path, capsys):
    ckpt, tuned = tmp_path / "run.npz", tmp_path / "tuned"
    code, out, err = run(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2),
                          "--context", "24", "--steps", "10", "--no-progress", "--dtype",
                          "float64", "--save", str(ckpt), "--save-pretrained", str(tuned)], capsys)
    assert code == 0, err
    after = losses(out)[1]
    code, out, err = run(["evaluate", str(ckpt)], capsys)
    assert code == 0 and final_loss(out) == after, out + err
    code, out, err = run(["generate", str(ckpt), "the cat", "--max-new-tokens", "5"], capsys)
    assert code == 0 and out.splitlines()[-1].startswith("the cat"), out + err
    code, out, err = run(["train", "--resume", str(ckpt), "--steps", "3", "--no-progress"], capsys)
    assert code == 0 and "at step 10" in out, out + err
    # the Hugging Face folder: transformers reads it, with the same logits as the checkpoint
    from npformer.io.checkpoint import load_model
    ours = load_model(str(ckpt))
    ref = transformers.GPT2LMHeadModel.from_pretrained(str(tuned), dtype=torch.float64).eval()
    tok = transformers.GPT2TokenizerFast.from_pretrained(str(tuned))
    ids = tok("the cat sat on the mat", return_tensors="pt").input_ids
    from npformer.io import hub
    again = hub.from_pretrained(tuned, "float64")
    with torch.no_grad():
        want = ref(ids).logits.numpy()
    np.testing.assert_allclose(again(ids.numpy()), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.eval()(ids.numpy()), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("extra, needle", [
    (["--d-model", "16", "--heads", "2", "--tokenizer", "bpe"],
     "--d-model, --heads, --tokenizer: not allowed with --init"),
    (["--positional", "sinusoidal"], "--positional: not allowed with --init"),
    (["--context", "65"], "--context 65: the model of --init"),
    (["--nproc", "2", "--backend", "torch"], "--nproc 2: not with --init"),
])
def test_options_the_folder_decides_are_refused_first(gpt2, corpus, tmp_path, capsys, extra,
                                                      needle):
    save = tmp_path / "never.npz"
    code, out, err = run(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2),
                          "--save", str(save), *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and needle in lines[0], err
    assert out == "" and not save.exists()


def test_wrong_task_resume_and_folders_are_one_line(gpt2, corpus, tmp_path, capsys):
    bert = bert_folder(tmp_path / "bert")
    bare = bert_folder(tmp_path / "bare", head="BertModel")
    capsys.readouterr()                                   # transformers' own progress lines
    cases = [(["--task", "reverse", "--init", str(gpt2)], "use --task lm --data FILE"),
             (["--task", "lm", "--data", str(corpus), "--init", str(bert)],
              "a BERT folder is fine-tuned as a masked language model on your text: use --task "
              "mlm --data FILE"),
             (["--task", "mlm", "--data", str(corpus), "--init", str(bare)],
              "without a masked-LM head"),
             (["--task", "lm", "--data", str(corpus), "--init", str(tmp_path / "nowhere")],
              "no such folder"),
             (["--task", "lm", "--data", str(corpus), "--save-pretrained", str(tmp_path / "x")],
              "--save-pretrained: only with --init")]
    for extra, needle in cases:
        code, out, err = run(["train", *extra], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and needle in lines[0], (extra, err)


def test_save_pretrained_never_replaces_a_folder_silently(gpt2, corpus, tmp_path, capsys):
    out_dir = tmp_path / "taken"
    out_dir.mkdir()
    (out_dir / "config.json").write_text("{}")
    code, out, err = run(["train", "--task", "lm", "--data", str(corpus), "--init", str(gpt2),
                          "--save-pretrained", str(out_dir)], capsys)
    assert code == 2 and "holds config.json; pass --overwrite" in err and out == ""
    assert (out_dir / "config.json").read_text() == "{}"


# -- BERT: masked-LM fine-tuning on the text (npformer.data.text_mlm) ------------------------------
@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return bert_folder(tmp_path_factory.mktemp("bert"))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bert_masked_lm_fine_tuning_lowers_the_held_out_loss(bert, corpus, capsys, backend):
    code, out, err = run(["train", "--task", "mlm", "--data", str(corpus), "--init", str(bert),
                          "--context", "24", "--steps", "40", "--lr", "1e-3", "--no-progress",
                          "--backend", backend], capsys)
    assert code == 0, err
    before, after = losses(out)
    assert after < before - 1.0, out
    assert "wordpiece tokenizer" in out and "[CLS] + 22 + [SEP]" in out


def test_bert_checkpoint_is_read_by_evaluate_generate_resume_and_transformers(bert, corpus,
                                                                             tmp_path, capsys):
    ckpt, tuned = tmp_path / "mlm.npz", tmp_path / "bert-tuned"
    code, out, err = run(["train", "--task", "mlm", "--data", str(corpus), "--init", str(bert),
                          "--context", "24", "--steps", "10", "--no-progress", "--dtype", "float64",
                          "--save", str(ckpt), "--save-pretrained", str(tuned)], capsys)
    assert code == 0, err
    after = losses(out)[1]
    code, out, err = run(["evaluate", str(ckpt)], capsys)
    assert code == 0 and final_loss(out) == after, out + err
    code, out, err = run(["train", "--resume", str(ckpt), "--steps", "2", "--no-progress"], capsys)
    assert code == 0 and "at step 10" in out, out + err
    # generate: the checkpoint and the saved folder fill the same masks with the same numbers
    code, from_ckpt, err = run(["generate", str(ckpt), "the cat [MASK] on the mat", "--top-k",
                                "3"], capsys)
    assert code == 0 and len(from_ckpt.splitlines()) == 4, from_ckpt + err
    code, from_folder, err = run(["generate", str(tuned), "the cat [MASK] on the mat", "--top-k",
                                  "3", "--dtype", "float64"], capsys)
    assert code == 0 and from_folder == from_ckpt, from_folder + err
    from npformer.io.checkpoint import load_model
    ours = load_model(str(ckpt)).eval()
    ref = transformers.BertForMaskedLM.from_pretrained(str(tuned), dtype=torch.float64).eval()
    ids = np.array([[2, 30, 41, 4, 55, 3]])
    with torch.no_grad():
        want = ref(torch.from_numpy(ids)).logits.numpy()
    np.testing.assert_allclose(ours(ids), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("folder", ["gpt2", "bert"])
def test_a_seed_fixes_a_torch_fine_tuning_run(request, corpus, capsys, folder):
    """Dropout is on in these folders (0.1): the same seed gives the same run."""
    task = "lm" if folder == "gpt2" else "mlm"
    argv = ["train", "--task", task, "--data", str(corpus), "--init",
            str(request.getfixturevalue(folder)), "--context", "16", "--steps", "5",
            "--no-progress", "--backend", "torch", "--seed", "4"]
    def figures(out):                                  # every number but the timings
        return re.findall(r"final train loss [\d.]+|(?:validation|held-out): .*|sample: .*", out)
    first, second = run(argv, capsys), run(argv, capsys)
    assert first[0] == second[0] == 0 and figures(first[1]) == figures(second[1])
    assert len(figures(first[1])) >= 3
