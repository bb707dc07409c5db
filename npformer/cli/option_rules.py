"""Checks of option combinations for the npformer command line that need more than one argument's
type.

    given_options(parser, argv, command)   the option names the user typed (not defaults)
    refuse_fixed_on_resume(args)           `train --resume CKPT --task lm ...` is an error, not a
                                           silently ignored option: a resumed run keeps the task,
                                           model and optimisation settings saved in CKPT
    check_nproc(args)                      `--nproc N` at most the CPU cores (device cpu) or GPUs
    check_threads(args)                    `--threads N` at most the CPUs this process may use
    refuse_ignored_options(args, task)     an option the task, model or backend has no use for
                                           is an error naming it (never silently ignored)
    sigterm_as_interrupt(), interrupted_message(args, exc)
                                           Ctrl-C and SIGTERM: one line saying what was (not) saved
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal

__all__ = ["given_options", "refuse_fixed_on_resume", "check_nproc", "check_threads",
           "available_cpus", "FIXED_ON_RESUME", "Terminated", "sigterm_as_interrupt",
           "interrupted_message", "check_distinct_outputs", "refuse_outputs_over_inputs",
           "refuse_ignored_options", "IGNORED_BY_TASK"]

# `train` options whose values a resumed run takes from the checkpoint (task, model, optimisation)
FIXED_ON_RESUME = ("task", "num_symbols", "min_len", "max_len", "num_pairs", "max_number",
                   "d_model", "heads", "d_ff", "layers", "encoder_layers", "decoder_layers",
                   "dropout", "activation", "norm_first", "positional", "dtype", "batch_size", "lr",
                   "warmup", "label_smoothing", "clip_norm", "seed")

# options each task has no use for: {task: {dest: why}}; "pairs" alone uses --num-pairs
_LM_IGNORES = {"num_symbols": "its vocabulary is the 12 symbols 0-9 + =",
               "min_len": "its rows are sized by --max-number",
               "max_len": "its rows are sized by --max-number",
               "num_pairs": "only --task pairs has a table of pairs",
               "encoder_layers": "a CausalLM has decoder layers only (--layers or --decoder-layers)"}
# the synthetic sizes on your own text (--data): translate, classify and lm alike
_TEXT_IGNORES = {"num_symbols": "its vocabulary is trained on --data (--tokenizer, --vocab-size)",
                 "min_len": "its rows are your text's",
                 "max_len": "its rows are your text's; --context sets the model's length",
                 "num_pairs": "only --task pairs has a table of pairs"}
IGNORED_BY_TASK = {
    "lm": _LM_IGNORES,
    "mlm": {"num_pairs": "only --task pairs has a table of pairs",
            "decoder_layers": "a BertForMaskedLM has encoder layers only (--layers or "
                              "--encoder-layers)"},
    "majority": {"num_pairs": "only --task pairs has a table of pairs",
                 "decoder_layers": "an EncoderClassifier has encoder layers only (--layers or "
                                   "--encoder-layers)"},
    **{t: {"num_pairs": "only --task pairs has a table of pairs"}
       for t in ("copy", "reverse", "sort")},
    **{t: {**_TEXT_IGNORES,
           **({"decoder_layers": "an EncoderClassifier has encoder layers only (--layers or "
                                 "--encoder-layers)"} if t == "classify" else {})}
       for t in ("translate", "classify")},
}
# --task lm on --data: the text's reasons, not the addition task's
_LM_TEXT_IGNORES = {**_TEXT_IGNORES, "encoder_layers": _LM_IGNORES["encoder_layers"]}


def refuse_ignored_options(args, task: str | None) -> None:
    """ValueError naming the first option given on the command line that `task` (or the backend)
    would ignore (`--task lm --num-symbols 20` would otherwise train the same model as without it)."""
    given = getattr(args, "given", {}) or {}
    on_text = task == "lm" and getattr(args, "data", None)
    table = _LM_TEXT_IGNORES if on_text else IGNORED_BY_TASK.get(task, {})
    for dest, why in table.items():
        if dest in given:
            raise ValueError(f"{given[dest]}: does not apply to --task {task}{' on --data' if on_text else ''} "
                             f"({why}); drop it")
    if getattr(args, "backend", None) == "torch" and "data_parallel" in given:
        raise ValueError(f"{given['data_parallel']}: the numpy backend's thread-level data "
                         f"parallelism; with --backend torch use --nproc N (DistributedDataParallel)")
    if getattr(args, "backend", None) == "torch" and "no_fast_elementwise" in given:
        raise ValueError(f"{given['no_fast_elementwise']}: the numpy backend's fast elementwise "
                         f"passes; --backend torch has none to turn off")


class _Unset(list):
    """The marker: a list, so that `action="append"` copies it (a new object: given)."""


_UNSET = _Unset()


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:                       # the one _SubParsersAction
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(command)
    return None


def given_options(parser: argparse.ArgumentParser, argv: list[str], command: str) -> dict:
    """{dest: option string} of the options of `command` present on the command line.

    Parsed again by the command's own parser into a namespace pre-filled with a marker: argparse
    sets only the options it sees, so abbreviations (`--ta`) and `--opt=value` count too."""
    sub = _subparser(parser, command)
    if sub is None or command not in argv:
        return {}
    rest = argv[argv.index(command) + 1:]                # the top-level parser has no other args
    counted = [a for a in sub._actions if isinstance(a, argparse._CountAction)]
    ns = argparse.Namespace(**{a.dest: (None if a in counted else _UNSET) for a in sub._actions})
    try:
        sub.parse_known_args(rest, ns)                   # parsed once already: cannot fail here
    except (SystemExit, Exception):  # noqa: BLE001 - never turn a valid command into a crash
        return {}
    names = {a.dest: (a.option_strings or [a.dest])[-1] for a in sub._actions}
    unset = {a.dest for a in counted if getattr(ns, a.dest) is None}
    return {d: names[d] for d, v in vars(ns).items()
            if v is not _UNSET and d not in unset and d in names}


def refuse_fixed_on_resume(args) -> None:
    """ValueError naming the first task/model/optimisation option given together with --resume."""
    given = getattr(args, "given", {}) or {}
    clash = [given[d] for d in FIXED_ON_RESUME if d in given]
    if clash:
        raise ValueError(f"{clash[0]}: not allowed with --resume {args.resume}: a resumed run keeps "
                         f"the task, model and optimisation settings saved in the checkpoint "
                         f"(got {', '.join(clash)}); drop them, or start a new run without "
                         f"--resume")


def available_cpus() -> int:
    """Logical CPUs this process may run on (its affinity mask where the OS has one)."""
    have = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return int(have or 1)


def check_threads(args) -> None:
    """`--threads N` at most the CPUs this process may use: more only oversubscribes the cores
    (a typo like --threads 100000 made a 0.1 s run take minutes)."""
    n = getattr(args, "threads", None)
    if n is not None and n > available_cpus():
        raise ValueError(f"--threads: expected at most {available_cpus()} (the logical CPUs "
                         f"available to this process), got {n}")


def check_nproc(args) -> None:
    """`--nproc N` within what the machine has: CPU cores for --device cpu, GPUs for cuda."""
    n = args.nproc
    if n <= 1:
        return
    device = str(getattr(args, "device", "cpu") or "cpu")
    if device.startswith("cuda"):
        import torch
        have, what = torch.cuda.device_count(), "CUDA devices"
    else:
        have, what = available_cpus(), "CPU cores available to this process"
    if n > have:
        raise ValueError(f"--nproc: expected at most {have} ({what}), got {n}")


class Terminated(KeyboardInterrupt):
    """SIGTERM turned into an exception, so that a run stops the way Ctrl-C stops it: temp files
    removed (npformer.io.files.atomic_write cleans up on any exception), a one-line message, no traceback."""


@contextlib.contextmanager
def sigterm_as_interrupt():
    """While the block runs, SIGTERM raises Terminated (restored afterwards; main thread only)."""
    def handler(signum, frame):
        raise Terminated()
    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError, AttributeError):        # not the main thread, or no SIGTERM
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted_message(args, exc: BaseException) -> tuple[str, int]:
    """(the line to print, the exit status) for Ctrl-C (130) or SIGTERM (143)."""
    what, code = ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else \
        ("interrupted (Ctrl-C)", 130)
    from npformer.io.committed import was_written
    save = getattr(args, "save", None)
    if getattr(args, "saved", None) or (getattr(args, "command", None) == "train" and was_written(save)):
        what += f": the checkpoint {getattr(args, 'saved', None) or save} was saved complete before the interruption"
    elif getattr(args, "command", None) == "train" and save:
        kept = "an earlier file there is unchanged" if os.path.exists(save) else "nothing was saved"
        what += (f": the run stopped before its end, so --save {save} was not written ({kept}); "
                 f"run again, or save shorter runs and continue them with --resume")
    for option, dest, done in (("--save-pretrained", "save_pretrained", "saved_pretrained"),
                               ("--out", "out", "written_out")):
        out = getattr(args, dest, None) if getattr(args, "command", None) in ("train", "generate") \
            else None
        if not isinstance(out, str):
            continue
        if getattr(args, done, None) or (dest == "out" and was_written(out)):
            what += f"; {option} {out} was written complete before the interruption"
        else:
            kept = "what was there before is unchanged" if os.path.exists(out) else "nothing was written"
            what += f"; {option} {out} was not written ({kept})"
    return what, code


def check_distinct_outputs(args) -> None:
    """`train --save X --plot X`: the plot folder would be created at X and the checkpoint, written
    after the whole run, would then fail on it. Refused before any folder is made."""
    save, plot = getattr(args, "save", None), getattr(args, "plot", None)
    if save and plot and os.path.abspath(save) == os.path.abspath(plot):
        raise ValueError(f"--plot {plot}: expected a folder other than --save's file path, got the "
                         f"same path")
    refuse_outputs_over_inputs(args)


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it (both resolved, symbolic links followed)."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _read_by(out: str, data: str) -> bool:
    """Whether the existing path `out` is text the corpus of `--data data` reads: that file itself,
    or a text file under that folder (a checkpoint or a picture there is skipped as binary)."""
    from npformer.data.text_files import TextFileError, read_text_file
    if not os.path.isdir(data):
        return os.path.realpath(out) == os.path.realpath(data)
    if not (os.path.isfile(out) and _inside(out, data)):
        return False
    try:
        read_text_file(out)
    except TextFileError:
        return False
    return True


def refuse_outputs_over_inputs(args, data=None) -> None:
    """An output path (--save, --save-pretrained, --plot, generate's --out) that is one of the run's
    inputs (a --data file, a text file under a --data folder, the --init folder or a file in it)
    would replace what the run reads, even with --overwrite (meant for an earlier output): refused
    before any work. `--resume X --save X --overwrite` stays allowed (continuing a run in place); on
    --resume and in generate, `data` is the list of files the checkpoint's task reads."""
    init = getattr(args, "init", None)
    for option in ("save", "save_pretrained", "plot", "out"):
        out = getattr(args, option, None)
        if not out or not os.path.exists(out):
            continue
        hit = next((f"--data {d}" for d in data or getattr(args, "data", None) or []
                    if os.path.exists(d) and _read_by(out, d)), None)
        if hit is None and init and os.path.isdir(init) and _inside(out, init):
            hit = f"--init {init}"
        if hit:
            raise ValueError(f"--{option.replace('_', '-')} {out}: is an input of this run ({hit}); "
                             f"expected an output path that replaces none of the files training "
                             f"reads (--overwrite replaces earlier outputs only)")
