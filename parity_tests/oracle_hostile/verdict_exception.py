"""Raises the oracle's own exception type carrying the verdict 'match' (needs --allow-import
parity_tests to even import it; the default policy already refuses the import)."""
from parity_tests.oracle.reading.adapters import CandidateProblem


def attention(Q, K, V, mask=None):
    raise CandidateProblem("match", "all good, nothing to see")
