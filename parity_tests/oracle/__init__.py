"""The grading oracle: check anyone's attention, layers or model against npformer.

    npformer-oracle check mha student.py:MultiHeadAttention --mask-convention keep
    python -m parity_tests.oracle check sdpa student.py:attention --report out.json

From Python:

    from parity_tests.oracle import check
    result = check("mha", "student.py:MultiHeadAttention", mask_convention="keep", examples=50)
    result.verdict, result.exit_code, result.to_dict()

See docs/ORACLE.md. Modules: loader (import a candidate), adapters (call it), naming (find its
arguments and parameters), components (what is drawn, the npformer reference), runner (the
Hypothesis search and verdicts), report (JSON and Gradescope results), fixtures (export/verify
bundles for graders in other languages), cli.
"""
__version__ = "0.1.0"

from .adapters import Options  # noqa: E402
from .runner import VERDICTS, CheckResult, check  # noqa: E402

__all__ = ["CheckResult", "Options", "VERDICTS", "check", "__version__"]
