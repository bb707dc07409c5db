"""The training loop and `npformer train` pick npformer.fast's elementwise methods: train() with
fast_threads trains to the plain run's losses and weights bit for bit (one model and data-parallel
replicas), uses the fast methods while it runs and hands the model back plain; the CLI says so and
`--no-fast-elementwise` turns them off."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.tasks import make_task
from npformer.fast.accelerate import accelerated_threads
from npformer.fast.last_logits import last_position_logits_enabled
from npformer.training.train import TrainConfig, build_model, model_config_for, train


def _run(fast_threads: int, replicas: int = 1):
    task = make_task("reverse", num_symbols=6, min_len=1, max_len=6)
    sizes = dict(d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1, num_decoder_layers=2,
                 dropout=0.1, attention_dropout=0.1, activation="gelu", dtype="float32")
    model = build_model(model_config_for(task, **sizes), task, seed=0)
    seen = []
    config = TrainConfig(steps=3, batch_size=7, lr=1e-2, warmup=2, label_smoothing=0.1,
                         progress=False)
    result = train(model, task, config, replicas=replicas, fast_threads=fast_threads,
                   callback=lambda step, loss: seen.append((accelerated_threads(model),
                                                            last_position_logits_enabled(model))))
    return result, model, seen


@pytest.mark.parametrize("replicas, per_model", [(1, 2), (2, 1)])
def test_train_with_fast_threads_equals_the_plain_run_and_hands_the_model_back_plain(
        split_everything, replicas, per_model):
    plain, plain_model, seen_plain = _run(0, replicas)
    fast, fast_model, seen_fast = _run(2, replicas)
    assert seen_plain == [(None, False)] * 3
    assert seen_fast == [(per_model, True)] * 3                    # the fast methods ran
    assert max(split_everything, default=1) == per_model           # threaded (one model) or not
    assert fast.losses == plain.losses
    assert fast.grad_norms == plain.grad_norms
    for (name, p0), (_, p1) in zip(plain_model.named_parameters(), fast_model.named_parameters()):
        np.testing.assert_array_equal(p1.data, p0.data, err_msg=name)
    assert accelerated_threads(fast_model) is None                 # handed back plain
    assert not last_position_logits_enabled(fast_model)


@pytest.mark.parametrize("bad", [-1, 1.0, True])
def test_train_refuses_a_bad_fast_threads(bad):
    task = make_task("reverse", num_symbols=6, min_len=1, max_len=6)
    model = build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=8,
                                         num_encoder_layers=1, num_decoder_layers=1), task)
    with pytest.raises(ValueError, match="fast_threads: expected an int >= 0"):
        train(model, task, TrainConfig(steps=1, batch_size=2, progress=False), fast_threads=bad)


def test_npformer_train_uses_the_fast_methods_unless_told_not_to(capsys):
    from npformer.cli.main import main
    from npformer.cli.option_rules import available_cpus
    from npformer.training.blas import set_blas_threads
    from tests.npformer.conftest import tiny_train_args
    if available_cpus() < 2:
        pytest.skip("--threads 2 needs 2 CPUs (the CLI refuses more threads than CPUs)")
    argv = ["train", "--threads", "2", *tiny_train_args(steps=2)]
    try:
        assert main(argv) == 0
        assert "elementwise passes: npformer.fast on 2 thread(s)" in capsys.readouterr().out
        assert main(argv + ["--no-fast-elementwise"]) == 0
        assert "elementwise passes" not in capsys.readouterr().out
    finally:
        set_blas_threads(1)


def test_no_fast_elementwise_with_the_torch_backend_is_refused(capsys):
    from npformer.cli.main import main
    from tests.npformer.conftest import tiny_train_args
    assert main(["train", *tiny_train_args(), "--backend", "torch", "--no-fast-elementwise"]) != 0
    assert "--no-fast-elementwise: the numpy backend's fast elementwise passes" in \
        capsys.readouterr().err
