"""`npformer generate`'s text outputs, shared by both backends (the decode loops of either twin
return token ids; the text they spell is cut and written here, one layer above them):

    --stop STR      (repeatable) a sample ends at the first occurrence of any STR in the generated
                    text, which is not kept (as transformers' stop_strings / OpenAI's stop); the
                    prompt itself is never searched; greedy decoding and sampling end the row
                    there (no model call after it), beam search cuts its finished text
    --out FILE      the samples written to FILE as UTF-8, atomically (npformer.io.files); an existing
                    FILE is refused unless --overwrite, and the path is checked before the model
                    is loaded

Both go with the commands that generate text: a language model trained on your own text, a GPT-2
folder, a translation checkpoint. The others (synthetic tasks, classifiers, [MASK] filling) refuse
them with an error naming the option.
"""
from __future__ import annotations

import os

from npformer.cli.argtypes import file_path
from npformer.cli.errors import CliError
from npformer.decoding.stop import StopStrings

__all__ = ["add_text_output_args", "check_text_output", "refuse_text_output", "stop_strings",
           "write_samples"]


def add_text_output_args(p) -> None:
    """`generate`'s --stop, --out and --overwrite (their own argument group)."""
    g = p.add_argument_group("text output (your own text, GPT-2 folders, translation; "
                             "docs/TEXT.md)")
    g.add_argument("--stop", action="append", default=None, metavar="STR",
                   help="end each sample at the first occurrence of STR in the generated text "
                        "(not printed); repeatable: the earliest of them ends it")
    g.add_argument("--out", type=file_path, metavar="FILE", default=None,
                   help="also write the samples to FILE (UTF-8, each followed by a newline); "
                        "checked before the model is loaded")
    g.add_argument("--overwrite", action="store_true",
                   help="let --out replace an existing FILE (refused otherwise)")


def check_text_output(args) -> None:
    """Before any model is loaded: --stop strings non-empty UTF-8 text, --overwrite only with --out, --out a
    new writable file (or an existing one with --overwrite) that is not the checkpoint itself."""
    from npformer.io.files import check_output_file
    for s in getattr(args, "stop", None) or ():
        if s == "":
            raise CliError("--stop: expected a non-empty string, got ''")
        try:                   # bytes that were not UTF-8: generated text never holds them
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise CliError(f"--stop {s!r}: expected UTF-8 text, got bytes that are not UTF-8 "
                           f"(kept as lone surrogates); generated text never holds them, so this "
                           f"stop string could never match") from None
    out = getattr(args, "out", None)
    if getattr(args, "overwrite", False) and out is None:
        raise CliError("--overwrite: lets --out FILE replace an existing file; give --out FILE")
    if out is None:
        return
    ckpt = getattr(args, "checkpoint", None)
    if ckpt and os.path.exists(out) and os.path.exists(ckpt) and (
            os.path.samefile(out, ckpt) or
            (os.path.isdir(ckpt) and os.path.realpath(out).startswith(
                os.path.realpath(ckpt) + os.sep))):
        raise CliError(f"--out {out}: is the checkpoint this command reads ({ckpt}); expected "
                       f"another file (--overwrite replaces earlier outputs only)")
    check_output_file(out, "--out", overwrite=bool(getattr(args, "overwrite", False)))


def refuse_text_output(args, what: str) -> None:
    """--stop / --out given where no text is generated (`what` says what the command does)."""
    given = [o for o, d in (("--stop", "stop"), ("--out", "out")) if getattr(args, d, None)]
    if given:
        raise CliError(f"{given[0]}: for commands that generate text (a language model on your own "
                       f"text, a GPT-2 folder, a translation checkpoint); {args.checkpoint} "
                       f"{what}")


def stop_strings(args, decode):
    """--stop as the decode loop's `stop=` (a row ends once its text holds a stop string: greedy
    and sampling stop computing there; npformer.decoding.stop), or None without --stop."""
    stops = getattr(args, "stop", None)
    return StopStrings(stops, decode) if stops else None


def write_samples(args, samples: list[str]) -> None:
    """The samples into --out (UTF-8, one after another, each followed by a newline), atomically;
    nothing without --out. Without --overwrite a file another program wrote there since the checks
    is kept (an OutputPathError says so)."""
    out = getattr(args, "out", None)
    if out is None:
        return
    from npformer.io.files import atomic_write
    # surrogateescape: bytes of a command-line INPUT that were not UTF-8 go back out as they came
    data = "".join(s + "\n" for s in samples).encode("utf-8", "surrogateescape")
    atomic_write(out, lambda f: f.write(data), option="--out", replace=bool(getattr(args, "overwrite", False)))
    args.written_out = str(out)                           # an interruption now: say it is written
    print(f"wrote {len(samples)} sample(s) to {out}")
