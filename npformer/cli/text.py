"""The command line of a language model on your own text (npformer.data.text_lm):

    npformer train --task lm --data FILE [FILE|FOLDER ...] [--tokenizer char|bpe --vocab-size N
                   --context N --val-fraction F]
    npformer generate CKPT "Once upon a"        continues the text (greedy, or sampling options)

and the rule that no long option is an abbreviation of another (forbid_abbreviations).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys

import numpy as np

from npformer.cli.argtypes import file_or_folder_path, file_path, float_in, int_at_least
from npformer.cli.errors import CliError
from npformer.data.display import visible

__all__ = ["add_text_args", "add_test_data_arg", "test_data_task", "check_text_args",
           "text_task_from", "refuse_text_on_resume", "read_inputs", "generate_text",
           "forbid_abbreviations", "TEXT_OPTIONS"]

# dest -> option string: the text options, each fixed by a checkpoint on --resume
TEXT_OPTIONS = {"data": "--data", "tokenizer": "--tokenizer", "vocab_size": "--vocab-size",
                "context": "--context", "val_fraction": "--val-fraction",
                "shared_vocab": "--shared-vocab"}


def add_text_args(p: argparse.ArgumentParser) -> None:
    """`train`'s text-corpus group (used with --task lm)."""
    from npformer.data.text_lm import (
        DEFAULT_BPE_VOCAB,
        DEFAULT_CONTEXT,
        DEFAULT_VAL_FRACTION,
        TEXT_TOKENIZERS,
    )
    g = p.add_argument_group("your own text (--task lm|translate|classify --data FILE; "
                             "docs/TEXT.md)")
    g.add_argument("--data", nargs="+", type=file_or_folder_path, metavar="PATH", default=None,
                   help="--task lm: a UTF-8 text corpus, files and/or folders (every text file "
                        "under a folder), joined in order (without --data, --task lm is the "
                        "synthetic addition task); --task translate: a TSV file of "
                        "source<TAB>target lines, or two line-aligned files SOURCE TARGET; "
                        "--task classify: a TSV file of text<TAB>label lines or a CSV file with "
                        "text and label columns")
    g.add_argument("--tokenizer", choices=TEXT_TOKENIZERS, default=None,
                   help="char: one token per character of the corpus; bpe: a byte-level BPE "
                        "trained on the training text (default: char)")
    g.add_argument("--vocab-size", type=int_at_least(259), default=None, metavar="N",
                   help=f"--tokenizer bpe: tokens (>= 259; default: {DEFAULT_BPE_VOCAB})")
    g.add_argument("--context", type=int_at_least(2), default=None, metavar="N",
                   help=f"tokens the model reads at once, its max_len (default: {DEFAULT_CONTEXT}); "
                        f"translate: longer pairs are left out, classify: longer texts are cut")
    g.add_argument("--val-fraction", type=float_in(0.0, 0.5, lo_open=True, hi_open=True),
                   default=None, metavar="F",
                   help=f"share held out for validation: the end of the text (lm), a seeded "
                        f"random share of the rows (translate, classify) (default: "
                        f"{DEFAULT_VAL_FRACTION})")
    g.add_argument("--shared-vocab", action="store_true", default=None,
                   help="--task translate: one tokenizer for source and target, trained on both, "
                        "and one shared embedding matrix (default: one tokenizer per side)")


def add_test_data_arg(p: argparse.ArgumentParser) -> None:
    """`evaluate`'s --data: a test file for a translate or classify checkpoint."""
    p.add_argument("--data", nargs="+", type=file_path, metavar="PATH", default=None,
                   help="translate / classify checkpoints: score every row of these files (a "
                        "test set, same layout as training's) instead of the held-out rows")


def test_data_task(args, task):
    """The checkpoint's task on `evaluate --data FILE` (its tokenizers and labels), or `task`."""
    if getattr(args, "data", None) is None:
        return task
    if not hasattr(task, "on_file"):
        raise CliError(f"--data: a test file is for translate and classify checkpoints; "
                       f"{args.checkpoint} holds the {task.name} task (its held-out data is "
                       f"the checkpoint's own)")
    return task.on_file(args.data)


def check_text_args(args) -> None:
    """--data goes with --task lm, translate or classify (the last two need it); the other text
    options go with --data."""
    from npformer.data.text_tasks import ROW_TASKS
    if getattr(args, "resume", None):
        return
    if args.data is None:
        if args.task in ROW_TASKS:
            raise CliError(f"--task {args.task}: trains on your own text; give --data FILE "
                           f"(see npformer train --help)")
        given = [TEXT_OPTIONS[d] for d in ("tokenizer", "vocab_size", "context", "val_fraction",
                                           "shared_vocab")
                 if getattr(args, d, None) is not None]
        if given:
            raise CliError(f"{given[0]}: only with --data FILE (your own text for --task lm, "
                           f"translate or classify)")
        return
    mlm_init = args.task == "mlm" and getattr(args, "init", None)
    if args.task not in ("lm",) + ROW_TASKS and not mlm_init:
        raise CliError(f"--data: your own text trains --task lm (a language model), translate "
                       f"or classify (or mlm with --init BERT_FOLDER); got --task {args.task}")
    if args.vocab_size is not None and args.tokenizer != "bpe":
        raise CliError(f"--vocab-size {args.vocab_size}: only with --tokenizer bpe (a character "
                       f"vocabulary has one token per character of the corpus)")
    if args.shared_vocab and args.task != "translate":
        raise CliError(f"--shared-vocab: only for --task translate (its source and target), got "
                       f"--task {args.task}")
    if args.max_number is not None:
        raise CliError("--max-number: for the synthetic addition task, not with --data")
    if args.task in ROW_TASKS and args.context is not None and args.context < 3:
        raise CliError(f"--context: expected an integer >= 3 for --task {args.task}, got "
                       f"{args.context}")
    if args.task == "translate":
        from npformer.training.text_tasks_eval import SACREBLEU_HINT
        try:
            import sacrebleu  # noqa: F401 - the held-out BLEU at the end of the run
        except ImportError:
            raise CliError(f"--task translate: {SACREBLEU_HINT}") from None



def refuse_text_on_resume(args) -> None:
    """The corpus, tokenizer and context come from the checkpoint of --resume."""
    given = getattr(args, "given", {}) or {}
    clash = [given[d] for d in TEXT_OPTIONS if d in given]
    if clash:
        raise CliError(f"{clash[0]}: not allowed with --resume {args.resume}: a resumed run keeps "
                       f"the corpus, tokenizer and context saved in the checkpoint")


def text_task_from(args):
    """The task of --data (files read and checked, tokenizer(s) trained)."""
    from npformer.data.registry import build_text_task_from_files
    return build_text_task_from_files(args.task, args.data, tokenizer=args.tokenizer,
                                      vocab_size=args.vocab_size, context=args.context,
                                      val_fraction=args.val_fraction,
                                      shared_vocab=bool(args.shared_vocab), seed=args.seed)


def read_inputs(inputs, tokenizer, file=None) -> list[str]:
    """The INPUT texts as the checkpoint's corpus was read (npformer.data.text_files.normalise_text:
    Windows and old-Mac line ends become "\\n"), with a note on stderr for each INPUT holding
    characters a character vocabulary never saw in training (each is read as its unknown token)."""
    from npformer.data.text_files import normalise_text
    texts = [normalise_text(t) for t in inputs]
    for text in texts:
        if _names_a_file(text):
            print(f"note: INPUT {text[:60]!r} is also the name of a file here; it is read as that "
                  f"text itself, not as the file's contents (to use the file's text, give "
                  f"\"$(cat {visible(shlex.quote(text))})\")", file=file or sys.stderr)
    unseen = getattr(tokenizer, "unseen", None)
    if unseen is None:                            # byte-level: every INPUT must be UTF-8 text
        for text in texts:
            check_input_text(text)
    for text in texts if unseen is not None else ():
        new = unseen(text)
        if new:
            shown = ", ".join(repr(c) for c in new[:10]) + (", ..." if len(new) > 10 else "")
            form = _covering_form(text, unseen)
            hint = "" if form is None else (
                f"; written in Unicode normal form {form} this INPUT has none: the corpus spells "
                f"these characters in {form} (e.g. {'composed' if form == 'NFC' else 'decomposed'} "
                f"accents), so convert the INPUT to {form}")
            print(f"note: INPUT {text[:40]!r}: {len(new)} character(s) the checkpoint's character "
                  f"vocabulary never saw in training ({shown}); each is read as the unknown token "
                  f"(written as U+FFFD if decoded){hint}", file=file or sys.stderr)
    return texts


def check_input_text(text: str) -> None:
    """A CliError naming the INPUT when a byte-level tokenizer cannot encode it (bytes that were not
    UTF-8 on the command line, kept by Python as lone surrogates)."""
    from npformer.data.tokenizers.text_input import check_encodable
    try:
        check_encodable(text, "INPUT")
    except ValueError as e:
        raise CliError(f"INPUT {text[:40]!r}: {str(e).removeprefix('INPUT: ')} (the checkpoint's "
                       f"tokenizer reads UTF-8, as its corpus was)") from None


def checked_prompt(text: str, ids: list, limit: int, context: str = "") -> tuple[str, list]:
    """(text, ids) of one INPUT that encodes to some tokens and leaves the model (which reads `limit`
    tokens at most; `context` names the option setting it) room to generate; a CliError otherwise."""
    if not ids:
        raise CliError(f"INPUT {text!r}: encodes to no tokens; give some text to continue")
    if len(ids) >= limit:
        raise CliError(f"INPUT {text[:40]!r}{'...' if len(text) > 40 else ''}: {len(ids)} tokens; "
                       f"the model reads {limit} at most{context} and needs room to generate: give "
                       f"at most its last {limit - 1} tokens")
    return text, ids


def note_new_token_room(args, limit: int, prompts, context: str = "") -> None:
    """--max-new-tokens past what the model's `limit` positions leave after the longest prompt: a note
    on stderr, since the samples come out shorter than asked."""
    asked = getattr(args, "max_new_tokens", None)
    longest = max(len(ids) for _, ids in prompts)
    if asked is not None and asked > limit - longest:
        print(f"note: --max-new-tokens {asked}: the model reads {limit} tokens at most{context}, prompt "
              f"included, so a sample gets at most {limit - longest} after the longest prompt ({longest} "
              f"tokens)", file=sys.stderr)


def _names_a_file(text: str) -> bool:
    """True when the INPUT is the path of an existing file (a prompt file given as the prompt)."""
    if not text.strip() or "\n" in text or len(text) > 4096 or "\0" in text:
        return False
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):                 # a name the file system cannot hold
        return False


def _covering_form(text: str, unseen) -> str | None:
    """"NFC" or "NFD" when `text` in that Unicode normal form (another spelling of the same
    characters) has no character `unseen` by the vocabulary; None otherwise. The tokenizer does not
    record the corpus's form (a corpus may mix them), so the INPUT is not converted silently."""
    import unicodedata
    for form in ("NFC", "NFD"):
        other = unicodedata.normalize(form, text)
        if other != text and not unseen(other):
            return form
    return None


def generate_text(args, model, task, gen, sampler) -> int:
    """`npformer generate` on a text checkpoint: each INPUT continued, printed as text."""
    from npformer.cli.common import as_backend, to_numpy
    from npformer.cli.decode_options import refuse_alpha_without_beam, sampling_requested
    from npformer.cli.text_output import stop_strings, write_samples
    from npformer.decoding.stop import cut_at_stop
    sampling = sampling_requested(args)
    if args.beam > 1 and sampling:
        raise CliError(f"--beam {args.beam}: beam search cannot be combined with sampling "
                       f"(--temperature/--top-k/--top-p/--seed)")
    refuse_alpha_without_beam(args)
    limit = model.config.max_len
    prompts = []                                          # every INPUT checked before the first sample
    for text in read_inputs(args.inputs, task.tokenizer):
        prompts.append(checked_prompt(text, task.vocab.encode(text), limit, " (--context)"))
    note_new_token_room(args, limit, prompts, " (--context)")
    if sampling:
        t = 1.0 if args.temperature is None else args.temperature
        seed = 0 if args.seed is None else args.seed
        how = (f"sampling (temperature {t:g}, top-k {args.top_k or 'off'}, top-p "
               f"{args.top_p if args.top_p is not None else 'off'}, seed {seed})")
    else:
        how = "greedy" if args.beam == 1 else f"beam search (K={args.beam}, alpha={args.alpha})"
    print(f"{how}, {'no cache' if args.no_cache else 'KV cache'}, {args.backend}; "
          f"{task.tokenizer.kind} tokenizer saved in {args.checkpoint}")
    samples = []
    for text, ids in prompts:
        prompt = as_backend(np.asarray([ids], dtype=np.int64), model, args)        # (1, P)
        common = dict(max_new_tokens=min(args.max_new_tokens or limit, limit - len(ids)),
                      use_cache=not args.no_cache, eos_id=None,
                      suppress_ids=task.generation_suppress_ids(model.config.vocab_size))
        stop = stop_strings(args, task.vocab.decode)          # every decoder ends there
        if sampling:
            out = sampler.sample(model, prompt, temperature=t, top_k=args.top_k, top_p=args.top_p,
                                 seed=seed, stop=stop, **common)
        elif args.beam > 1:
            out = gen.beam_search(model, prompt, beam_size=args.beam,
                                  length_penalty_alpha=args.alpha, stop=stop,
                                  **common)
        else:
            out = gen.greedy_decode(model, prompt, stop=stop, **common)
        row = np.asarray(to_numpy(out.tokens))[0][: int(to_numpy(out.lengths)[0])]
        sample = text + cut_at_stop(task.vocab.decode(row), args.stop)
        samples.append(sample)
        print(visible(sample))
    write_samples(args, samples)
    return 0


def forbid_abbreviations(parser: argparse.ArgumentParser) -> None:
    """No long option may be given by a prefix (`--data` would otherwise be read as
    `--data-parallel` on a parser without --data): argparse's allow_abbrev off, on every parser."""
    parser.allow_abbrev = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                forbid_abbreviations(sub)
