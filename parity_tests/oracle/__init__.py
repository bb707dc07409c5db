"""The grading oracle: check anyone's attention, layers or model against npformer.

    npformer-oracle check mha student.py:MultiHeadAttention --mask-convention keep
    python -m parity_tests.oracle check sdpa student.py:attention --report out.json

From Python:

    from parity_tests.oracle import check
    result = check("mha", "student.py:MultiHeadAttention", mask_convention="keep", examples=50)
    result.verdict, result.exit_code, result.to_dict()

See docs/ORACLE.md. The parent side (trusted: decides everything): runner (the Hypothesis search),
judge (comparisons), verdicts, backend (talks to a submission, validates every reply), report,
spec/batch/gradescope (class grading), cli. The sandbox (sandbox/: protocol, parent, child, limits,
policy, session): one worker process per submission, plain data across. The child side (runs next
to the submission): loader (import a candidate), adapters (call it), naming (find its arguments and
parameters), calls; components (what is drawn, the npformer reference) serves both sides.

Importing this package imports nothing heavy: `check`, `Options`, ... load on first use, so a
missing optional dependency (hypothesis) is reported by the CLI with an install hint.
"""
__version__ = "0.1.0"

__all__ = ["CheckResult", "Options", "VERDICTS", "check", "__version__"]


def __getattr__(name: str):
    if name == "Options":
        from .adapters import Options
        return Options
    if name in ("VERDICTS", "CheckResult"):
        from . import verdicts
        return getattr(verdicts, name)
    if name == "check":
        from .entry import check
        return check
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
