"""`npformer generate CKPT INPUT...`: decode inputs with an encoder-decoder (greedy or beam search),
classify them with an EncoderClassifier; language models go to npformer.cli.lm."""
from __future__ import annotations

import os
import shlex

import numpy as np

from npformer.cli import backends
from npformer.cli.common import (
    as_backend,
    check_backend,
    load_for_backend,
    saved_task,
    to_numpy,
)
from npformer.cli.errors import CliError
from npformer.cli.lm import generate_lm, refuse_alpha_without_beam, sampling_requested
from npformer.cli.option_rules import refuse_outputs_over_inputs
from npformer.cli.pretrained import generate_pretrained, is_pretrained_folder
from npformer.cli.printing import print_decoded
from npformer.cli.text_output import check_text_output, refuse_text_output

__all__ = ["cmd_generate", "CLASS_MEANING"]

# what each class of a classification task says about its input (npformer.data.tasks.Task.labels)
CLASS_MEANING = {"majority": {0: "at most half of the symbols are from the upper half of the "
                                 "alphabet",
                              1: "more than half of the symbols are from the upper half of the "
                                 "alphabet"}}


def _classify(args, model, task, vocab) -> int:
    """One predicted class per input (a classifier decodes no tokens)."""
    from npformer.data.tasks import BOS, EOS, collate, examples_from_text
    decoding = [o for d, o in getattr(args, "given", {}).items()
                if d in ("beam", "alpha", "max_new_tokens", "no_cache")]
    if decoding:                                             # never silently ignored
        raise CliError(f"{decoding[0]}: a classifier checkpoint predicts one class per "
                       f"input; it decodes no tokens (drop {', '.join(decoding)})")
    if task is not None:
        src = collate(examples_from_text(task, args.inputs)).src          # BOS + symbols + EOS
    else:
        ids = [vocab.encode(t) for t in args.inputs]
        src = np.zeros((len(ids), max(len(r) for r in ids) + 2), dtype=np.int64)
        for i, r in enumerate(ids):
            src[i, : len(r) + 2] = [BOS] + r + [EOS]
    logits = model(as_backend(src, model, args))
    pred = np.asarray(to_numpy(logits)).argmax(axis=-1)
    meaning = CLASS_MEANING.get(getattr(task, "name", None), {})
    for t, p in zip(args.inputs, pred):
        print(f"{t} -> class {int(p)}" + (f" ({meaning[int(p)]})" if int(p) in meaning else ""))
    return 0


def refuse_text_before_checkpoint(args) -> None:
    """`npformer generate "The model" lm.npz`: the text came first. When the checkpoint named does not
    exist and an INPUT is a checkpoint file (.npz) or a model folder (config.json), say the order."""
    if os.path.lexists(args.checkpoint):
        return
    for i, text in enumerate(args.inputs):
        if (text.endswith(".npz") and os.path.isfile(text)) or os.path.isfile(os.path.join(text, "config.json")):
            rest = [args.checkpoint, *args.inputs[:i], *args.inputs[i + 1:]]
            raise CliError(f"checkpoint {args.checkpoint}: no such file, and INPUT {text} is a model: the "
                           f"checkpoint comes first, then the text: npformer generate {shlex.join([text, *rest])}")


def cmd_generate(args) -> int:
    from npformer.data.tasks import EOS, PAD, Vocab, collate, examples_from_text
    check_backend(args)
    if args.backend != "numpy" and args.no_fast_decoding:
        raise CliError(f"--no-fast-decoding: turns off the numpy backend's decoding variants; "
                       f"expected --backend numpy, got --backend {args.backend}")
    refuse_text_before_checkpoint(args)
    check_text_output(args)                              # --out checked before the model loads
    if is_pretrained_folder(args.checkpoint):            # a Hugging Face GPT-2 folder: text in, text out
        return generate_pretrained(args)
    model, ckpt = load_for_backend(args)
    if args.backend == "numpy" and not getattr(args, "no_fast_decoding", False):
        from npformer.fast.last_logits import use_last_position_logits
        from npformer.fast.linear import use_few_rows_linear
        use_few_rows_linear(model)                           # decoding feeds a few rows a step
        if type(model).__name__ in ("CausalLM", "Transformer"):
            use_last_position_logits(model)                  # the decode loops read the last only
    meta = ckpt.metadata.get("task") if isinstance(ckpt.metadata, dict) else None
    kind = type(model).__name__
    c = model.config
    if args.beam > 1 and kind in ("Transformer", "CausalLM"):
        V = c.tgt_vocab if kind == "Transformer" else c.vocab_size
        if args.beam > V:
            raise CliError(f"--beam {args.beam}: expected at most {V}, the model's output vocabulary "
                           f"(each step runs K rows through the decoder, and the first step has only "
                           f"{V} candidates)")
    if meta is not None:
        task = saved_task(ckpt, args.checkpoint)             # its ids fit the model (else one line)
        refuse_outputs_over_inputs(args, data=getattr(task, "files", None))   # --out: not its text
        vocab = task.vocab
    else:
        task = None
        vocab = Vocab((c.src_vocab if kind == "Transformer" else c.vocab_size) - 3)
    gen = backends.module(args.backend, "generate")
    text = getattr(task, "is_text", False)
    if not (text and (kind == "CausalLM" or (kind == "Transformer" and not task.is_classification))):
        refuse_text_output(args, f"holds a {kind} on the {getattr(task, 'name', 'synthetic')} "
                                 f"task, which generates no text")
    if kind in ("CausalLM", "BertForMaskedLM") or sampling_requested(args):  # LMs, sampling
        return generate_lm(args, model, task, vocab, gen)
    if getattr(task, "is_text", False):                  # translate / classify your own text
        from npformer.cli.text_tasks import generate_rows
        return generate_rows(args, model, task, gen)
    if kind == "EncoderClassifier":
        return _classify(args, model, task, vocab)
    if kind == "Transformer":
        if task is not None:
            batch = collate(examples_from_text(task, args.inputs))
            src, expected = batch.src, [vocab.decode(r) for r in batch.tgt_out]
            if task.memorise:
                expected = [None] * len(args.inputs)
        else:
            ids = [vocab.encode(t) for t in args.inputs]
            width = max(len(r) for r in ids) + 1
            src = np.full((len(ids), width), PAD, dtype=np.int64)
            for i, r in enumerate(ids):
                src[i, : len(r) + 1] = r + [EOS]
            expected = [None] * len(ids)
        inputs = src
    else:                                                   # CausalLM: prompts, right-padded
        ids = [vocab.encode(t) for t in args.inputs]
        width = max(len(r) for r in ids)
        inputs = np.full((len(ids), width), PAD, dtype=np.int64)
        for i, r in enumerate(ids):
            inputs[i, : len(r)] = r
        expected = [None] * len(ids)
    refuse_alpha_without_beam(args)
    common = dict(max_new_tokens=args.max_new_tokens, use_cache=not args.no_cache)
    if args.beam > 1:
        out = gen.beam_search(model, inputs, beam_size=args.beam, length_penalty_alpha=args.alpha,
                              **common)
        how = f"beam search (K={args.beam}, alpha={args.alpha})"
    else:
        out = gen.greedy_decode(model, inputs, **common)
        how = "greedy"
    return print_decoded(args, how, out, vocab, expected)
