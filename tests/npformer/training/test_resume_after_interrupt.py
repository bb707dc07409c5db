"""Ctrl-C (a real SIGINT) or SIGTERM in the middle of `npformer train --resume run.npz --save run.npz
--overwrite`: the run stops with one line, run.npz is left byte for byte as it was with no temp file
beside it, and resuming it again gives exactly the weights and optimizer state of a run that was
never interrupted (what the README and docs/reliability/interrupts-and-resume.md promise: Ctrl-C
saves nothing, the last saved run continues bit for bit). Regression guard, run as a user would: a
separate process and a real signal, sent once the training loop is running.
"""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from npformer.io.checkpoint import load_checkpoint
from tests.npformer.conftest import tiny_train_args

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "npformer", *args]


def run(args: list[str], cwd) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]


def steps_reported(err: bytes) -> int:
    """The last step count the progress display wrote ("train: ... 7/100000004 [...")."""
    counts = re.findall(rb"(\d+)/\d+ ", err)
    return int(counts[-1]) if counts else 0


def interrupt_once_training(args: list[str], cwd, sig, after_step: int) -> tuple[int, str]:
    """Start `args`, wait until its progress display reports a step after `after_step`, send `sig`,
    return (status, stderr). SIGINT is restored to its default in the child (a background shell
    may ignore it)."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    err = b""
    deadline = time.monotonic() + 240
    try:
        os.set_blocking(proc.stderr.fileno(), False)
        while steps_reported(err) <= after_step and proc.poll() is None:
            assert time.monotonic() < deadline, err[-2000:]
            chunk = proc.stderr.read()
            err += chunk or b""
            time.sleep(0.05)
        assert proc.poll() is None, f"the run ended before the signal: {err[-2000:]!r}"
        proc.send_signal(sig)
        os.set_blocking(proc.stderr.fileno(), True)
        err += proc.stderr.read()
        return proc.wait(timeout=60), err.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def state(path) -> tuple[dict, dict, int]:
    ck = load_checkpoint(path)
    return ck.state, ck.optimizer_state, ck.step


@pytest.mark.parametrize("sig, status, word", [(signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                               (signal.SIGTERM, 143, "terminated (SIGTERM)")],
                         ids=["Ctrl-C", "SIGTERM"])
def test_interrupted_resume_keeps_the_checkpoint_and_resuming_again_matches(tmp_path, sig, status,
                                                                             word):
    run(cli("train", *tiny_train_args(steps=4), "--seed", "5", "--dropout", "0.1",
            "--save", "run.npz"), tmp_path)
    before = (tmp_path / "run.npz").read_bytes()
    more = ["--eval-size", "4", "--examples", "0", "--no-progress"]
    run(cli("train", "--resume", "run.npz", "--steps", "6", "--save", "ref.npz", *more), tmp_path)

    code, err = interrupt_once_training(
        cli("train", "--resume", "run.npz", "--steps", "100000000", "--save", "run.npz",
            "--overwrite", "--eval-size", "4", "--examples", "0"),
        tmp_path, sig, after_step=6)
    last = err.strip().splitlines()[-1]
    assert code == status and word in last and "Traceback" not in err, err[-2000:]
    assert "--save run.npz was not written (an earlier file there is unchanged)" in last
    assert (tmp_path / "run.npz").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ref.npz", "run.npz"]         # no temp file

    run(cli("train", "--resume", "run.npz", "--steps", "6", "--save", "again.npz", *more), tmp_path)
    (w_ref, o_ref, s_ref), (w, o, s) = state(tmp_path / "ref.npz"), state(tmp_path / "again.npz")
    assert s == s_ref == 10
    for k in w_ref:
        assert np.array_equal(w[k], w_ref[k]), k
    for p, entries in o_ref["state"].items():
        for k, v in entries.items():
            assert np.array_equal(np.asarray(o["state"][p][k]), np.asarray(v)), (p, k)
