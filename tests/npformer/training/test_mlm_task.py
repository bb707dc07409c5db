"""`--task mlm`: mirror sentences, BERT's 80/10/10 masking (frequencies, loss positions), the
BertForMaskedLM training hooks in both twins, and the command line round trip."""
import os
import re

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.data.mlm_data import MirrorTask, mask_tokens
from npformer.data.tasks import BOS, EOS, PAD, batch_iterator
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(task="mlm", num_symbols=5, max_len=4, steps=4, batch_size=8,
                       eval_size=12, examples=2)




def test_mirror_sentences():
    t = MirrorTask(num_symbols=5, max_len=4)
    v = t.vocab
    assert v.tokens[3:] == list("abcde#_") and t.mask_id == 9 and t.hash_id == 8
    ex = t.heldout(50)
    clean, lengths = t.clean_rows(ex)
    for row, n in zip(clean, lengths):
        text = v.decode(row)
        half, sep, rest = text.partition("#")
        assert sep == "#" and rest == half[::-1] and 1 <= len(half) <= 4
        assert row[0] == BOS and row[n - 1] == EOS and (row[n:] == PAD).all()
    assert v.encode("ab#ba") == [3, 4, 8, 4, 3]


def test_80_10_10_rule_frequencies():
    rng = np.random.default_rng(0)
    words = np.arange(3, 10)
    clean = rng.integers(3, 10, size=(4000, 30))
    clean[:, 0], clean[:, -1] = BOS, EOS
    clean[:5, 10:] = PAD                                          # padded rows
    ids, targets = mask_tokens(clean, np.random.default_rng(1), 0.15, 10, words)
    sel = targets != PAD
    assert not sel[:, 0].any() and not sel[:, -1].any() and not sel[:5, 10:].any()
    assert (targets[sel] == clean[sel]).all() and (ids[~sel] == clean[~sel]).all()
    frac = sel[5:, 1:-1].mean()
    assert abs(frac - 0.15) < 0.005, frac
    masked = (ids[sel] == 10).mean()
    unchanged = (ids[sel] == clean[sel]).mean()
    replaced = 1 - masked - unchanged
    # a random replacement can draw the same word (1 in 7): it then counts as unchanged
    assert abs(masked - 0.8) < 0.015 and abs(replaced - 0.1 * 6 / 7) < 0.01
    assert abs(unchanged - (0.1 + 0.1 / 7)) < 0.01
    assert set(np.unique(ids[sel & (ids != 10)])) <= set(words.tolist())
    assert sel.any(axis=1).all()                                 # every row scored


def test_training_batches_are_seeded_and_never_heldout():
    t = MirrorTask(num_symbols=5, max_len=4, seed=2)
    a, b = batch_iterator(t, 16, seed=3), batch_iterator(t, 16, seed=3)
    for _ in range(5):
        x, y = next(a), next(b)
        assert (x.ids == y.ids).all() and (x.targets == y.targets).all()
        halves = np.where((x.clean >= 3) & (x.clean < 8), x.clean, PAD)[:, 1:]
        w = np.stack([np.concatenate([r[:n], np.zeros(4 - n, int)])
                      for r, n in zip(halves, (x.lengths - 3) // 2)])
        assert not t._inner.is_heldout(w).any()


def test_twins_train_the_same_bert():
    torch = pytest.importorskip("torch")
    import npformer.training.train as N
    import torchformer.training.train as T
    task = MirrorTask(num_symbols=5, max_len=4)
    cfg = N.model_config_for(task, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                             num_decoder_layers=1, dtype="float64", dropout=0.0)
    npm, tfm = N.build_model(cfg, task, seed=1), T.build_model(cfg, task, seed=1)
    assert type(npm).__name__ == type(tfm).__name__ == "BertForMaskedLM"
    assert npm.config.layer_norm_eps == 1e-12 and npm.config.embedding_norm
    tfm.load_state_dict({k: torch.as_tensor(v) for k, v in npm.state_dict().items()})
    tc = N.TrainConfig(steps=5, batch_size=8, lr=3e-3, warmup=2, progress=False)
    rn, rt = N.train(npm, task, tc), T.train(tfm, task, tc)
    np.testing.assert_allclose(rn.losses, rt.losses, rtol=1e-10)
    en, et = N.evaluate(npm, task, task.heldout(16)), T.evaluate(tfm, task, task.heldout(16))
    np.testing.assert_allclose([en.loss, en.token_accuracy, en.sequence_accuracy],
                               [et.loss, et.token_accuracy, et.sequence_accuracy], rtol=1e-10)


def test_evaluation_does_not_depend_on_batch_size():
    import npformer.training.train as N
    task = MirrorTask(num_symbols=5, max_len=4)
    cfg = N.model_config_for(task, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                             dropout=0.0)
    m = N.build_model(cfg, task, seed=0)
    ex = task.heldout(50)
    a, b = N.evaluate(m, task, ex, batch_size=7), N.evaluate(m, task, ex, batch_size=256)
    assert (a.num_tokens, a.token_accuracy, a.sequence_accuracy) == \
        (b.num_tokens, b.token_accuracy, b.sequence_accuracy)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-5)


def test_training_lowers_the_masked_loss():
    import npformer.training.train as N
    task = MirrorTask(num_symbols=4, max_len=3)
    cfg = N.model_config_for(task, d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1,
                             dropout=0.0)
    m = N.build_model(cfg, task, seed=0)
    before = N.evaluate(m, task, task.heldout(40))
    N.train(m, task, N.TrainConfig(steps=60, batch_size=32, lr=3e-3, warmup=20, progress=False))
    after = N.evaluate(m, task, task.heldout(40), num_shown=2)
    assert after.loss < before.loss - 0.2, (before.loss, after.loss)
    assert len(after.examples) == 2 and all("#" in e[1] for e in after.examples)


def test_cli_round_trip(tmp_path, capsys):
    ckpt = str(tmp_path / "mlm.npz")
    code, out, err = run(["train", *TINY, "--save", ckpt, "--plot", str(tmp_path / "p")], capsys)
    assert code == 0, err
    assert "BertForMaskedLM" in out and "masked-token accuracy" in out and "single-mask" in out
    assert {"loss.png", "attn_encoder_layer0.png"} <= set(os.listdir(tmp_path / "p"))
    code, out, err = run(["plot", ckpt, "--out", str(tmp_path / "q"), "--input", "ab#b_"], capsys)
    assert code == 0 and "attn_encoder_layer0.png" in out, err
    code, out, err = run(["evaluate", ckpt, "--backend", "torch", "--eval-size", "8"], capsys)
    assert code == 0, err
    assert "task=mlm" in out and "(8 sequences)" in out
    code, out, err = run(["generate", ckpt, "ab#b_", "c_#dc"], capsys)
    assert code == 0, err
    lines = [l for l in out.splitlines() if "->" in l]
    assert len(lines) == 2 and re.match(r"ab#b_ -> ab#b[a-e#]", lines[0])
    code, _, err = run(["generate", ckpt, "ab#bz"], capsys)
    assert code == 2 and "unknown symbols" in err
    # resume: 4 steps saved + 2 more == 6 uninterrupted, bit for bit (the masks' draws included)
    from npformer.io import checkpoint as ck
    full, resumed = str(tmp_path / "full.npz"), str(tmp_path / "resumed.npz")
    six = list(TINY)
    six[six.index("--steps") + 1] = "6"
    assert main(["train", *six, "--save", full]) == 0
    code, _, err = run(["train", "--resume", ckpt, "--steps", "2", "--no-progress", "--examples",
                        "0", "--eval-size", "4", "--save", resumed], capsys)
    assert code == 0, err
    a, b = ck.load_checkpoint(full), ck.load_checkpoint(resumed)
    assert b.step == 6 and all(np.array_equal(a.state[k], b.state[k]) for k in a.state)


@pytest.mark.skipif(os.environ.get("NPFORMER_SLOW") != "1", reason="set NPFORMER_SLOW=1 (minutes)")
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_default_mlm_run_reaches_the_documented_accuracy(backend, capsys):
    code, out, err = run(["train", "--task", "mlm", "--no-progress", "--backend", backend], capsys)
    assert code == 0, err
    line = next(l for l in out.splitlines() if "single-mask accuracy" in l)
    single = float(re.search(r"single-mask accuracy ([0-9.]+)%", line).group(1))
    assert single >= 90.0, line
