"""`npformer generate` on a checkpoint trained on your own rows of text (npformer.data.text_tasks):

    npformer generate MT.npz "a source sentence" ...           its translation (greedy), as text
    npformer generate MT.npz "a source sentence" --beam 4      beam search (--alpha: length penalty)
    npformer generate CLS.npz "some text" ...                  the predicted label, its probability
                                                               and the runner-up

The tokenizer(s) and the label names come from the checkpoint; the training files are not read.
"""
from __future__ import annotations

import sys

import numpy as np

from npformer.cli.common import as_backend, to_numpy
from npformer.cli.decode_options import refuse_alpha_without_beam
from npformer.cli.errors import CliError
from npformer.cli.text import read_inputs
from npformer.cli.text_output import stop_strings, write_samples
from npformer.data.display import visible
from npformer.decoding.stop import cut_at_stop

__all__ = ["generate_rows", "translate_texts", "classify_texts"]


def generate_rows(args, model, task, gen) -> int:
    kind = type(model).__name__
    want = ("EncoderClassifier", "BertForSequenceClassification") if task.is_classification \
        else ("Transformer",)
    if kind not in want:
        raise CliError(f"checkpoint {args.checkpoint}: holds a {kind}, but its task {task.name} "
                       f"needs a {' or '.join(want)}")
    if task.is_classification:
        return classify_texts(args, model, task)
    return translate_texts(args, model, task, gen)


def translate_texts(args, model, task, gen) -> int:
    """Each INPUT translated (greedy or beam search), one line each."""
    from npformer.data.text_tasks import cut_at_eos
    from npformer.data.vocab import EOS
    refuse_alpha_without_beam(args)
    texts = read_inputs(args.inputs, task.tokenizer)
    rows = []
    for text in texts:
        ids = task.tokenizer.encode(text)
        if not ids or len(ids) > task.context - 1:
            raise CliError(f"INPUT {text[:40]!r}: {len(ids)} {task.tokenizer.kind} tokens; the model "
                           f"reads 1 to {task.context - 1} (its --context, with EOS)")
        rows.append(ids + [EOS])
    src = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)           # (N, S)
    for i, r in enumerate(rows):
        src[i, : len(r)] = r
    x = as_backend(src, model, args)
    common = dict(max_new_tokens=args.max_new_tokens, use_cache=not args.no_cache,
                  suppress_ids=task.suppress_ids)
    stop = stop_strings(args, lambda row: task.target_vocab.decode(cut_at_eos(row)))
    if args.beam > 1:
        out = gen.beam_search(model, x, beam_size=args.beam, length_penalty_alpha=args.alpha,
                              stop=stop, **common)
        how = f"beam search (K={args.beam}, alpha={args.alpha})"
    else:
        out = gen.greedy_decode(model, x, stop=stop, **common)
        how = "greedy"
    tokens = np.asarray(to_numpy(out.tokens))
    side = "shared vocabulary" if task.shared_vocab else "source and target vocabularies"
    print(f"{how}, {'no cache' if args.no_cache else 'KV cache'}, {args.backend}; "
          f"{task.tokenizer.kind} {side} saved in {args.checkpoint}")
    lengths = np.asarray(to_numpy(out.lengths))          # a row a stop string ended: PAD after it
    samples = [cut_at_stop(task.target_vocab.decode(cut_at_eos(row[:n])), args.stop)
               for row, n in zip(tokens, lengths)]
    for text, sample in zip(texts, samples):
        print(visible(f"{text} -> {sample}"))
    write_samples(args, samples)
    return 0


def classify_texts(args, model, task) -> int:
    """Each INPUT's predicted label with its probability (and the runner-up's)."""
    decoding = [o for d, o in (getattr(args, "given", {}) or {}).items()
                if d in ("beam", "alpha", "max_new_tokens", "no_cache")]
    if decoding:                                                  # never silently ignored
        raise CliError(f"{decoding[0]}: a classifier checkpoint predicts one label per input; it "
                       f"decodes no tokens (drop {', '.join(decoding)})")
    texts = read_inputs(args.inputs, task.tokenizer)
    limit = task.context - 2
    for text, n in zip(texts, task.text_lengths(texts)):
        if n == 0:
            raise CliError(f"INPUT {text!r}: encodes to no tokens; give some text to classify")
        if n > limit:
            print(f"note: INPUT {text[:40]!r}: {n} tokens, cut to the first {limit} (--context "
                  f"{task.context} less the two marks around a text), as in training",
                  file=sys.stderr)
    src = task.examples_from_text(texts).collate().src                                  # (N, S)
    z = np.asarray(to_numpy(model(as_backend(src, model, args))), dtype=np.float64)  # (N, C)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)                                               # (N, C)
    order = np.argsort(-p, axis=1)                                                  # (N, C)
    print(f"{task.num_classes} labels {task.labels}, {args.backend}; {task.tokenizer.kind} "
          f"tokenizer saved in {args.checkpoint}")
    for text, row, o in zip(texts, p, order):
        best, second = int(o[0]), int(o[1])
        print(f"{text} -> {task.labels[best]} (p={row[best]:.3f}; next: "
              f"{task.labels[second]} {row[second]:.3f})")
    return 0
