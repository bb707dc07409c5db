"""`npformer-oracle list | head -2`: when the program reading stdout stops early, the oracle's
command stops quietly with the status of a program killed by SIGPIPE (141), as `npformer` does,
not "cannot read or write: Broken pipe" and status 2; a broken pipe elsewhere is still one line."""
import os
import subprocess
import sys

import pytest

from parity_tests.oracle import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


def test_a_closed_stdout_pipe_ends_the_oracle_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)                                   # nobody will read: the first write breaks
    try:
        done = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "list"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": ROOT}, timeout=300)
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


def test_a_broken_pipe_elsewhere_is_still_one_error_line(monkeypatch, capsys):
    def breaks(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "cmd_list", breaks)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["npformer-oracle: error: cannot read or write: Broken pipe"]
