"""Hypothesis profiles for the parity suite (and the oracle), picked by NPFORMER_HYPOTHESIS_PROFILE.

  dev       a handful of examples per test: a quick local loop (the default outside CI)
  ci        the CI budget: the whole parity suite in a few minutes on 2 cores; derandomized, so a CI
            failure replays with the same command (examples are a function of the test's source);
            the default when the CI environment variable is set
  thorough  many examples, random seeds, for a night run or before a release

NPFORMER_HYPOTHESIS_MAX_EXAMPLES=N overrides the chosen profile's max_examples.
Every profile: deadline=None (torch's first call and BLAS warm-up make timings meaningless),
print_blob=True (failures print an @reproduce_failure line), and the too_slow / data_too_large
health checks off (examples build small models, which is slow by Hypothesis' standards).
Tests that are heavy (whole models) use `scaled(n)` so they take a fraction of the profile's budget.
"""
from __future__ import annotations

import os

from .case import PROFILE_ENV

MAX_EXAMPLES_ENV = "NPFORMER_HYPOTHESIS_MAX_EXAMPLES"
"""Optional override of the loaded profile's max_examples (e.g. a long floor measurement)."""

PROFILES = {
    "dev": dict(max_examples=6, derandomize=False),
    "ci": dict(max_examples=20, derandomize=True),
    "thorough": dict(max_examples=300, derandomize=False),
}


def default_profile() -> str:
    return "ci" if os.environ.get("CI") else "dev"


def register_profiles() -> None:
    """Register the three profiles with Hypothesis (idempotent)."""
    from hypothesis import HealthCheck, settings

    for name, kw in PROFILES.items():
        settings.register_profile(
            name, deadline=None, print_blob=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.filter_too_much],
            **kw)


def load_profile(name: str | None = None) -> str:
    """Register and load `name` (default: $NPFORMER_HYPOTHESIS_PROFILE, else dev / ci under CI)."""
    from hypothesis import settings

    register_profiles()
    name = name or os.environ.get(PROFILE_ENV) or default_profile()
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_ENV}: expected one of {sorted(PROFILES)}, got {name!r}")
    os.environ.setdefault(PROFILE_ENV, name)  # so failure messages print the profile in use
    settings.load_profile(name)
    override = os.environ.get(MAX_EXAMPLES_ENV)
    if override:
        if not override.isdigit() or int(override) < 1:
            raise ValueError(f"{MAX_EXAMPLES_ENV}: expected a positive int, got {override!r}")
        settings.register_profile(f"{name}-{override}", settings(max_examples=int(override)))
        settings.load_profile(f"{name}-{override}")
    return name


def scaled(n_at_ci: int) -> int:
    """Examples for a heavy test: n_at_ci under ci, proportionally more/less under other profiles."""
    from hypothesis import settings

    current = settings.default.max_examples
    return max(2, round(n_at_ci * current / PROFILES["ci"]["max_examples"]))
