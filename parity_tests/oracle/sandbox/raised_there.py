"""Which exceptions of a run in another mode leave that run uncompared.

Some modes (the memory layouts of sandbox/layout_modes.py, a constructor flag's other value or
`is_causal=True` in sandbox/modes.py) do not compare a candidate that raises there: raising on a
non-contiguous input (a torch `.view`) or at a flag's other value fails loudly wherever it happens.
What the harness raises about the candidate's answer is no such thing: an input changed in place,
an output detached from autograd or of the wrong type, a returned array the oracle cannot read.
Each is silent where the candidate is used, and has a verdict of its own in the main run; left
uncompared in a mode, a wrong answer made together with one of them went unseen
(`oracle_hostile/silent_in_modes.py`). Those keep their verdict in every mode, but for an output
that needs no gradient there (detached): its forward's values are compared, its gradients as ones
that never arrived, zeros (`zero_gradients`), as the main run treats them. A `missing_gradient`
verdict stands for a search that compared everything to its end (core/groups.py gives no partial
credit search after one), so raised from a mode it would have left that run's wrong output unseen
and the output scored.
"""
from __future__ import annotations

import os
import traceback

import numpy as np

from ..components import REF, Case
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


def no_gradient(exc: BaseException) -> bool:
    """The harness found the output needs no gradient (detached, or computed outside autograd)."""
    return isinstance(exc, CandidateProblem) and exc.verdict == "missing_gradient"


def zero_gradients(ad, case: Case, skip=()) -> dict:
    """The candidate's forward values on `case` (no backward), and every gradient the run would
    have answered, of the float inputs but `skip` and of the mapped parameters, as zeros."""
    inst = ad.instantiate(case)
    got = dict(ad.execute(inst, case, grad=False).values)
    dtype = ad.opts.dtype
    got.update({f"grad_input:{n}": np.zeros(a.shape, dtype=dtype) for n, a in case.inputs.items()
                if a.dtype == REF and n not in skip})
    got.update({f"grad_param:{r}": np.zeros(case.params[r].shape, dtype=dtype)
                for r, e in inst.entries.items() if e.cand is not None and r in case.params})
    return got
