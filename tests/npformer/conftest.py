"""Shared pieces of the npformer tests.

`tiny_train_args(...)` is the `npformer train` option list of a model small enough to train in a
fraction of a second (d_model 8, 2 heads, d_ff 16, one layer, a few steps on a small task), used by
every test that runs the command line. Tests import it:
`from tests.npformer.conftest import tiny_train_args`.
"""
from __future__ import annotations

__all__ = ["tiny_train_args"]


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
