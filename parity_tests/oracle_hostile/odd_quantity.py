"""Raises the oracle's own exception type, found through sys.modules (no import statement),
naming a 'quantity' that is none of this component's: the parent used to split it into a label
and fail there, ending the check with the CLI's usage error and no report or results written."""
import sys


def attention(Q, K, V, mask=None):
    options = sys.modules.get("parity_tests.oracle.core.options")
    raise options.CandidateProblem("mismatch", "looks like a mismatch", quantity="no colon here")
