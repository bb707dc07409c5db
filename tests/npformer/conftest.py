"""Shared pieces of the npformer tests.

`tiny_train_args(...)` is the `npformer train` option list of a model small enough to train in a
fraction of a second (d_model 8, 2 heads, d_ff 16, one layer, a few steps on a small task), used by
every test that runs the command line. Tests import it:
`from tests.npformer.conftest import tiny_train_args`. `text_lm_args(context)` and
`train_text_lm(folder)` are the same for a character-level language model of TEXT_CORPUS, for the
tests of `npformer generate` on your own text. `twins(npformer_object, "torchformer.module:name")`
is the parametrize list of a test run on both twins alike (torchformer's left out when torch is not
installed).
"""
from __future__ import annotations

__all__ = ["tiny_train_args", "TEXT_CORPUS", "text_lm_args", "train_text_lm", "twins"]


def twins(npformer_object, torchformer_name: str) -> list:
    """[("npformer", npformer_object), ("torchformer", the object `module:name` names)], the
    second only where torchformer imports (numpy-only installs)."""
    import importlib
    out = [("npformer", npformer_object)]
    module, _, name = torchformer_name.partition(":")
    try:
        found = importlib.import_module(module)
    except ImportError:
        return out
    return out + [("torchformer", getattr(found, name) if name else found)]

TEXT_CORPUS = "the cat sat on the mat.\nthe dog ran to the log.\n" * 40    # letters . and \n only


def tiny_train_args(*, steps: int | None = 1, batch_size: int | None = 4,
                    eval_size: int | None = 4, examples: int | None = 0,
                    max_len: int | None = 3, num_symbols: int | None = 4, d_ff: int = 16,
                    progress: bool = False, **more) -> list[str]:
    """Options for a tiny `npformer train` run. A keyword set to None leaves that option out (the
    command's default applies); `more` adds options (`task="lm"` -> `--task lm`, `norm_first=True`
    -> `--norm-first`), after the model and run sizes."""
    opts = {"d_model": 8, "heads": 2, "d_ff": d_ff, "layers": 1, "steps": steps,
            "batch_size": batch_size, "eval_size": eval_size, "max_len": max_len,
            "num_symbols": num_symbols, "examples": examples, **more}
    argv = []
    for key, value in opts.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        argv += [flag] if value is True else [flag, str(value)]
    return argv if progress else argv + ["--no-progress"]


def run_cli(argv, capsys):
    """(exit status, stdout, stderr) of `npformer argv` run in-process; argparse's SystemExit (--help: 0,
    a usage error: 2) is read as the exit status."""
    from npformer.cli.main import main
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def text_lm_args(context: int = 24, steps: int = 2) -> list[str]:
    """Options of a tiny character-level `npformer train --task lm` run (d_model 16, one layer)."""
    return ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1", "--context",
            str(context), "--batch-size", "4", "--steps", str(steps), "--no-progress", "--threads", "1"]


def train_text_lm(folder, context: int = 24, steps: int = 2) -> str:
    """Path of a checkpoint trained by `npformer train --task lm` on TEXT_CORPUS, written in `folder`."""
    from npformer.cli.main import main
    corpus, save = folder / "corpus.txt", str(folder / "lm.npz")
    corpus.write_text(TEXT_CORPUS, encoding="utf-8")
    assert main(["train", "--task", "lm", "--data", str(corpus), *text_lm_args(context, steps),
                 "--save", save]) == 0
    return save
