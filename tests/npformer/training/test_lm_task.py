"""`--task lm`: the addition corpus (rows, held-out split), the training/evaluation hooks and the
command line round trip (train -> save -> evaluate -> generate greedy / sampled -> plot), both
backends. The accuracy the defaults reach is measured by the opt-in test at the end
(NPFORMER_SLOW=1), not in CI."""
import os
import re

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.data.lm_data import ArithmeticTask, CharVocab
from npformer.data.registry import make_any_task
from npformer.data.tasks import BOS, EOS, PAD, Task, batch_iterator, examples_from_text
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(task="lm", max_number=20, steps=4, batch_size=8, eval_size=12,
                       examples=2, max_len=None, num_symbols=None)




def ids_of(text: str) -> list[int]:
    """Token ids written out by hand: "0".."9" are 3..12, "+" 13, "=" 14."""
    table = {**{str(d): 3 + d for d in range(10)}, "+": 13, "=": 14}
    return [table[c] for c in text]


# -- the corpus -------------------------------------------------------------------------------------
def test_vocab_and_rows():
    task = ArithmeticTask(max_number=100)
    v = task.vocab
    assert isinstance(v, CharVocab) and v.size == 15 == task.vocab_size
    assert v.encode("12+7=19") == ids_of("12+7=19")
    b = task.collate(task.examples_from_text(["12+7=", "0+0", "99+99="]))
    row0 = [BOS] + ids_of("12+7=19")
    assert b.ids[0, :8].tolist() == row0 and (b.ids[0, 8:] == PAD).all()
    assert b.targets[0, :8].tolist() == ids_of("12+7=19") + [EOS] and (b.targets[0, 8:] == PAD).all()
    assert b.ids[1, :6].tolist() == [BOS] + ids_of("0+0=0") and b.targets[1, 5] == EOS
    assert b.ids[2].tolist() == [BOS] + ids_of("99+99=198")
    assert b.targets[2].tolist() == ids_of("99+99=198") + [EOS]
    assert b.prompt_lengths.tolist() == [6, 5, 7] and b.lengths.tolist() == [8, 6, 10]
    # the answer mask covers exactly the answer's digits and EOS
    assert b.answer_mask[0].tolist() == [False] * 5 + [True] * 3 + [False] * 2
    assert b.num_tokens == 8 + 6 + 10
    prompts, answer = task.prompts(task.examples_from_text(["12+7=", "99+99="]))
    assert prompts.tolist() == [[BOS] + ids_of("12+7=") + [PAD], [BOS] + ids_of("99+99=")]
    assert answer.tolist() == [ids_of("19") + [EOS, PAD], ids_of("198") + [EOS]]
    assert task.max_len == 11 and b.ids.shape[1] <= task.max_len


def test_heldout_split_is_disjoint_and_seeded():
    task = ArithmeticTask(max_number=30, seed=4, heldout_fraction=0.2)
    held = task.heldout(10_000)
    assert len(held) == round(0.2 * 900)                          # every held-out pair, once
    assert task.is_heldout(held.a, held.b).all()
    assert len(set(zip(held.a.tolist(), held.b.tolist()))) == len(held)
    stream = batch_iterator(task, 64, seed=2)
    batches = [next(stream) for _ in range(20)]
    for bt in batches:                                            # training never sees held-out
        a_b = task.examples_from_text([task.vocab.decode(r).split("=")[0] for r in bt.ids])
        assert not task.is_heldout(a_b.a, a_b.b).any()
    again = batch_iterator(task, 64, seed=2)
    assert all((next(again).ids == bt.ids).all() for bt in batches)
    other = ArithmeticTask(max_number=30, seed=5, heldout_fraction=0.2)
    assert not (other._heldout == task._heldout).all()


def test_existing_tasks_unchanged_by_the_dispatch():
    t = make_any_task(name="reverse", num_symbols=5, min_len=1, max_len=4, seed=0, num_pairs=200)
    assert isinstance(t, Task)
    b1 = next(batch_iterator(t, 4, seed=1))
    b2 = next(batch_iterator(Task(name="reverse", num_symbols=5, min_len=1, max_len=4), 4, seed=1))
    assert all((x == y).all() for x, y in zip(b1, b2))
    assert examples_from_text(ArithmeticTask(), ["3+4="]).a.tolist() == [3]


@pytest.mark.parametrize("call,needle", [
    (lambda: ArithmeticTask(max_number=1), "max_number"),
    (lambda: ArithmeticTask(heldout_fraction=1.0), "heldout_fraction"),
    (lambda: ArithmeticTask(name="lmx"), "task"),
    (lambda: ArithmeticTask().examples_from_text(["12-7="]), "12-7="),
    (lambda: ArithmeticTask(max_number=10).examples_from_text(["12+7="]), "0..9"),
    (lambda: make_any_task(name="copy", max_number=10), "--max-number"),
    (lambda: ArithmeticTask().collate(ArithmeticTask().heldout(1).take(np.arange(0))), "examples"),
])
def test_bad_task_arguments_are_named(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


# -- training hooks ---------------------------------------------------------------------------------
def test_training_lowers_the_loss_numpy():
    from npformer.training.train import TrainConfig, build_model, evaluate, model_config_for, train
    task = ArithmeticTask(max_number=20)
    cfg = model_config_for(task, d_model=16, num_heads=2, d_ff=32, num_decoder_layers=1,
                           num_encoder_layers=1)
    model = build_model(cfg, task, seed=0)
    assert type(model).__name__ == "CausalLM"
    before = evaluate(model, task, task.heldout(40))
    res = train(model, task, TrainConfig(steps=60, batch_size=32, lr=3e-3, warmup=20,
                                         progress=False))
    after = evaluate(model, task, task.heldout(40), num_shown=2)
    assert after.loss < before.loss - 0.3, (before.loss, after.loss)
    assert np.mean(res.losses[-10:]) < np.mean(res.losses[:10])
    assert after.num_examples == 40 and len(after.examples) == 2
    assert after.examples[0][0].endswith("=")


def test_the_twins_train_the_same_lm():
    torch = pytest.importorskip("torch")
    import npformer.training.train as N
    import torchformer.training.train as T
    task = ArithmeticTask(max_number=20)
    cfg = N.model_config_for(task, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                             num_encoder_layers=1, dtype="float64", dropout=0.0)
    tc = N.TrainConfig(steps=5, batch_size=8, lr=3e-3, warmup=2, progress=False)
    npm, tfm = N.build_model(cfg, task, seed=1), T.build_model(cfg, task, seed=1)
    tfm.load_state_dict({k: torch.as_tensor(v) for k, v in npm.state_dict().items()})
    rn, rt = N.train(npm, task, tc), T.train(tfm, task, tc)
    np.testing.assert_allclose(rn.losses, rt.losses, rtol=1e-10)
    en, et = N.evaluate(npm, task, task.heldout(16)), T.evaluate(tfm, task, task.heldout(16))
    assert en.examples == et.examples and en.sequence_accuracy == et.sequence_accuracy
    np.testing.assert_allclose(en.loss, et.loss, rtol=1e-10)


# -- the command line -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lm_ckpt(tmp_path_factory):
    d = tmp_path_factory.mktemp("lm")
    ckpt = str(d / "lm.npz")
    assert main(["train", *TINY, "--save", ckpt, "--plot", str(d / "plots")]) == 0
    return d, ckpt


def test_train_lm_saves_plots_and_metadata(lm_ckpt):
    d, ckpt = lm_ckpt
    from npformer.io.checkpoint import load_checkpoint
    c = load_checkpoint(ckpt)
    assert c.model_class == "CausalLM" and c.step == 4
    assert c.metadata["task"] == {"name": "lm", "max_number": 20, "seed": 0,
                                  "heldout_fraction": 0.1}
    names = set(os.listdir(d / "plots"))
    assert {"loss.png", "attn_decoder_layer0.png"} <= names


def test_evaluate_and_generate_lm(lm_ckpt, capsys):
    _, ckpt = lm_ckpt
    code, out, err = run(["evaluate", ckpt, "--eval-size", "10"], capsys)
    assert code == 0, err
    assert "task=lm" in out and "(10 sequences)" in out
    code, out, err = run(["generate", ckpt, "12+7=", "3+4="], capsys)
    assert code == 0, err
    lines = [l for l in out.splitlines() if "->" in l]
    assert out.startswith("greedy") and len(lines) == 2 and lines[0].startswith("12+7= ->")
    assert ("expected 19" in lines[0]) != lines[0].rstrip().endswith("ok")
    code, out2, err = run(["generate", ckpt, "12+7=", "3+4=", "--no-cache", "--backend", "torch",
                           "--dtype", "float64"], capsys)
    assert code == 0, err
    code, out3, _ = run(["generate", ckpt, "12+7=", "3+4=", "--dtype", "float64"], capsys)
    dec = lambda o: [l.split("[")[0] for l in o.splitlines() if "->" in l]  # noqa: E731
    assert dec(out2) == dec(out3)                                   # greedy: twins agree


def test_generate_sampling_is_seeded(lm_ckpt, capsys):
    _, ckpt = lm_ckpt
    argv = ["generate", ckpt, "12+7=", "1+1=", "5+9=", "--temperature", "2.0", "--top-p", "0.95"]
    outs = [run(argv + ["--seed", s], capsys) for s in ("1", "1", "2")]
    assert all(code == 0 for code, _, _ in outs), outs
    assert "sampling (temperature 2" in outs[0][1]
    assert outs[0][1] == outs[1][1]
    code, greedy, _ = run(["generate", ckpt, "12+7=", "1+1=", "5+9="], capsys)
    code, top1, _ = run(["generate", ckpt, "12+7=", "1+1=", "5+9=", "--top-k", "1", "--seed",
                         "3"], capsys)
    dec = lambda o: [l.split("[")[0] for l in o.splitlines() if "->" in l]  # noqa: E731
    assert dec(greedy) == dec(top1)
    code, tf1, err = run(["generate", ckpt, "12+7=", "--seed", "4", "--backend", "torch"], capsys)
    code2, tf2, _ = run(["generate", ckpt, "12+7=", "--seed", "4", "--backend", "torch"], capsys)
    assert code == 0 == code2 and tf1 == tf2, err


@pytest.mark.parametrize("extra,needle", [
    (["12-7="], "12-7="),
    (["12+7=", "--temperature", "0"], "--temperature"),
    (["12+7=", "--top-p", "1.5"], "--top-p"),
    (["12+7=", "--top-k", "0"], "--top-k"),
    (["12+7=", "--seed", "-1"], "--seed"),
    (["12+7=", "--seed", "1", "--beam", "2"], "--beam 2"),
])
def test_generate_lm_errors_are_named(lm_ckpt, extra, needle, capsys):
    _, ckpt = lm_ckpt
    code, _, err = run(["generate", ckpt, *extra], capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_sampling_flags_on_a_seq2seq_checkpoint_are_refused(tmp_path, capsys):
    ckpt = str(tmp_path / "rev.npz")
    code, _, err = run(["train", *tiny_train_args(examples=None), "--save", ckpt], capsys)
    assert code == 0, err
    code, _, err = run(["generate", ckpt, "abc", "--temperature", "0.5"], capsys)
    assert code == 2 and "sampling is for language-model checkpoints" in err
    code, _, err = run(["train", "--task", "copy", "--max-number", "5", "--steps", "1"], capsys)
    assert code == 2 and "--max-number" in err


def test_train_lm_torch_backend(capsys):
    pytest.importorskip("torch")
    code, out, err = run(["train", *TINY, "--backend", "torch"], capsys)
    assert code == 0, err
    assert "CausalLM" in out and "torchformer" in out and "exact-sequence accuracy" in out


# -- the defaults' accuracy (opt-in: minutes of CPU) ------------------------------------------------
@pytest.mark.skipif(os.environ.get("NPFORMER_SLOW") != "1", reason="set NPFORMER_SLOW=1 (minutes)")
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_default_lm_run_reaches_the_documented_accuracy(backend, capsys):
    code, out, err = run(["train", "--task", "lm", "--no-progress", "--backend", backend], capsys)
    assert code == 0, err
    line = next(l for l in out.splitlines() if "exact-sequence accuracy" in l)
    acc = float(re.search(r"greedy completion\) ([0-9.]+)%", line).group(1))
    assert acc >= 90.0, line


def test_resume_an_lm_run_equals_the_uninterrupted_run(tmp_path, capsys):
    from npformer.io import checkpoint as ck
    i = TINY.index("--steps")
    argv = TINY[:i] + TINY[i + 2:] + ["--dropout", "0.2", "--warmup", "3"]
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    assert main(["train", *argv, "--steps", "5", "--save", full]) == 0
    assert main(["train", *argv, "--steps", "3", "--save", half]) == 0
    assert main(["train", "--resume", half, "--steps", "2", "--save", resumed, "--no-progress",
                 "--examples", "0", "--eval-size", "4"]) == 0
    capsys.readouterr()
    a, b, c = (ck.load_checkpoint(p) for p in (full, resumed, half))
    assert b.step == 5 and b.metadata["task"]["name"] == "lm" and b.model_class == "CausalLM"
    for k in a.state:
        assert np.array_equal(a.state[k], b.state[k]), k                # bit for bit
    assert not all(np.array_equal(a.state[k], c.state[k]) for k in a.state)
