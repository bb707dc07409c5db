"""The training loop's fast optimizer path (FusedAdam, clipping fused in) trains
exactly as the plain Adam with a separate clip_grad_norm pass does, also with the elementwise variants
(npformer.fast.accelerate) on: every fast path together against the plain code."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.tasks import make_batches, make_task
from npformer.fast.fused_adam import FusedAdam
from npformer.fast.lazy_grad import LazyZeroParameter
from npformer.optim import Adam, WarmupSchedule
from npformer.training.train import TrainConfig, build_model, make_optimizer, model_config_for, peak_factor, train


def _run(fast: bool, replicas: int, tc: TrainConfig, dtype: str):
    task = make_task("reverse", num_symbols=5, max_len=5)
    config = model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1,
                              num_decoder_layers=1, dropout=0.0, dtype=dtype)
    model = build_model(config, task, seed=4)
    if fast:
        opt, sched = make_optimizer(model, tc)
        assert isinstance(opt, FusedAdam)
    else:
        opt = Adam(model.named_parameters(), lr=1.0, betas=tc.betas, eps=tc.eps,
                   weight_decay=tc.weight_decay)
        sched = WarmupSchedule(opt, 16, tc.warmup, peak_factor(tc.lr, 16, tc.warmup))
    # fast: every npformer.fast variant training picks (the elementwise ones on 2 threads too)
    res = train(model, task, tc, batches=make_batches(task, tc.batch_size, tc.steps, seed=2),
                optimizer=opt, schedule=sched, replicas=replicas, fast_threads=2 if fast else 0)
    return model, res


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("clip_norm, weight_decay, replicas", [
    (0.5, 0.0, 1), (None, 0.01, 1), (1e6, 0.0, 1), (0.5, 0.0, 2)])
def test_fast_training_equals_plain_training_bit_for_bit(dtype, clip_norm, weight_decay, replicas):
    tc = TrainConfig(steps=5, batch_size=7, lr=3e-3, warmup=2, clip_norm=clip_norm,
                     weight_decay=weight_decay, progress=False)
    plain, want = _run(False, replicas, tc, dtype)
    fast, got = _run(True, replicas, tc, dtype)
    assert got.losses == want.losses and got.grad_norms == want.grad_norms
    for (n, a), (_, b) in zip(plain.state_dict().items(), fast.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=n)
    kinds = {type(p) for _, p in fast.named_parameters()}
    # training zeroes gradients lazily (FusedAdam) but does not adopt them (opt-in: it costs memory)
    assert kinds == {LazyZeroParameter}


def test_make_optimizer_takes_the_thread_count():
    task = make_task("copy", num_symbols=4, max_len=3)
    model = build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=8,
                                         num_encoder_layers=1, num_decoder_layers=1), task)
    assert make_optimizer(model, TrainConfig(), threads=3)[0].threads == 3


class _Stop(Exception):
    pass


def test_npformer_train_threads_reach_the_optimizer(monkeypatch):
    """`npformer train --threads 1` gives the fused Adam one worker thread, whatever the default
    (here 2, from OMP_NUM_THREADS) would be."""
    import npformer.training.train as T
    from npformer.cli.main import main

    seen = {}

    def fake_train(model, task, config, **kw):
        seen["optimizer"] = kw["optimizer"]
        raise _Stop

    monkeypatch.setattr(T, "train", fake_train)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    with pytest.raises(_Stop):
        main(["train", "--steps", "1", "--threads", "1", "--no-progress", "--eval-size", "4",
              "--d-model", "8", "--heads", "2", "--d-ff", "8", "--layers", "1"])
    assert isinstance(seen["optimizer"], FusedAdam) and seen["optimizer"].threads == 1
