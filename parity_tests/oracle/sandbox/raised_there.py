"""Which exceptions of a run in another mode leave that run uncompared.

Some modes (the memory layouts of sandbox/layout_modes.py, a constructor flag's other value or
`is_causal=True` in sandbox/modes.py) do not compare a candidate that raises there: raising on a
non-contiguous input (a torch `.view`) or at a flag's other value fails loudly wherever it happens.
What the harness raises about the candidate's answer is no such thing: an input changed in place,
an output detached from autograd or of the wrong type, a returned array the oracle cannot read.
Each is silent where the candidate is used, and has a verdict of its own in the main run; left
uncompared in a mode, a wrong answer made together with one of them went unseen
(`oracle_hostile/silent_in_modes.py`). Those keep their verdict in every mode.
"""
from __future__ import annotations

import os
import traceback

from ..core.options import CandidateProblem

READERS = ("to_np",)      # the oracle's functions turning a returned array into NumPy (session.py)
_ORACLE = os.path.join("parity_tests", "oracle", "")


def candidate_raised(exc: BaseException) -> bool:
    """True when `exc` is an exception of the candidate's own making (its code, or a library it
    called, raised), which a mode may leave uncompared; False for a verdict the harness raised
    about what the candidate did or returned (CandidateProblem), or the oracle's reader failing on
    a returned array."""
    if isinstance(exc, CandidateProblem):
        return False
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    return not (frames and _ORACLE in frames[-1].filename and frames[-1].name in READERS)
