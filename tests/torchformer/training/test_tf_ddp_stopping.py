"""`npformer train --backend torch --nproc 2` stops like a one-process run: SIGTERM and Ctrl-C end
every worker (nothing left holding the caller's output) with one line and status 143 / 130; a worker
killed from outside ends the run with one line; a `--nproc` checkpoint evaluates and resumes."""
import os
import signal
import subprocess
import sys
import time

import pytest

from tests import paths

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():  # pragma: no cover - depends on the torch build
    pytest.skip("torch.distributed is not available", allow_module_level=True)

ROOT = str(paths.ROOT)
TINY = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1", "--batch-size", "8",
        "--eval-size", "20", "--no-progress"]


def _start(tmp_path, *extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    # Ctrl-C's default action in the launcher, as a terminal gives it: a test runner started in the
    # background by a shell without job control passes SIGINT on ignored, and the launcher (rightly)
    # keeps a Ctrl-C its caller ignores ignored
    return subprocess.Popen([sys.executable, "-m", "npformer", "train", "--backend", "torch",
                             "--nproc", "2", *TINY, *extra], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


def _wait_training(p) -> str:
    """Read the launcher's stdout until rank 0 says it trains (the workers have joined)."""
    seen = ""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        seen += line
        if "processes on cpu" in line:
            time.sleep(1.0)                                    # well into the training loop
            return seen
        if not line and p.poll() is not None:
            break
    p.kill()
    pytest.fail(f"the workers never started training: {seen}{p.stderr.read()}")


def _finish(p, timeout=60):
    """stdout, stderr once every holder of the pipes has closed them (orphans would hang here)."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("a process still held the launcher's stdout/stderr: an orphaned worker")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:                       # a zombie is dead
        return f.read().split(") ")[-1][0] != "Z"


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("sig, code, said", [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                             (signal.SIGINT, 130, "interrupted (Ctrl-C)")])
def test_signal_to_the_launcher_ends_every_worker_with_one_line(tmp_path, sig, code, said):
    p = _start(tmp_path, "--steps", "1000000", "--save", "run.npz")
    _wait_training(p)
    workers = _children(p.pid)
    assert len(workers) == 2
    p.send_signal(sig)
    _, err = _finish(p)
    assert p.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "--save run.npz was not written" in lines[0], err
    assert not any(_alive(w) for w in workers)
    assert not os.path.exists(tmp_path / "run.npz")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_a_killed_worker_ends_the_run_with_one_line(tmp_path):
    p = _start(tmp_path, "--steps", "1000000")
    _wait_training(p)
    workers = _children(p.pid)
    os.kill(workers[1], signal.SIGKILL)
    _, err = _finish(p)
    assert p.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "worker 1 of 2 was killed by SIGKILL" in lines[0], err
    assert not _alive(workers[0])


def test_a_nproc_checkpoint_evaluates_and_resumes(tmp_path):
    p = _start(tmp_path, "--steps", "3", "--save", "ddp.npz", "--examples", "0")
    out, err = _finish(p, timeout=240)
    assert p.returncode == 0, err
    assert "saved checkpoint ddp.npz (step 3" in out
    from npformer.cli.main import main
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["evaluate", "ddp.npz", "--eval-size", "10", "--examples", "0",
                     "--backend", "torch"]) == 0
        assert main(["train", "--resume", "ddp.npz", "--backend", "torch", "--steps", "2",
                     "--eval-size", "10", "--examples", "0", "--no-progress",
                     "--save", "more.npz"]) == 0
    finally:
        os.chdir(cwd)
    from npformer.io.checkpoint import load_checkpoint
    assert load_checkpoint(str(tmp_path / "more.npz")).step == 5


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_workers_of_a_launcher_killed_with_sigkill_do_not_train_on(tmp_path):
    """SIGKILL cannot be caught by the launcher: the workers notice it is gone and exit."""
    p = _start(tmp_path, "--steps", "1000000")
    _wait_training(p)
    workers = _children(p.pid)
    p.kill()
    _finish(p)
    deadline = time.monotonic() + 20
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, "workers trained on after their launcher was killed"
