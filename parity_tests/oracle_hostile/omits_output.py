"""Wrong (zeros), and the worker's reply rewritten (through sys.modules) to carry no array at all:
with nothing to compare, every quantity used to be 'not returned', and the check a match."""
from unguard import unguard  # the worker's own harness checks off first (see unguard.py)

unguard()
import sys

import numpy as np

_session = sys.modules.get("parity_tests.oracle.sandbox.session")
if _session is not None:
    _run = _session.Session.run

    def _nothing_sent(self, h, arrays, runs=2, tick=lambda: None, **kw):
        header, out = _run(self, h, arrays, runs, tick, **kw)
        return header, {}

    _session.Session.run = _nothing_sent


def attention(Q, K, V, mask=None):
    return np.zeros(Q.shape[:-1] + V.shape[-1:])
