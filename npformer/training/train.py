"""Training and evaluation loops for npformer models (the torch twin is torchformer/train.py).

One training step of an encoder-decoder (teacher forcing: the decoder reads the target shifted right
by one, BOS first, and predicts every next token at once):

    logits = model(src, tgt_in)                              (B, T, V)
    loss   = CrossEntropy(logits, tgt_out)                   mean over non-PAD targets (ignore_index)
    model.zero_grad(); model.backward(loss_fn.backward())    hand-written backward, fills .grad
    clip_grad_norm(params, clip_norm)                        global L2 norm
    Adam(betas=(0.9, 0.98), eps=1e-9).step(); schedule.step()

The learning rate follows the paper's warm-up schedule (npformer.optim.WarmupSchedule),
    lr(s) = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5),
with `factor` chosen so that the peak, reached at s = warmup, equals `TrainConfig.lr` (lr=None keeps
the paper's factor 1). An EncoderClassifier trains the same way on (src, labels).

evaluate() reports, on a fixed set of examples:
    loss              teacher-forced cross-entropy (no label smoothing), mean over target tokens
    token_accuracy    teacher-forced argmax == target, over non-PAD targets
    sequence_accuracy greedy decoding (npformer.decoding.generate) reproduces the whole target, EOS included
For a classifier the two accuracies are the class accuracy.
"""
from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Iterator

import numpy as np

from npformer.data.tasks import PAD, ClassificationBatch, Examples, Task, batch_iterator, iterate_examples
from npformer.guards.optim import is_real
from npformer.guards.rules import SEED_MAX, check_training_fits_memory
from npformer.models.config import TransformerConfig
from npformer.training.arguments import check_evaluate_arguments, check_train_arguments
from npformer.training.forward import model_forward
from npformer.training.loop import run_steps
from npformer.training.metrics import EvalResult, EvalTally, TrainResult, sequence_matches, token_accuracy

__all__ = ["TrainConfig", "TrainResult", "EvalResult", "model_config_for", "build_model",
           "peak_factor", "check_sizes_fit", "train", "evaluate", "token_accuracy", "sequence_matches"]


# ---------------------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """Optimisation settings shared by both twins' training loops.

    steps            optimizer steps
    batch_size       examples per step
    lr               peak learning rate, reached at step `warmup` (None: the paper's factor 1)
    warmup           warm-up steps of the schedule
    betas, eps       Adam's (the paper: (0.9, 0.98), 1e-9)
    weight_decay     Adam's L2 term, on every parameter (biases, norms and embeddings too, as
                     torch.optim.Adam's weight_decay; 0: none)
    label_smoothing  epsilon_ls of the training loss (the paper: 0.1; evaluation never smooths)
    clip_norm        clip the global gradient L2 norm to this (None: no clipping)
    seed             seeds the training batches (the model's own seed is separate)
    eval_every       evaluate held-out loss/accuracy every N steps (0: only at the end, by the caller)
    eval_size        examples in the evaluation set
    log_every        progress refresh / print interval in steps
    progress         show a progress bar (tqdm if installed, else plain lines)
    """

    steps: int = 1000
    batch_size: int = 64
    lr: float | None = 1e-3
    warmup: int = 100
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    weight_decay: float = 0.0
    label_smoothing: float = 0.0
    clip_norm: float | None = 1.0
    seed: int = 0
    eval_every: int = 0
    eval_size: int = 500
    log_every: int = 25
    progress: bool = True

    def __post_init__(self) -> None:
        def need(cond, name, expected):
            if not cond:
                raise ValueError(f"TrainConfig.{name}: expected {expected}, got "
                                 f"{getattr(self, name)!r}")

        def is_int(v):
            return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

        need(is_int(self.steps) and self.steps >= 0, "steps", "an int >= 0")
        need(is_int(self.batch_size) and self.batch_size >= 1, "batch_size", "an int >= 1")
        need(self.lr is None or (is_real(self.lr) and self.lr > 0), "lr", "None or a positive float")
        need(is_int(self.warmup) and self.warmup >= 1, "warmup", "an int >= 1")
        need(is_real(self.label_smoothing) and 0 <= self.label_smoothing < 1,
             "label_smoothing", "a float in [0, 1)")
        need(self.clip_norm is None or (is_real(self.clip_norm) and self.clip_norm > 0), "clip_norm",
             "None or a positive float")
        b = self.betas      # Adam's rules (npformer.guards.optim), named as fields of this config
        need(isinstance(b, (tuple, list)) and len(b) == 2 and all(is_real(x) and 0 <= x < 1 for x in b),
             "betas", "a pair of floats in [0, 1)")
        need(is_real(self.eps) and self.eps >= 0, "eps", "a float >= 0")
        need(is_real(self.weight_decay) and self.weight_decay >= 0, "weight_decay", "a float >= 0")
        need(isinstance(self.progress, bool), "progress", "a bool")
        need(is_int(self.seed) and 0 <= self.seed <= SEED_MAX, "seed", "an int from 0 to 2**63 - 1 "
             "(a 64-bit generator seed, as every seed of both twins)")
        need(is_int(self.eval_every) and self.eval_every >= 0, "eval_every", "an int >= 0")
        need(is_int(self.eval_size) and self.eval_size >= 1, "eval_size", "an int >= 1")
        need(is_int(self.log_every) and self.log_every >= 1, "log_every", "an int >= 1")
        self.betas = tuple(float(b) for b in self.betas)
        for name in ("steps", "batch_size", "warmup", "seed", "eval_every", "eval_size", "log_every"):
            setattr(self, name, int(getattr(self, name)))       # Python numbers, NumPy's converted
        for name in ("lr", "eps", "weight_decay", "label_smoothing", "clip_norm"):
            if getattr(self, name) is not None:
                setattr(self, name, float(getattr(self, name)))

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes) -> "TrainConfig":
        """A copy with `changes` applied (checked again)."""
        return TrainConfig(**{**asdict(self), **changes})


def peak_factor(lr: float | None, d_model: int, warmup: int) -> float:
    """The WarmupSchedule factor whose peak rate (at step `warmup`) is `lr` (None: 1.0)."""
    if lr is None:
        return 1.0
    # warmup_lr(warmup) = factor * d_model^-0.5 * warmup^-0.5
    factor = float(lr) * math.sqrt(d_model) * math.sqrt(warmup)
    if not math.isfinite(factor):
        raise ValueError(f"lr: expected a peak learning rate below "
                         f"{sys.float_info.max / math.sqrt(d_model * warmup):.3g} "
                         f"(with d_model {d_model} and warmup {warmup} the schedule's factor "
                         f"overflows), got {lr}")
    return factor


def model_config_for(task: Task, **sizes) -> TransformerConfig:
    """A TransformerConfig sized for `task` (vocabulary, pad_id, max_len, classes) plus `sizes`."""
    need = max(task.max_src_tokens, task.max_tgt_tokens)
    sizes.setdefault("max_len", need)
    if hasattr(task, "config_fields"):                                  # e.g. two vocabularies
        sizes = {**task.config_fields(), **sizes}
    if sizes["max_len"] < need:
        raise ValueError(f"max_len: expected >= {need} (the task's longest row), got "
                         f"{sizes['max_len']}")
    return TransformerConfig(vocab_size=task.vocab_size, pad_id=PAD, num_classes=task.num_classes,
                             **sizes)


def build_model(config: TransformerConfig, task: Task, seed: int = 0):
    """npformer Transformer for seq2seq tasks, EncoderClassifier for classification, CausalLM for
    language-model tasks (npformer.data.lm_data)."""
    if getattr(task, "is_mlm", False):                                  # BERT layout, CLI sizes
        from npformer.models.bert import BertForMaskedLM
        from npformer.models.config import bert_config
        sizes = {k: getattr(config, k) for k in ("vocab_size", "pad_id", "max_len", "d_model",
                                                "num_heads", "d_ff", "num_encoder_layers",
                                                "dropout", "dtype")}
        return BertForMaskedLM(bert_config(**sizes), seed=seed)
    if getattr(task, "is_lm", False):
        from npformer.models.causal_lm import CausalLM
        return CausalLM(config, seed=seed)
    if task.is_classification:
        from npformer.models.classifier import EncoderClassifier
        return EncoderClassifier(config, seed=seed)
    from npformer.models.transformer import Transformer
    return Transformer(config, seed=seed)


# ---------------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
# the loop
# ---------------------------------------------------------------------------------------------------
def check_sizes_fit(model, task: Task, config: TrainConfig, batches, eval_examples,
                    device_memory: int | None = None, processes: int = 1) -> None:
    """config.batch_size (drawn batches) and config.eval_size (a held-out set to draw) whose arrays
    cannot fit, refused before anything is drawn (npformer.guards.rules.check_training_fits_memory).
    `batches` given: its own `batch_size` (a BatchStream's) is checked, a list of batches is not.
    `processes`: the DistributedDataParallel processes the batch is split over."""
    T = max(int(task.max_src_tokens), int(task.max_tgt_tokens))
    batch_size = config.batch_size if batches is None else getattr(batches, "batch_size", None)
    check_training_fits_memory(model.config, T, bool(task.is_classification), batch_size,
                               config.eval_size if config.eval_every and eval_examples is None
                               else None, device_memory, processes)


def make_loss(model, label_smoothing: float, classification: bool):
    """Cross-entropy ignoring PAD targets (seq2seq) or ignoring nothing (class labels)."""
    from npformer.layers.loss import CrossEntropyLoss
    pad = model.config.pad_id
    ignore = -100 if classification or pad is None else pad
    return CrossEntropyLoss(ignore_index=ignore, label_smoothing=label_smoothing)


def grad_norm(params) -> float:
    """Global L2 norm of every gradient (what clipping would see), without clipping."""
    return float(math.sqrt(sum(float(np.vdot(p.grad, p.grad)) for _, p in params)))


def make_optimizer(model, config: TrainConfig, threads: int | None = None):
    """Adam(betas, eps, weight_decay) with the warm-up schedule; returns (optimizer, schedule).

    The Adam is npformer.fast.fused_adam.FusedAdam: the plain Adam's results (clipping fused into its
    one pass over memory), on `threads` worker threads (None: the BLAS limit; `npformer train` sets
    its --threads)."""
    from npformer.fast.fused_adam import FusedAdam
    from npformer.optim import WarmupSchedule
    opt = FusedAdam(model.named_parameters(), lr=1.0, betas=config.betas, eps=config.eps,
                    weight_decay=config.weight_decay, threads=threads)
    d = model.config.d_model
    sched = WarmupSchedule(opt, d, config.warmup, peak_factor(config.lr, d, config.warmup))
    return opt, sched


def train(model, task: Task, config: TrainConfig, *, batches: Iterable | None = None,
          optimizer=None, schedule=None, eval_examples: Examples | None = None,
          callback: Callable[[int, float], None] | None = None, file=None,
          start_step: int = 0, replicas: int = 1, fast_threads: int = 0) -> TrainResult:
    """Train `model` in place for `config.steps` steps; returns the per-step record.

    batches   an iterable of batches to use instead of `batch_iterator(task, batch_size, seed)`
              (the training-parity test feeds both twins the same list)
    optimizer, schedule  continue from existing ones (a loaded checkpoint); default fresh Adam +
              WarmupSchedule from `config`
    eval_examples  the set `eval_every` evaluates on (default task.heldout(config.eval_size))
    callback  called as callback(step, loss) after every step
    start_step  steps already taken (a resumed run): steps are numbered start_step+1 ..
              start_step+config.steps, and `result.steps` is the last one
    replicas  > 1: data parallelism over that many threads (npformer.training.parallel; same results to
              rounding, dropout masks drawn per shard)
    fast_threads  > 0: the model's and the loss's elementwise passes run npformer.fast.accelerate's
              methods (the same bits, faster), split over this many threads (1 per replica with
              data parallelism, whose replicas already keep the threads busy), and evaluation's
              decoding projects the last fed position only (npformer.fast.last_logits); 0: the
              plain methods. The model is handed back with its plain methods.
    Stops with FloatingPointError naming the step when the loss or the gradient norm is not finite
    (nothing is updated by that step).

    A model does not record the tokenizer it was trained with (the checkpoint's metadata does, with
    the task), so a `task` whose tokenizer gives other ids that fit the model's vocabulary cannot be
    told apart here and trains on them: keep the pair `load_training_state` returns (or the task from the
    same checkpoint), or compare `task.tokenizer.to_dict()` with the saved one yourself.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config: expected a TrainConfig, got {type(config).__name__}")
    if isinstance(fast_threads, bool) or not isinstance(fast_threads, (int, np.integer)) \
            or fast_threads < 0:
        raise ValueError(f"fast_threads: expected an int >= 0, got {fast_threads!r}")
    fast_threads = int(fast_threads)
    from npformer.layers.module import Module
    from npformer.optim import Optimizer
    check_train_arguments(model, task, twin="npformer", module_type=Module, optimizer_type=Optimizer,
                          optimizer=optimizer, callback=callback, start_step=start_step,
                          batches=batches, eval_examples=eval_examples)
    check_sizes_fit(model, task, config, batches, eval_examples)
    if optimizer is None:
        optimizer, schedule = make_optimizer(model, config)
    loss_fn = make_loss(model, config.label_smoothing, task.is_classification)
    if hasattr(optimizer, "adopt_gradients") and replicas > 1:
        optimizer.adopt_gradients(False)    # a reduce hands over its replicas' own arrays: never adopt them
    from npformer.fast import last_logits
    switch_last = bool(fast_threads) and last_logits.has_output_proj(model) \
        and not last_logits.last_position_logits_enabled(model)
    if fast_threads:
        from npformer.fast.accelerate import accelerate, restore_plain
        accelerate(model, 1 if replicas > 1 else fast_threads)   # before the replicas are copied
        accelerate(loss_fn, 1 if replicas > 1 else fast_threads)
    if switch_last:                         # evaluation's decoding: the last position's logits only
        last_logits.use_last_position_logits(model)
    try:
        return _train_steps(model, task, config, loss_fn, batches, optimizer, schedule,
                            eval_examples, callback, file, start_step, replicas)
    finally:
        if fast_threads:
            restore_plain(model)
        if switch_last:
            last_logits.use_last_position_logits(model, on=False)


def _train_steps(model, task, config, loss_fn, batches, optimizer, schedule, eval_examples,
                 callback, file, start_step, replicas) -> TrainResult:
    from npformer.training.parallel import make_step_fn
    step_fn = make_step_fn(model, loss_fn, replicas)       # forward + loss + backward (plain or DP)
    stream: Iterator = iter(batches) if batches is not None else \
        batch_iterator(task, config.batch_size, config.seed)
    if config.eval_every and eval_examples is None:
        eval_examples = task.heldout(config.eval_size)
    step = NumpyStep(model, optimizer, schedule, step_fn, config.clip_norm)

    def evaluate_now():
        return evaluate(model, task, eval_examples, batch_size=max(config.batch_size, 128))
    return run_steps(step, model, config, stream, start_step=start_step, evaluate=evaluate_now,
                     callback=callback, file=file)


class NumpyStep:
    """One training step of an npformer model (see npformer.training.loop): `step_fn` (plain or
    data-parallel) fills the gradients; clipping, Adam and the warm-up schedule follow. With a
    FusedAdam, clip() only measures the norm and the optimizer's pass applies the scaling."""

    def __init__(self, model, optimizer, schedule, step_fn, clip_norm: float | None):
        self.optimizer, self.schedule, self.step_fn = optimizer, schedule, step_fn
        self.params = list(model.named_parameters())
        self.clip_norm = clip_norm
        self.fused = hasattr(optimizer, "adopt_gradients")    # step(grad_scale=) takes the clip
        self._scale: float | None = None

    def lr(self) -> float:
        return self.optimizer.lr

    def gradients(self, batch) -> float:
        return self.step_fn(batch)

    def clip(self) -> float:
        if self.fused and self.clip_norm:
            from npformer.fast.fused_adam import clip_coefficient
            norm, self._scale = clip_coefficient(self.params, self.clip_norm)
            return norm
        from npformer.optim import clip_grad_norm
        return clip_grad_norm(self.params, self.clip_norm) if self.clip_norm else \
            grad_norm(self.params)

    def update(self) -> None:
        if self._scale is not None:
            self.optimizer.step(grad_scale=self._scale)
            self._scale = None
        else:
            self.optimizer.step()
        if self.schedule is not None:
            self.schedule.step()

    def close(self) -> None:
        if self.step_fn.parallel is not None:
            self.step_fn.parallel.close()


# ---------------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------------
def evaluate(model, task: Task, examples: Examples | None = None, *, batch_size: int = 256,
             greedy: bool = True, num_shown: int = 0, max_new_tokens: int | None = None) -> EvalResult:
    """Loss, token accuracy and exact-sequence accuracy (greedy decoding) on `examples`.

    examples  default: task.heldout(500) (for "pairs": the memorised table)
    greedy    False skips decoding (sequence_accuracy is then NaN)
    num_shown keep this many (source, target, prediction) strings in `.examples`
    """
    from npformer.decoding.generate import greedy_decode
    from npformer.layers.module import Module
    check_evaluate_arguments(model, task, examples, twin="npformer", module_type=Module,
                             batch_size=batch_size, greedy=greedy, num_shown=num_shown,
                             max_new_tokens=max_new_tokens)
    if getattr(task, "is_lm", False):                                  # language-model tasks
        from npformer.training.lm_train import evaluate_lm
        return evaluate_lm(model, task, examples, batch_size=batch_size, greedy=greedy,
                           num_shown=num_shown, max_new_tokens=max_new_tokens)
    if getattr(task, "is_text", False):                                # your own rows of text
        from npformer.training import text_tasks_eval as E
        run = E.evaluate_classification if task.is_classification else E.evaluate_translation
        return run(model, task, examples, batch_size=min(batch_size, 64), num_shown=num_shown)
    if examples is None:
        examples = task.heldout(500)
    was_training = model.training
    model.eval()
    loss_fn = make_loss(model, 0.0, task.is_classification)
    tally = EvalTally(task.vocab, num_shown)
    try:
        for batch in iterate_examples(examples, batch_size):
            logits, targets = model_forward(model, batch)
            mean_loss = float(loss_fn(logits, targets))                        # before decoding
            tokens = None
            if greedy and not isinstance(batch, ClassificationBatch):
                out = greedy_decode(model, batch.src, max_new_tokens=max_new_tokens or targets.shape[1])
                tokens = out.tokens                                              # (B, Tp)
            tally.add(batch, logits, targets, mean_loss, tokens)
    finally:
        model.train(was_training)
    return tally.result(greedy or task.is_classification)
