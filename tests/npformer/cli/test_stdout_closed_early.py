"""`npformer gradcheck | head -2`: when the program reading stdout stops early, the command stops
quietly with the status of a program killed by SIGPIPE (141), not an error line and status 2; a
broken pipe that is not stdout's is still reported."""
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


def test_a_closed_stdout_pipe_ends_the_command_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)                                   # nobody will read: the first write breaks
    try:
        done = subprocess.run([sys.executable, "-m", "npformer", "gradcheck", "--only", "linear"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


def test_a_broken_pipe_elsewhere_is_still_one_error_line(monkeypatch, capsys):
    from npformer.cli import main as cli

    def breaks(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setitem(cli.COMMANDS, "gradcheck", breaks)
    assert cli.main(["gradcheck"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["npformer gradcheck: error: Broken pipe"]
