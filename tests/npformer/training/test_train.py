"""Training and evaluation loops (npformer.training.train, torchformer.training.train): metrics on hand-made logits,
short runs that must reduce the loss, the schedule's peak, bad configurations."""
import math

import numpy as np
import pytest

from npformer.data.tasks import EOS, PAD, make_batches, make_task
from npformer.models.config import TransformerConfig
from npformer.training.train import (
    TrainConfig,
    build_model,
    evaluate,
    model_config_for,
    peak_factor,
    sequence_matches,
    token_accuracy,
    train,
)


# -- metrics on hand-made arrays --------------------------------------------------------------------
def test_token_accuracy_ignores_padding():
    targets = np.array([[5, 6, 2, 0],
                        [7, 2, 0, 0]])
    pred = np.array([[5, 9, 2, 5],                         # 2 of 3 right; the PAD slot is not counted
                     [7, 2, 3, 3]])                        # 2 of 2 right
    logits = np.full((2, 4, 10), -1.0)
    logits[np.arange(2)[:, None], np.arange(4)[None, :], pred] = 4.0
    assert token_accuracy(logits, targets) == (4, 5)


def test_sequence_matches_up_to_eos():
    tgt = np.array([[5, 6, EOS, PAD],
                    [7, EOS, PAD, PAD],
                    [3, 4, 5, EOS],
                    [8, EOS, PAD, PAD]])
    pred = np.array([[5, 6, EOS, 9, 9],                    # right; garbage after EOS is ignored
                     [7, 7, EOS, PAD, PAD],                # wrong: EOS missing at position 1
                     [3, 4, 5, PAD, PAD],                  # wrong: stopped without EOS
                     [8, EOS, PAD, PAD, PAD]])             # right
    np.testing.assert_array_equal(sequence_matches(pred, tgt), [True, False, False, True])
    # a prediction narrower than the target is compared as PAD-extended (and so wrong)
    np.testing.assert_array_equal(sequence_matches(pred[:, :2], tgt), [False, False, False, True])


class OracleCopier:
    """A stand-in 'model' for the copy task whose logits are hand-made: 10 on the right token (the
    target equals the source: symbols + EOS), 0 elsewhere, except that it gets the second token of
    every row with an even first symbol wrong. evaluate() must report exactly what follows."""

    class _Layers:
        layers = [object()]

    def __init__(self, vocab_size, max_len):
        self.config = TransformerConfig(d_model=8, num_heads=1, d_ff=8, vocab_size=vocab_size,
                                        max_len=max_len, pad_id=PAD)
        self.decoder = self._Layers()
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _logits(self, src, positions):                       # (B, S), (T,) -> (B, T, V)
        B = src.shape[0]
        V = self.config.vocab_size
        padded = np.concatenate([src, np.full((B, 64), EOS)], axis=1)
        right = padded[:, positions]                          # (B, T)
        wrong = (src[:, :1] % 2 == 0) & (positions[None, :] == 1)
        right = np.where(wrong, 3 + (right - 3 + 1) % (V - 3), right)    # another symbol
        out = np.zeros((B, len(positions), V))
        out[np.arange(B)[:, None], np.arange(len(positions))[None, :], right] = 10.0
        return out

    def forward(self, src, tgt):
        return self._logits(src, np.arange(tgt.shape[1]))

    __call__ = forward

    def encode(self, src, src_mask=None):
        return src.astype(np.float64)[:, :, None]             # memory carries the ids

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, caches=None, offset=0):
        src = memory[:, :, 0].astype(np.int64)
        if caches is not None:
            caches[0]["self"] = {"k": np.zeros((tgt.shape[0], 1, offset + tgt.shape[1], 1))}
        return self._logits(src, offset + np.arange(tgt.shape[1]))


def test_evaluate_reports_exactly_the_hand_made_logits():
    task = make_task("copy", num_symbols=6, min_len=2, max_len=5)
    model = OracleCopier(task.vocab_size, max_len=6)
    ex = task.heldout(64)
    res = evaluate(model, task, ex, batch_size=20, num_shown=3)
    even = ex.src[:, 0] % 2 == 0                                         # rows with one wrong token
    n_tokens = int((ex.src_len + 1).sum())                               # symbols + EOS
    assert res.num_examples == 64 and res.num_tokens == n_tokens
    assert res.token_accuracy == pytest.approx(1 - even.sum() / n_tokens)
    assert res.sequence_accuracy == pytest.approx(1 - even.mean())
    # cross-entropy of a logit vector with 10 on one class and 0 on the other V-1
    V = task.vocab_size
    right = math.log1p((V - 1) * math.exp(-10))
    wrong = right + 10.0
    expect = ((n_tokens - even.sum()) * right + even.sum() * wrong) / n_tokens
    assert res.loss == pytest.approx(expect, rel=1e-9)
    assert len(res.examples) == 3 and all(len(e) == 3 for e in res.examples)
    assert model.training                                                  # mode restored


# -- training runs ----------------------------------------------------------------------------------
def _tiny(task, **kw):
    sizes = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
                 dropout=0.0)
    sizes.update(kw)
    return model_config_for(task, **sizes)


def test_short_run_reduces_the_loss():
    task = make_task("copy", num_symbols=5, min_len=1, max_len=4)
    model = build_model(_tiny(task), task, seed=0)
    tc = TrainConfig(steps=40, batch_size=16, lr=3e-3, warmup=10, label_smoothing=0.1,
                     progress=False)
    res = train(model, task, tc)
    assert res.steps == 40 and len(res.losses) == 40
    assert np.mean(res.losses[-5:]) < 0.75 * np.mean(res.losses[:5])
    assert all(np.isfinite(res.losses)) and res.tokens > 0 and res.seconds > 0
    # the rate peaks at `lr` after `warmup` steps and decays afterwards
    assert res.lrs[tc.warmup - 1] == pytest.approx(tc.lr, rel=1e-12)
    assert max(res.lrs) == pytest.approx(tc.lr, rel=1e-12)
    assert res.lrs[0] < res.lrs[5] < res.lrs[9] and res.lrs[-1] < res.lrs[9]
    assert not model.training


def test_train_is_deterministic_and_uses_given_batches():
    task = make_task("reverse", num_symbols=4, max_len=4)
    batches = make_batches(task, 8, 6, seed=3)
    runs = []
    for _ in range(2):
        model = build_model(_tiny(task), task, seed=1)
        tc = TrainConfig(steps=6, batch_size=8, lr=1e-3, warmup=3, progress=False)
        runs.append(train(model, task, tc, batches=batches).losses)
    assert runs[0] == runs[1]
    with pytest.raises(ValueError, match="batches: ran out after 6"):
        train(build_model(_tiny(task), task), task, TrainConfig(steps=7, progress=False),
              batches=batches)


def test_clipping_bounds_the_update():
    """With clip_norm, the gradients the optimizer steps with have global norm clip_norm (the
    recorded norm is the one before clipping)."""
    task = make_task("copy", num_symbols=5, max_len=4)
    model = build_model(_tiny(task), task, seed=2)
    tc = TrainConfig(steps=1, batch_size=8, clip_norm=1e-3, progress=False)
    res = train(model, task, tc)
    total = math.sqrt(sum(float((p.grad.astype(np.float64) ** 2).sum())
                          for _, p in model.named_parameters()))
    assert res.grad_norms[0] > 1e-3                                 # it was clipped...
    assert total == pytest.approx(1e-3, rel=1e-3)                   # ...down to clip_norm


def test_classification_counts_class_zero():
    """Class 0 is a real label for the classifier (ignore_index is PAD only for token targets)."""
    task = make_task("majority", num_symbols=4, min_len=3, max_len=5)
    model = build_model(_tiny(task), task, seed=0)
    res = train(model, task, TrainConfig(steps=30, batch_size=32, lr=3e-3, warmup=5,
                                         progress=False))
    assert np.mean(res.losses[-5:]) < np.mean(res.losses[:5])
    ev = evaluate(model, task, task.heldout(50))
    assert ev.num_tokens == 50 and ev.num_examples == 50
    assert ev.token_accuracy == ev.sequence_accuracy


def test_progress_prints_plain_lines(capsys, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *a, **kw):
        if name.startswith("tqdm"):
            raise ImportError("no tqdm here")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    task = make_task("copy", num_symbols=4, max_len=3)
    train(build_model(_tiny(task), task), task,
          TrainConfig(steps=4, batch_size=4, log_every=2, progress=True))
    err = capsys.readouterr().err
    assert "train step 2/4" in err and "train step 4/4" in err and "loss=" in err and "tok_s=" in err


@pytest.mark.parametrize("kw,match", [
    (dict(steps=-1), "steps"), (dict(batch_size=0), "batch_size"), (dict(lr=0.0), "lr"),
    (dict(warmup=0), "warmup"), (dict(label_smoothing=1.0), "label_smoothing"),
    (dict(clip_norm=-1.0), "clip_norm"), (dict(eval_size=0), "eval_size"),
])
def test_train_config_validation(kw, match):
    with pytest.raises(ValueError, match=f"TrainConfig.{match}"):
        TrainConfig(**kw)


def test_peak_factor_and_model_config():
    assert peak_factor(None, 64, 100) == 1.0
    # warmup_lr(warmup) = factor * d^-0.5 * warmup^-0.5 must equal lr
    f = peak_factor(2e-3, 64, 100)
    assert f * 64 ** -0.5 * 100 ** -0.5 == pytest.approx(2e-3)
    task = make_task("reverse", num_symbols=7, max_len=6)
    c = model_config_for(task, d_model=8, num_heads=2)
    assert c.vocab_size == 10 and c.pad_id == PAD and c.max_len == 7
    with pytest.raises(ValueError, match="max_len"):
        model_config_for(task, d_model=8, num_heads=2, max_len=5)


# -- the torch twin ----------------------------------------------------------------------------------
def test_torch_twin_short_run_reduces_the_loss():
    pytest.importorskip("torch")
    import torchformer.training.train as tt
    task = make_task("copy", num_symbols=5, min_len=1, max_len=4)
    model = tt.build_model(_tiny(task), task, seed=0)
    res = tt.train(model, task, TrainConfig(steps=40, batch_size=16, lr=3e-3, warmup=10,
                                            progress=False))
    assert np.mean(res.losses[-5:]) < 0.75 * np.mean(res.losses[:5])
    assert res.lrs[9] == pytest.approx(3e-3, rel=1e-12)
    ev = tt.evaluate(model, task, task.heldout(40))
    assert 0.0 <= ev.sequence_accuracy <= 1.0 and 0.0 < ev.token_accuracy <= 1.0
    assert ev.num_examples == 40 and math.isfinite(ev.loss)
    assert ev.loss < res.losses[0]
