"""The grading oracle: check anyone's attention, layers or model against npformer.

    npformer-oracle check mha student.py:MultiHeadAttention --mask-convention keep
    python -m parity_tests.oracle check sdpa student.py:attention --report out.json

From Python:

    from parity_tests.oracle import check
    result = check("mha", "student.py:MultiHeadAttention", mask_convention="keep", examples=50)
    result.verdict, result.exit_code, result.to_dict()

See docs/ORACLE.md. Where the code lives:

    core/        the parent's side: entry (check), runner (the Hypothesis search), judge (one
                 example compared), verdicts, backend (talks to a submission, validates every
                 reply), completeness, diagnose, structural, describe, report, options
    components/  what is drawn and how the reference computes it (serves both sides)
    sandbox/     one worker process per submission, plain data across
    reading/     the worker's side, reading a submission: loader, adapters (construct, execute,
                 slots, resolver, naming, signatures, trees, adapter_hooks, calls), findings (what
                 was found, typed; the parent keeps what it can check) and recognise/ (one file
                 per way of writing code, registered in recognise/__init__.py)
    grading/     a class: spec, batch (grade), gradescope, submissions, fixtures (export, verify)
    cli.py       npformer-oracle / python -m parity_tests.oracle

Importing this package imports nothing heavy: `check`, `Options`, ... load on first use, so a
missing optional dependency (hypothesis) is reported by the CLI with an install hint.
"""
__version__ = "0.1.0"

__all__ = ["CheckResult", "Limits", "Options", "VERDICTS", "check", "export", "grade", "gradescope_results",
           "json_report", "render_text", "verify", "__version__"]

_LAZY = {"Options": "core.options", "VERDICTS": "core.verdicts", "CheckResult": "core.verdicts",
         "check": "core.entry", "Limits": "sandbox.limits", "render_text": "core.report",
         "json_report": "core.report", "gradescope_results": "core.report", "grade": "grading.batch",
         "export": "grading.fixtures", "verify": "grading.fixtures"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
