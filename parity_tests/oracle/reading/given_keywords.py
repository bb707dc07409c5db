"""--init-kwargs checked against the constructor they are given for: a keyword it has no parameter
for (and no **kwargs to take it) is refused by name, with the parameters it does take, before the
oracle builds anything (a misspelt keyword otherwise surfaced as the required argument it was
meant for, "nothing left to pass")."""
from __future__ import annotations

import inspect

from .naming import InterfaceError


def refuse_unknown(what: str, params: list[inspect.Parameter], given: dict) -> None:
    """Raise InterfaceError when `given` (--init-kwargs) names a keyword none of `params` (the
    constructor's, without self) takes; nothing when it takes **kwargs."""
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return
    names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY)]
    unknown = [k for k in given if k not in names]
    if unknown:
        raise InterfaceError(
            f"--init-kwargs gives {', '.join(repr(k) for k in unknown)}, which {what} does not "
            f"take (its keyword parameters: {', '.join(names) or 'none'})")
