"""Data parallelism over threads (npformer.training.parallel): a step over K replicas equals the one-thread
full-batch step (float64, 1e-12 relative), shards weighted by their token counts; dropout masks move
between the two forms; several optimizer steps stay equal; bad arguments are named."""
import numpy as np
import pytest

from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.data.tasks import make_batches, make_task
from npformer.training.forward import model_forward
from npformer.training.parallel import (
    MIN_ELEMENTS_PER_REPLICA,
    DataParallel,
    choose_replicas,
    join_masks,
    make_step_fn,
    replicate,
    shard_batch,
    shard_bounds,
    split_masks,
)
from npformer.training.train import TrainConfig, build_model, make_loss, model_config_for, train

RTOL = 1e-12


def _setup(task_name="reverse", dropout=0.0, batch_size=7, seed=0, **kw):
    task = make_task(task_name, num_symbols=6, min_len=1, max_len=6)
    sizes = dict(d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1, num_decoder_layers=2,
                 dropout=dropout, attention_dropout=dropout, dtype="float64")
    sizes.update(kw)
    model = build_model(model_config_for(task, **sizes), task, seed=seed)
    batch = make_batches(task, batch_size, 1, seed=seed + 5)[0]
    return task, model, batch


def _plain_step(model, batch, loss_fn):
    logits, targets = model_forward(model, batch)
    loss = float(loss_fn(logits, targets))
    model.zero_grad()
    model.backward(loss_fn.backward())
    return loss, {n: p.grad.copy() for n, p in model.named_parameters()}


def _assert_close(a, b, what):
    # relative to the tensor's largest entry, or to 1e-3 of the largest gradient of the model for a
    # tensor that is zero in theory (the key projection's bias: softmax ignores a constant shift), whose
    # entries are pure rounding noise (as gradcheck judges such tensors)
    top = max(np.abs(v).max() for v in a.values())
    for name in a:
        scale = max(np.abs(a[name]).max(), 1e-3 * top)
        err = np.abs(a[name] - b[name]).max() / scale
        assert err <= RTOL, f"{what} {name}: relative error {err:.3g} > {RTOL}"


def _assert_weights_close(w1, w2):
    # the key projections' biases have a zero gradient in theory (softmax ignores a constant shift
    # along the keys): both runs move them by Adam on rounding noise only (lr * noise / eps ~ 1e-12),
    # so they are held to that noise level, every other tensor to 1e-12 relative
    noise = [k for k in w1 if k.endswith("k_proj.bias")]
    for k in noise:
        assert np.abs(w1[k]).max() < 1e-10 and np.abs(w2[k]).max() < 1e-10, k
    _assert_close({k: w1[k] for k in w1 if k not in noise}, w2, "weight")


def test_shard_bounds_cover_the_batch():
    assert shard_bounds(7, 3) == [(0, 3), (3, 5), (5, 7)]
    assert shard_bounds(2, 4) == [(0, 1), (1, 2)]                   # no empty shards
    for b, k in [(1, 1), (5, 5), (64, 3), (10, 4)]:
        bounds = shard_bounds(b, k)
        assert bounds[0][0] == 0 and bounds[-1][1] == b
        assert all(hi == lo2 for (_, hi), (lo2, _) in zip(bounds, bounds[1:]))


def test_replicas_share_parameter_arrays_and_own_gradients():
    _, model, _ = _setup()
    rep = replicate(model)
    for (n, p), (m, q) in zip(model.named_parameters(), rep.named_parameters()):
        assert n == m and p.data is q.data and p is not q and p.grad is not q.grad
    assert list(model.state_dict()) == list(rep.state_dict())


@pytest.mark.parametrize("replicas", [2, 3, 8])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_step_equals_the_full_batch(replicas, label_smoothing):
    # rows of different lengths: shards count different numbers of tokens, so equal weights would fail
    task, model, batch = _setup()
    assert len(set(batch.tgt_lengths.tolist())) > 1
    loss_fn = make_loss(model, label_smoothing, False)
    loss1, grads1 = _plain_step(model, batch, loss_fn)
    with DataParallel(model, replicas, blas_threads=None) as dp:
        loss_k = dp.step(batch, loss_fn)
        assert len(dp.last_bounds) == min(replicas, 7)
    grads_k = {n: p.grad.copy() for n, p in model.named_parameters()}
    assert abs(loss_k - loss1) <= RTOL * abs(loss1)
    _assert_close(grads1, grads_k, "grad")


def test_equal_weights_would_differ():
    """The check above can fail: weighting shards equally (mean of shard means) changes the loss."""
    task, model, batch = _setup()
    loss_fn = make_loss(model, 0.0, False)
    loss1, _ = _plain_step(model, batch, loss_fn)
    shard_losses = [float(loss_fn(*model_forward(model, shard_batch(batch, lo, hi))))
                    for lo, hi in shard_bounds(7, 3)]
    assert abs(np.mean(shard_losses) - loss1) > 1e-6 * abs(loss1)


def test_tied_and_shared_embeddings_sum_both_uses():
    task, model, batch = _setup(share_embeddings=True, tie_embeddings=True, norm_first=True,
                                final_norm=True, activation="gelu")
    assert model.output_proj.weight is model.tgt_embed.weight
    loss_fn = make_loss(model, 0.1, False)
    loss1, grads1 = _plain_step(model, batch, loss_fn)
    with DataParallel(model, 3, blas_threads=None) as dp:
        rep = dp.replicas[1]
        assert rep.output_proj.weight is rep.tgt_embed.weight            # tied inside the replica
        loss_k = dp.step(batch, loss_fn)
    assert abs(loss_k - loss1) <= RTOL * abs(loss1)
    _assert_close(grads1, {n: p.grad for n, p in model.named_parameters()}, "grad")


def test_classifier_step_equals_the_full_batch():
    task, model, batch = _setup("majority", batch_size=9)
    loss_fn = make_loss(model, 0.1, True)
    loss1, grads1 = _plain_step(model, batch, loss_fn)
    with DataParallel(model, 4, blas_threads=None) as dp:
        loss_k = dp.step(batch, loss_fn)
    assert abs(loss_k - loss1) <= RTOL * abs(loss1)
    _assert_close(grads1, {n: p.grad for n, p in model.named_parameters()}, "grad")


def test_dropout_masks_replay_both_ways():
    task, model, batch = _setup(dropout=0.3)
    loss_fn = make_loss(model, 0.0, False)
    model.train()
    # one-thread step records full-batch masks; the data-parallel step replays them per shard
    loss1, grads1 = _plain_step(model, batch, loss_fn)
    full = collect_dropout_masks(model)
    assert full and all(m.shape[0] == 7 for m in full.values())
    with DataParallel(model, 3, blas_threads=None) as dp:
        dp.replay_dropout_masks(split_masks(full, shard_bounds(7, 3)))
        loss_k = dp.step(batch, loss_fn)
        assert abs(loss_k - loss1) <= RTOL * abs(loss1)
        _assert_close(grads1, {n: p.grad.copy() for n, p in model.named_parameters()}, "grad")
        # the other way: masks the replicas drew (their own generators) replayed in one thread
        loss_k2 = dp.step(batch, loss_fn)
        grads_k2 = {n: p.grad.copy() for n, p in model.named_parameters()}
        joined = join_masks(dp.collect_dropout_masks())
    assert abs(loss_k2 - loss1) > 1e-9                                  # new masks were drawn
    replay_dropout_masks(model, joined)
    loss2, grads2 = _plain_step(model, batch, loss_fn)
    assert abs(loss2 - loss_k2) <= RTOL * abs(loss2)
    _assert_close(grads2, grads_k2, "grad")


def test_replica_generators_are_independent_and_reproducible():
    def masks(seed):
        task, model, batch = _setup(dropout=0.5, batch_size=4, seed=seed)
        model.train()
        with DataParallel(model, 2, blas_threads=None) as dp:
            dp.step(batch, make_loss(model, 0.0, False))
            return dp.collect_dropout_masks()
    a, b = masks(0), masks(0)
    name = sorted(a[0])[0]
    assert all(np.array_equal(a[k][n], b[k][n]) for k in range(2) for n in a[k])
    assert not np.array_equal(a[0][name], a[1][name])                  # not the same stream


def test_training_run_equals_one_thread():
    task = make_task("copy", num_symbols=5, min_len=1, max_len=5)
    cfg = model_config_for(task, d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1,
                           num_decoder_layers=1, dropout=0.0, dtype="float64")
    batches = make_batches(task, 10, 4, seed=2)
    tc = TrainConfig(steps=4, batch_size=10, lr=3e-3, warmup=2, label_smoothing=0.1,
                     progress=False)
    runs = []
    for replicas in (1, 3):
        model = build_model(cfg, task, seed=4)
        res = train(model, task, tc, batches=batches, replicas=replicas)
        runs.append((res, model.state_dict()))
    (r1, w1), (r3, w3) = runs
    np.testing.assert_allclose(r3.losses, r1.losses, rtol=RTOL)
    np.testing.assert_allclose(r3.grad_norms, r1.grad_norms, rtol=RTOL)
    _assert_weights_close(w1, w3)


def test_make_step_fn_plain_and_parallel():
    task, model, batch = _setup()
    loss_fn = make_loss(model, 0.0, False)
    plain = make_step_fn(model, loss_fn, 1)
    assert plain.parallel is None
    loss1 = plain(batch)
    g1 = {n: p.grad.copy() for n, p in model.named_parameters()}
    par = make_step_fn(model, loss_fn, 2)
    try:
        assert abs(par(batch) - loss1) <= RTOL * abs(loss1)
    finally:
        par.parallel.close()
    _assert_close(g1, {n: p.grad for n, p in model.named_parameters()}, "grad")


def test_float32_close():
    task, model, batch = _setup(dtype="float32")
    loss_fn = make_loss(model, 0.0, False)
    loss1, grads1 = _plain_step(model, batch, loss_fn)
    with DataParallel(model, 2, blas_threads=None) as dp:
        loss_k = dp.step(batch, loss_fn)
    assert abs(loss_k - loss1) <= 1e-5 * abs(loss1)
    for n, p in model.named_parameters():
        assert p.grad.dtype == np.float32
        np.testing.assert_allclose(p.grad, grads1[n], rtol=1e-4, atol=1e-6, err_msg=n)


# -- bad input --------------------------------------------------------------------------------------
def test_bad_arguments_are_named():
    task, model, batch = _setup()
    with pytest.raises(ValueError, match="replicas"):
        DataParallel(model, 0)
    with pytest.raises(TypeError, match="model"):
        DataParallel(object(), 2)
    with DataParallel(model, 2, blas_threads=None) as dp:
        with pytest.raises(TypeError, match="batch"):
            dp.step((batch.src, batch.tgt_in), make_loss(model, 0.0, False))
        with pytest.raises(ValueError, match="rows"):
            dp.step(batch._replace(tgt_out=batch.tgt_out[:3]), make_loss(model, 0.0, False))
        with pytest.raises(TypeError, match="loss_fn"):
            dp.step(batch, None)
        with pytest.raises(ValueError, match="per_shard"):
            dp.replay_dropout_masks([{}] * 3)
        p = model.parameters()[0]
        p.data = p.data.copy()                                         # re-bound, not in place
        with pytest.raises(RuntimeError, match="no longer shares"):
            dp.step(batch, make_loss(model, 0.0, False))
    with pytest.raises(RuntimeError, match="closed"):
        dp.step(batch, make_loss(model, 0.0, False))


def test_choose_replicas():
    size = dict(tokens_per_row=64, d_model=512)                        # the paper's base size
    assert choose_replicas(1, 64, **size) == 1
    assert choose_replicas(4, 64, **size) == 4 and choose_replicas(4, 64, "off", **size) == 1
    # auto splits only when each replica's activations reach MIN_ELEMENTS_PER_REPLICA
    rows = MIN_ELEMENTS_PER_REPLICA // (64 * 512)                       # rows per replica at the edge
    assert choose_replicas(2, 2 * rows, **size) == 2
    assert choose_replicas(2, 2 * rows - 1, **size) == 1
    assert choose_replicas(2, 64, tokens_per_row=12, d_model=64) == 1   # the main job: too thin
    assert choose_replicas(2, 64, tokens_per_row=12, d_model=64, mode="on") == 2
    assert choose_replicas(8, 3, "on", **size) == 3                     # at most one per row
    with pytest.raises(ValueError, match="mode"):
        choose_replicas(2, 8, "yes", **size)
    with pytest.raises(ValueError, match="threads"):
        choose_replicas(0, 8, **size)
    with pytest.raises(ValueError, match="d_model"):
        choose_replicas(2, 8, tokens_per_row=4, d_model=0)


def test_cli_threads_trains_data_parallel(capsys):
    from npformer.cli.main import main
    from npformer.cli.option_rules import available_cpus
    from npformer.training.blas import set_blas_threads
    from tests.npformer.conftest import tiny_train_args
    if available_cpus() < 2:
        pytest.skip("--threads 2 needs 2 CPUs (the CLI refuses more threads than CPUs)")
    argv = ["train", "--threads", "2", *tiny_train_args(steps=2, batch_size=8, max_len=None,
                                                        num_symbols=None)]
    try:
        assert main(argv + ["--data-parallel", "on"]) == 0
        assert "data parallelism: 2 replicas" in capsys.readouterr().out
        assert main(argv + ["--data-parallel", "off"]) == 0           # says where the threads go
        assert "data parallelism off (--data-parallel off)" in capsys.readouterr().out
        assert main(argv) == 0                                         # auto: d_model 8 is too thin
        assert "data parallelism off (each replica's" in capsys.readouterr().out
    finally:
        set_blas_threads(1)


def test_inference_forward_equals_the_full_batch():
    task, model, batch = _setup()
    model.eval()
    ref = model(batch.src, batch.tgt_in)
    with DataParallel(model, 3, blas_threads=None) as dp:
        out = dp.forward(batch.src, batch.tgt_in)
        np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13)
        with pytest.raises(ValueError, match="rows"):
            dp.forward(batch.src, batch.tgt_in[:2])
        with pytest.raises(TypeError, match=r"inputs\[1\]"):
            dp.forward(batch.src, [1, 2])


def test_an_error_in_one_replica_is_raised_after_every_replica_stopped():
    task, model, batch = _setup()
    calls = []

    def forward(m, shard):
        calls.append(shard.src.shape[0])
        if len(calls) == 2:
            raise ValueError("shard failed")
        return model_forward(m, shard)

    with DataParallel(model, 3, forward=forward, blas_threads=None) as dp:
        with pytest.raises(ValueError, match="shard failed"):
            dp.step(batch, make_loss(model, 0.0, False))
        assert len(calls) == 3                                          # all three ran to the end


def test_causal_lm_task_trains_the_same():
    from npformer.data.lm_data import ArithmeticTask
    task = ArithmeticTask(max_number=20)
    cfg = model_config_for(task, d_model=16, num_heads=2, d_ff=32, num_decoder_layers=2,
                           num_encoder_layers=1, dropout=0.0, dtype="float64")
    tc = TrainConfig(steps=3, batch_size=9, lr=3e-3, warmup=2, progress=False)
    weights = []
    for replicas in (1, 4):
        model = build_model(cfg, task, seed=0)
        assert type(model).__name__ == "CausalLM"
        train(model, task, tc, replicas=replicas)
        weights.append(model.state_dict())
    _assert_weights_close(weights[0], weights[1])
