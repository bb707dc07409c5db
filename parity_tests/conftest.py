"""pytest setup for the parity suite: Hypothesis profile, a fresh case description per test, and
the path of the oracle's candidate files (`candidate_file` fixture, `candidate_path`).

NPFORMER_HYPOTHESIS_PROFILE=dev|ci|thorough picks the profile (parity_tests/harness/profiles.py).
"""
import os

import pytest

from parity_tests.harness.case import clear_case
from parity_tests.harness.profiles import load_profile

PROFILE = load_profile()


def pytest_report_header(config):
    return f"hypothesis profile: {PROFILE} (set NPFORMER_HYPOTHESIS_PROFILE=dev|ci|thorough)"


@pytest.fixture(autouse=True)
def _fresh_case():
    clear_case()
    yield
    clear_case()


CANDIDATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_candidates")
"""The oracle's own candidate files (test data the oracle checks by file path)."""


def candidate_path(*parts: str) -> str:
    """The path of a file under parity_tests/oracle_candidates/."""
    return os.path.join(CANDIDATES, *parts)


@pytest.fixture
def candidate_file():
    """candidate_file("name.py") -> the path of an oracle candidate file, for `check`."""
    return candidate_path


def oracle_refusal(capsys, argv, *needles) -> str:
    """Run `npformer-oracle ARGV` and require a refusal: exit 2, nothing on stdout, no traceback,
    one error line (after argparse's usage lines, for an option's type error) holding every needle.
    Returns that line."""
    from parity_tests.oracle.cli import main
    try:
        code = main(argv)
    except SystemExit as exc:             # an argparse type error
        code = exc.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and "Traceback" not in err, out + err
    assert len(lines) == 1 or lines[0].startswith("usage:"), err
    assert "error:" in lines[-1], err
    for n in needles:
        assert n in lines[-1], (n, err)
    return lines[-1]
