"""Evaluation of a CausalLM on a text corpus (npformer.data.text_lm), for either twin:

    loss             mean cross-entropy of the validation targets, nats per token
    perplexity       exp(loss)
    bits_per_char    total nats of the validation targets / ln 2 / the characters they cover
                     (per character, so a char and a BPE model compare)
    token_accuracy   teacher-forced argmax == next token
    sample           a sampled continuation of the validation text's first tokens

Every target counts: a TextLMBatch has no padding (its ignore_id is None), and id 0 is a real token
in a pretrained vocabulary (GPT-2's "!"). The twin supplies two functions: `scores(batch) -> (total
nats, correct, counted)` for one LMBatch,
and `draw(prompt (1, P), max_new_tokens, seed, suppress_ids) -> (1, N) generated ids`; evaluate_text() below gives
npformer's, torchformer.training.lm_train gives torch's.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from npformer.data.display import visible
from npformer.training.metrics import EvalResult

__all__ = ["TextEvalResult", "evaluate_text", "text_metrics", "SAMPLE_TEMPERATURE",
           "SAMPLE_TOKENS"]

SAMPLE_TEMPERATURE = 0.8          # the samples printed during training (generate has its options)
SAMPLE_TOKENS = 200               # at most this many new tokens (and what the context leaves)


@dataclass
class TextEvalResult(EvalResult):
    perplexity: float = float("nan")
    bits_per_char: float = float("nan")
    num_chars: int = 0
    prompt: str = ""
    sample: str = ""

    def summary(self) -> str:
        ppl = f"{self.perplexity:.2f}" if self.perplexity < 1e6 else f"{self.perplexity:.3g}"
        line = (f"loss {self.loss:.4f} nats/token  perplexity {ppl}  "
                f"{self.bits_per_char:.3f} bits/char  next-token acc "
                f"{100 * self.token_accuracy:.2f}%  ({self.num_tokens:,} tokens, "
                f"{self.num_chars:,} characters)")
        if self.prompt or self.sample:
            line += f"\n  sample: {visible(self.prompt)}[{visible(self.sample)}]"
        return line


def text_metrics(total_nats: float, tokens: int, chars: int) -> tuple[float, float, float]:
    """(loss per token, perplexity, bits per character) from summed nats."""
    loss = total_nats / max(tokens, 1)
    return loss, math.exp(min(loss, 700.0)), total_nats / math.log(2) / max(chars, 1)


def _numpy_scores(model):
    from npformer.layers.loss import CrossEntropyLoss

    def scores(batch):
        logits = model(batch.ids)                                       # (B, T, V)
        k = batch.num_tokens
        pred = np.asarray(logits).argmax(axis=-1)                       # (B, T)
        correct = int(((pred == batch.targets) & batch.target_mask).sum())
        loss_fn = CrossEntropyLoss(ignore_index=batch.loss_ignore_index)
        return float(loss_fn(logits, batch.targets)) * k, correct, k
    return scores


def _numpy_draw(model):
    from npformer.decoding.sampling import sample

    def draw(prompt, max_new_tokens, seed, suppress_ids):
        return sample(model, prompt, max_new_tokens=max_new_tokens, temperature=SAMPLE_TEMPERATURE,
                      seed=seed, eos_id=None, suppress_ids=suppress_ids).tokens
    return draw


def evaluate_text(model, task, examples=None, *, batch_size: int = 64, sample_seed: int = 0,
                  scores: Callable | None = None, draw: Callable | None = None) -> TextEvalResult:
    """TextEvalResult of `model` on `examples` (default: every validation window of `task`)."""
    if examples is None:
        examples = task.heldout()
    scores = scores or _numpy_scores(model)
    draw = draw or _numpy_draw(model)
    was_training = model.training
    model.eval()
    nats = 0.0
    correct = tokens = 0
    try:
        for _, batch in task.iterate(examples, batch_size):
            s, c, k = scores(batch)
            nats, correct, tokens = nats + s, correct + c, tokens + k
        prompt = task.prompt(max(1, min(32, task.context // 4)))        # (1, P)
        new = min(SAMPLE_TOKENS, task.context - prompt.shape[1])
        never = task.generation_suppress_ids(model.config.vocab_size)
        out = np.asarray(draw(prompt, new, sample_seed, never)).reshape(-1) if new > 0 else []
    finally:
        model.train(was_training)
    chars = task.characters(examples)
    loss, ppl, bpc = text_metrics(nats, tokens, chars)
    return TextEvalResult(loss=loss, token_accuracy=correct / max(tokens, 1),
                          sequence_accuracy=float("nan"), num_examples=len(examples),
                          num_tokens=tokens, perplexity=ppl, bits_per_char=bpc, num_chars=chars,
                          prompt=task.vocab.decode(prompt[0]), sample=task.vocab.decode(out))
