"""What the commands print about a model's answers: evaluation lines, examples, decoded inputs."""
from __future__ import annotations

import math

import numpy as np

from npformer.cli.common import to_numpy
from npformer.data.display import visible

__all__ = ["print_eval", "print_examples", "print_decoded"]


def print_examples(examples, classification: bool) -> None:
    """The decoded (or classified) examples an evaluation returned, one line each."""
    if not examples:
        return
    examples = [tuple(visible(str(v)) for v in ex) for ex in examples]   # generated text: escaped
    if classification:
        print("examples (input -> label / predicted):")
        for src, tgt, pred in examples:
            mark = "ok" if tgt == pred else "WRONG"
            print(f"  {src:<16} -> {tgt} / {pred}   {mark}")
        return
    print("examples (source -> target / decoded):")
    w = max(len(s) for s, _, _ in examples)
    for src, tgt, pred in examples:
        mark = "ok" if tgt == pred else "WRONG"
        print(f"  {src:<{w}} -> {tgt:<{w}} / {pred:<{w}}  {mark}")


def print_eval(ev, task) -> None:
    """One line: loss and the task's two accuracies on the held-out (or memorised) sequences."""
    if hasattr(ev, "bits_per_char"):                    # a text corpus: loss, perplexity, bpc
        print(f"validation: {ev.summary()}")
        return
    if hasattr(ev, "metrics"):                          # your own rows: BLEU, or F1 and a matrix
        print(f"held-out: {ev.summary()}")
        return
    what = "memorised table" if task.memorise else "held-out"
    if task.is_classification:                         # one class per input: one accuracy
        print(f"{what}: loss {ev.loss:.4f}  classification accuracy "
              f"{100 * ev.sequence_accuracy:.2f}%  ({ev.num_examples} sequences)")
        return
    tok, seq = getattr(task, "metric_names", ("token accuracy", "exact-sequence accuracy"))
    print(f"{what}: loss {ev.loss:.4f}  {tok} {100 * ev.token_accuracy:.2f}%  "
          f"{seq} {100 * ev.sequence_accuracy:.2f}%  "
          f"({ev.num_examples} sequences)")


def print_decoded(args, how: str, out, vocab, expected: list) -> int:
    """`npformer generate`'s output for any model that decodes: one line per input (shared by the
    encoder-decoder and the language models)."""
    tokens = np.asarray(to_numpy(out.tokens))
    scores = np.asarray(to_numpy(out.scores))
    print(f"{how}, {'no cache' if args.no_cache else 'KV cache'}, {args.backend}")
    # beam search ranks by log-prob / lp(length), the GNMT length penalty: not a log-probability
    label = "score (log-prob / length penalty)" if how.startswith("beam search") else \
        "log-prob score"
    for text, row, score, exp in zip(args.inputs, tokens, scores, expected):
        got = vocab.decode(row)
        note = "" if exp is None else ("  ok" if got == exp else f"  (expected {exp})")
        s = float(score)
        print(f"{text} -> {got}   [{label} {s:.3f}]{note}" if math.isfinite(s) else
              f"{text} -> {got}{note}")
    return 0
