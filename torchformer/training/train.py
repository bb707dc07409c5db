"""Training and evaluation loops for torchformer models: the twin of npformer/train.py.

Same steps, same names, autograd instead of the hand-written backward:

    logits = model(src, tgt_in)                              (B, T, V)
    loss   = CrossEntropy(logits, tgt_out)                   ignore_index=pad_id, label smoothing
    optimizer.zero_grad(); loss.backward()
    clip_grad_norm(params, clip_norm)                        torch.nn.utils.clip_grad_norm_
    torch.optim.Adam(betas=(0.9, 0.98), eps=1e-9).step(); WarmupSchedule.step()

Batches come from npformer.data.tasks (NumPy arrays, moved to the model's device); TrainConfig, the result
types, the progress bar and the array metrics are framework-free and shared with npformer.training.train, so
the two loops are configured and read identically.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Iterator

import numpy as np
import torch

from npformer.data.tasks import ClassificationBatch, Examples, Task, batch_iterator, iterate_examples
from npformer.models.config import TransformerConfig
from npformer.training.arguments import check_evaluate_arguments, check_train_arguments
from npformer.training.loop import run_steps
from npformer.training.metrics import EvalResult, EvalTally, TrainResult
from npformer.training.train import TrainConfig, check_sizes_fit, model_config_for, peak_factor
from torchformer.guards.validation import device_memory

__all__ = ["TrainConfig", "TrainResult", "EvalResult", "model_config_for", "build_model",
           "make_optimizer", "train", "evaluate"]


def build_model(config: TransformerConfig, task: Task, seed: int = 0, device=None):
    """torchformer Transformer for seq2seq tasks, EncoderClassifier for classification, CausalLM
    for language-model tasks (npformer.data.lm_data)."""
    if getattr(task, "is_mlm", False):                                  # BERT layout, CLI sizes
        from npformer.models.config import bert_config
        from torchformer.models.bert import BertForMaskedLM
        sizes = {k: getattr(config, k) for k in ("vocab_size", "pad_id", "max_len", "d_model",
                                                "num_heads", "d_ff", "num_encoder_layers",
                                                "dropout", "dtype")}
        return BertForMaskedLM(bert_config(**sizes), seed=seed, device=device)
    if getattr(task, "is_lm", False):
        from torchformer.models.causal_lm import CausalLM
        return CausalLM(config, seed=seed, device=device)
    if task.is_classification:
        from torchformer.models.classifier import EncoderClassifier
        return EncoderClassifier(config, seed=seed, device=device)
    from torchformer.models.transformer import Transformer
    return Transformer(config, seed=seed, device=device)


def make_optimizer(model, config: TrainConfig):
    """torch.optim.Adam(betas, eps, weight_decay) with the warm-up schedule: (optimizer, schedule)."""
    from torchformer.optim import WarmupSchedule
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=config.betas, eps=config.eps,
                           weight_decay=config.weight_decay)
    d = model.config.d_model
    sched = WarmupSchedule(opt, d, config.warmup, peak_factor(config.lr, d, config.warmup))
    return opt, sched


def make_loss(model, label_smoothing: float, classification: bool):
    from torchformer.layers.loss import CrossEntropyLoss
    pad = model.config.pad_id
    ignore = -100 if classification or pad is None else pad
    return CrossEntropyLoss(ignore_index=ignore, label_smoothing=label_smoothing)


def _tensor(a: np.ndarray, device) -> torch.Tensor:
    return torch.as_tensor(a, dtype=torch.int64, device=device)


def model_forward(model, batch, device):
    """Logits and targets (tensors on `device`) of one batch."""
    if hasattr(batch, "answer_mask"):                                  # LMBatch: next tokens
        from torchformer.training.lm_train import lm_forward
        return lm_forward(model, batch, device)
    if isinstance(batch, ClassificationBatch):
        return model(_tensor(batch.src, device)), _tensor(batch.labels, device)
    return model(_tensor(batch.src, device), _tensor(batch.tgt_in, device)), \
        _tensor(batch.tgt_out, device)


def grad_norm(model) -> float:
    return float(math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in model.parameters()
                               if p.grad is not None)))


def train(model, task: Task, config: TrainConfig, *, batches: Iterable | None = None,
          optimizer=None, schedule=None, eval_examples: Examples | None = None,
          callback: Callable[[int, float], None] | None = None, file=None,
          start_step: int = 0) -> TrainResult:
    """Train `model` in place for `config.steps` steps (see npformer.training.train.train)."""
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config: expected a TrainConfig, got {type(config).__name__}")
    check_train_arguments(model, task, twin="torchformer", module_type=torch.nn.Module,
                          optimizer_type=torch.optim.Optimizer, optimizer=optimizer, callback=callback,
                          start_step=start_step, batches=batches, eval_examples=eval_examples)
    check_sizes_fit(model, task, config, batches, eval_examples, device_memory(model.device))
    if optimizer is None:
        optimizer, schedule = make_optimizer(model, config)
    loss_fn = make_loss(model, config.label_smoothing, task.is_classification)
    stream: Iterator = iter(batches) if batches is not None else \
        batch_iterator(task, config.batch_size, config.seed)
    if config.eval_every and eval_examples is None:
        eval_examples = task.heldout(config.eval_size)
    step = TorchStep(model, optimizer, schedule, loss_fn, config.clip_norm)

    def evaluate_now():
        return evaluate(model, task, eval_examples, batch_size=max(config.batch_size, 128))
    return run_steps(step, model, config, stream, start_step=start_step, evaluate=evaluate_now,
                     callback=callback, file=file)


class TorchStep:
    """One training step of a torchformer model (see npformer.training.loop): autograd fills the
    gradients; clipping, torch.optim.Adam and the warm-up schedule follow."""

    def __init__(self, model, optimizer, schedule, loss_fn, clip_norm: float | None):
        self.model, self.optimizer, self.schedule, self.loss_fn = model, optimizer, schedule, loss_fn
        self.params = list(model.parameters())
        self.clip_norm = clip_norm

    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def gradients(self, batch) -> float:
        logits, targets = model_forward(self.model, batch, self.model.device)   # (B, T, V), (B, T)
        loss = self.loss_fn(logits, targets)
        self.optimizer.zero_grad(set_to_none=False)
        loss.backward()                                                  # autograd fills .grad
        return float(loss.detach())

    def clip(self) -> float:
        from torchformer.optim import clip_grad_norm
        return clip_grad_norm(self.params, self.clip_norm) if self.clip_norm else \
            grad_norm(self.model)

    def update(self) -> None:
        self.optimizer.step()
        if self.schedule is not None:
            self.schedule.step()

    def close(self) -> None:
        pass


@torch.no_grad()
def evaluate(model, task: Task, examples: Examples | None = None, *, batch_size: int = 256,
             greedy: bool = True, num_shown: int = 0, max_new_tokens: int | None = None) -> EvalResult:
    """Loss, token accuracy and exact-sequence accuracy (greedy decoding) on `examples`
    (see npformer.training.train.evaluate)."""
    from torchformer.decoding.generate import greedy_decode
    check_evaluate_arguments(model, task, examples, twin="torchformer", module_type=torch.nn.Module,
                             batch_size=batch_size, greedy=greedy, num_shown=num_shown,
                             max_new_tokens=max_new_tokens)
    if getattr(task, "is_lm", False):                                  # language-model tasks
        from torchformer.training.lm_train import evaluate_lm
        return evaluate_lm(model, task, examples, batch_size=batch_size, greedy=greedy,
                           num_shown=num_shown, max_new_tokens=max_new_tokens)
    if getattr(task, "is_text", False):                                # your own rows of text
        from torchformer.training.text_eval import evaluate_text_task
        return evaluate_text_task(model, task, examples, batch_size=min(batch_size, 64),
                                  num_shown=num_shown)
    if examples is None:
        examples = task.heldout(500)
    device = model.device
    was_training = model.training
    model.eval()
    loss_fn = make_loss(model, 0.0, task.is_classification)
    tally = EvalTally(task.vocab, num_shown)
    try:
        for batch in iterate_examples(examples, batch_size):
            logits_t, targets_t = model_forward(model, batch, device)
            targets = targets_t.cpu().numpy()
            mean_loss = float(loss_fn(logits_t, targets_t))                  # before decoding
            tokens = None
            if greedy and not isinstance(batch, ClassificationBatch):
                out = greedy_decode(model, batch.src, max_new_tokens=max_new_tokens or targets.shape[1])
                tokens = out.tokens.cpu().numpy()                                # (B, Tp)
            tally.add(batch, logits_t.detach().cpu().numpy(), targets, mean_loss, tokens)
    finally:
        model.train(was_training)
    return tally.result(greedy or task.is_classification)
