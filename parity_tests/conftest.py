"""pytest setup for the parity suite: Hypothesis profile, and a fresh case description per test.

NPFORMER_HYPOTHESIS_PROFILE=dev|ci|thorough picks the profile (parity_tests/harness/profiles.py).
"""
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
