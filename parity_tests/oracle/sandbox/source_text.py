"""The submission's source as the parent writes parts of it into reports and reads claims from it
(sandbox/policy.py, sandbox/mask_claims.py), never run. Its text is the submission's: a chain of a
thousand `+` parses (the parser loops) but ast.unparse recurses on it, and a RecursionError there
was the check's ORACLE_ERROR (`oracle_hostile/deep_expression_source.py`)."""
from __future__ import annotations

import ast


def unparsed(node: ast.AST, limit: int = 200) -> str | None:
    """The expression as ast.unparse writes it, cut to `limit`; None where it is nested too deeply
    to write."""
    try:
        return ast.unparse(node)[:limit]
    except (RecursionError, MemoryError, ValueError):
        return None
