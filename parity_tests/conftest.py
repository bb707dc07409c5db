"""pytest setup for the parity suite: Hypothesis profile and deterministic torch.

NPFORMER_HYPOTHESIS_PROFILE=dev|ci|thorough picks the profile (parity_tests/harness/profiles.py).
"""
from parity_tests.harness.profiles import load_profile

PROFILE = load_profile()


def pytest_report_header(config):
    return f"hypothesis profile: {PROFILE} (set NPFORMER_HYPOTHESIS_PROFILE=dev|ci|thorough)"
