"""Data parallelism holds no gradient memory between steps: the replicas (k > 0) adopt the arrays
backward makes and release them once the all-reduce has summed them into the model's, and every step
still gives the full batch's gradients (float64, against the one-model step)."""
import numpy as np
import pytest

from npformer.data.tasks import make_batches, make_task
from npformer.fast.adopt_grad import AdoptingParameter
from npformer.fast.fused_adam import FusedAdam
from npformer.training.forward import model_forward
from npformer.training.parallel import DataParallel
from npformer.training.train import build_model, make_loss, model_config_for


def _model(seed=0):
    task = make_task("reverse", num_symbols=6, min_len=1, max_len=6)
    cfg = model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1,
                           num_decoder_layers=2, dropout=0.0, attention_dropout=0.0, dtype="float64")
    return task, build_model(cfg, task, seed=seed)


def _one_model_grads(model, batch, loss_fn):
    logits, targets = model_forward(model, batch)
    loss_fn(logits, targets)
    model.zero_grad()
    model.backward(loss_fn.backward())
    return {n: p.grad.copy() for n, p in model.named_parameters()}


def _close(want, got):
    # relative to the tensor's largest entry, or to 1e-3 of the model's largest gradient for a
    # tensor whose exact gradient is 0 (the key bias: softmax ignores a shift along the keys), where
    # only rounding noise is left
    floor = 1e-3 * max(np.abs(g).max() for g in want.values())
    for n in want:
        scale = max(np.abs(want[n]).max(), floor)
        assert np.abs(got[n] - want[n]).max() <= 1e-12 * scale, n


@pytest.mark.parametrize("fused_first", [False, True])       # plain or lazily zeroed parameters
def test_replicas_release_their_gradients_after_each_step_and_the_sums_stay_right(fused_first):
    task, model = _model()
    _, twin = _model()                                        # the same weights, one model
    loss_fn, twin_loss = make_loss(model, 0.1, False), make_loss(twin, 0.1, False)
    if fused_first:                                           # as training builds it: optimizer first
        FusedAdam(model.named_parameters(), lr=1e-3)
    batches = make_batches(task, 9, 3, seed=4)
    with DataParallel(model, 3, blas_threads=None) as dp:
        for params in dp._params[1:]:
            assert all(isinstance(p, AdoptingParameter) for p in params)
        for batch in batches:
            dp.step(batch, loss_fn)
            held = [p.__dict__["grad"] for params in dp._params[1:] for p in params]
            assert all(g is None for g in held)               # nothing kept between steps
            want = _one_model_grads(twin, batch, twin_loss)
            _close(want, {n: p.grad for n, p in model.named_parameters()})


def test_the_model_itself_keeps_its_gradient_arrays():
    task, model = _model()
    loss_fn = make_loss(model, 0.0, False)
    before = {n: p.grad for n, p in model.named_parameters()}
    with DataParallel(model, 2, blas_threads=None) as dp:
        dp.step(make_batches(task, 6, 1, seed=1)[0], loss_fn)
    for n, p in model.named_parameters():
        assert p.grad is before[n], n                         # summed into, in place
        assert type(p) is not AdoptingParameter, n


def test_a_parameter_no_step_touches_keeps_a_zero_gradient_step_after_step():
    from npformer.layers.module import Parameter
    task, model = _model()
    model.unused = Parameter(np.ones(3))                       # registered, never in forward
    loss_fn = make_loss(model, 0.0, False)
    with DataParallel(model, 2, blas_threads=None) as dp:
        for batch in make_batches(task, 6, 3, seed=2):
            dp.step(batch, loss_fn)
            assert np.array_equal(model.unused.grad, np.zeros(3))
