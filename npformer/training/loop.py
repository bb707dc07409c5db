"""The one training loop: npformer, torchformer and the distributed run differ only in their step.

    result = run_steps(step, model, config, stream, start_step=0, evaluate=None, ...)

A step object supplies what one backend does with one batch:

    step.lr() -> float               the learning rate this step uses (read before the update)
    step.gradients(batch) -> float   forward, loss, backward: the whole batch's loss; gradients filled
    step.clip() -> float             the global gradient norm before clipping (clips to config.clip_norm
                                     when that is set, else only measures)
    step.update() -> None            the optimizer's step, then the schedule's
    step.close() -> None             free what the step holds (worker threads), called once at the end

The loop owns everything else: the batch stream and its end, the checks that stop a run before the
weights are updated when its loss or gradient norm is not finite, its loss has diverged (above
DIVERGED_LOSS nats per token: float32 overflow inside LayerNorm can keep a runaway loss finite) or a
stage of its forward pass meets non-finite values (overflowed weights, reported as divergence), the
per-step record (TrainResult), the callback, the progress display, and the held-out evaluation
every `config.eval_every` steps (the time it takes is not counted in the throughput).
"""
from __future__ import annotations

import math
import time
from typing import Callable, Iterator

import numpy as np

from npformer.training.metrics import TrainResult
from npformer.training.progress import Progress

__all__ = ["run_steps", "evaluate_after_step", "DIVERGED_LOSS"]

# A per-token cross-entropy above this puts the target's probability below e^-1000: no run that is
# learning gets there (a fresh model gives about ln(vocab_size), 10.8 for GPT-2's 50257 tokens), while
# a learning rate many orders too high does within a step or two.
DIVERGED_LOSS = 1e3
# What a model's checked stage entry says of a non-finite input (npformer.guards.validation): the
# inputs of a training step are token ids, so inside its forward this means the weights overflowed.
NONFINITE = "expected finite values"
NONFINITE_GRADIENT = "expected a finite upstream gradient"    # a model's backward (npformer.guards)


def run_steps(step, model, config, stream: Iterator, *, start_step: int = 0,
              evaluate: Callable[[], object] | None = None, callback=None, file=None,
              show_progress: bool = True) -> TrainResult:
    """Run config.steps steps (numbered start_step+1 ..), leave `model` in eval mode, return the record.

    evaluate  called every config.eval_every steps (not after the last): returns an EvalResult
    callback  callback(step, loss) after every step
    """
    result = TrainResult(start_step, [], [], [], [], 0, 0.0)   # steps: the last one taken, so far
    end = start_step + config.steps
    bar = Progress(config.steps, config.progress and show_progress, config.log_every, file=file,
                   start=start_step)
    model.train()
    t0 = time.perf_counter()
    try:
        for n in range(start_step + 1, end + 1):
            try:
                batch = next(stream)
            except StopIteration:
                raise ValueError(f"batches: ran out after {n - 1 - start_step} batches, "
                                 f"config.steps={config.steps}") from None
            if not hasattr(batch, "num_tokens"):
                raise TypeError(f"batches: expected training batches (collate(task.sample(rng, n)) "
                                f"makes one), got {type(batch).__name__} for step {n}")
            lr = float(step.lr())
            with np.errstate(over="ignore", invalid="ignore"):    # judged by the loss checks below
                try:
                    loss = float(step.gradients(batch))                    # fills every .grad
                except ValueError as e:
                    if NONFINITE_GRADIENT in str(e):             # the model's backward refused it
                        raise FloatingPointError(
                            f"step {n}: the gradient norm is not finite (the loss's gradient: "
                            f"{e}); stopped before updating the weights") from None
                    if NONFINITE not in str(e):
                        raise
                    raise FloatingPointError(
                        f"training diverged at step {n}: a stage of the forward pass met "
                        f"non-finite values ({e}); the weights overflowed, so lower the learning "
                        f"rate (lr={config.lr}) or raise warmup; stopped before updating the "
                        f"weights") from None
            if not math.isfinite(loss):
                raise FloatingPointError(f"training loss became {loss} at step {n}; lower the "
                                         f"learning rate (lr={config.lr}) or raise warmup")
            if loss > DIVERGED_LOSS:
                raise FloatingPointError(f"training diverged at step {n}: loss {loss:.4g} per token "
                                         f"(above {DIVERGED_LOSS:g}; a fresh model gives about "
                                         f"ln(vocab_size)); lower the learning rate (lr={config.lr}) "
                                         f"or raise warmup; stopped before updating the weights")
            with np.errstate(over="ignore", invalid="ignore"):    # an inf norm is refused below
                norm = float(step.clip())
            if not math.isfinite(norm):
                raise FloatingPointError(f"step {n}: the gradient norm is {norm} (a gradient is "
                                         f"not finite); stopped before updating the weights")
            step.update()
            result.steps = n
            result.losses.append(loss)
            result.lrs.append(lr)
            result.grad_norms.append(norm)
            result.tokens += batch.num_tokens
            if callback is not None:
                callback(n, loss)
            elapsed = time.perf_counter() - t0
            bar.update(n, loss=loss, lr=lr, tok_s=round(result.tokens / max(elapsed, 1e-9)))
            if evaluate is not None and config.eval_every and n % config.eval_every == 0 and n < end:
                t_eval = time.perf_counter()
                ev = evaluate_after_step(evaluate, n, config.lr)
                result.eval_history.append((n, ev))
                bar.write(f"step {n}: held-out {ev.summary()}")
                model.train()
                t0 += time.perf_counter() - t_eval                  # evaluation not timed
    finally:
        bar.close()
        step.close()
    result.seconds = time.perf_counter() - t0
    model.eval()
    return result


def evaluate_after_step(evaluate: Callable[[], object], n: int, lr: float):
    """evaluate() on the weights step n left. Weights an update made huge (a learning rate far too
    large) overflow in the evaluation's forward pass: that is a FloatingPointError naming the step
    and the learning rate, as the training steps' own checks say it, not a guard's message about
    some stage's output (nor NumPy's overflow warnings first)."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            return evaluate()
        except ValueError as e:
            if NONFINITE not in str(e):
                raise
            raise FloatingPointError(
                f"training diverged at step {n}: the held-out evaluation after it met non-finite "
                f"values ({e}); the weights overflowed, so lower the learning rate (lr={lr}) or "
                f"raise warmup") from None
