"""Partial credit that the search has earned: each quantity group (output, attention weights,
input gradients, parameter gradients) other than the one holding the first difference, judged by
a search of its own (parent side).

The main search stops at the first quantity out of tolerance and shrinks that example to the
smallest one. The other groups were then compared only on the examples before it and on the
shrunk counterexample, often a single example with one query and one key, where attention weights
are all 1 and many gradients are 0: code wrong everywhere but there scored those groups. So,
when scores per group are asked for (`check(..., score_groups=True)`, the command line's
`--results`), every other group gets a search comparing that group alone, with the same seed,
examples and structural cases, and passes only when that search matches:

    res.group_searches = follow_up(res, search)   # search(frozenset({group})) -> CheckResult

Without it (a plain `check`), report.gradescope_tests scores every group but the ones the whole
search compared as "not reached".
"""
from __future__ import annotations

from typing import Callable

from .verdicts import CheckResult

GROUP_ORDER = ("output", "attention weights", "input gradients", "parameter gradients")

# failing verdicts decided once the search ran to its end (every group compared on every example),
# when no example is named
COMPLETE_SEARCH = ("missing_gradient", "incomplete")


def group_of(key: str) -> str:
    if key == "output":
        return "output"
    if key == "attention_weights":
        return "attention weights"
    return "input gradients" if key.startswith("grad_input:") else "parameter gradients"


def needs_follow_up(res: CheckResult) -> bool:
    """A failing search that stopped on an example (a `missing_gradient` the worker met midway,
    an output detached on some inputs only, too: the examples after it were never compared)."""
    return res.exit_code == 1 and (res.verdict not in COMPLETE_SEARCH or res.example is not None)


def follow_up(res: CheckResult, search: Callable[[frozenset], CheckResult]) -> dict[str, dict]:
    """{group: {"status": "passed" | "failed", "verdict", "examples"}} for every group the
    candidate provides other than the failing one, each from a search comparing that group
    only. A search that stops for any other reason (nondeterminism, a crash, a timeout), or in
    which the group was returned on some examples only, fails it."""
    if not needs_follow_up(res):
        return {}
    failing = group_of(res.quantity) if res.quantity else "output"
    provided = {group_of(k) for k in list(res.quantities) + list(res.checked)}
    out = {}
    for group in GROUP_ORDER:
        if group == failing or group not in provided:
            continue
        alone = search(frozenset({group}))
        partial = any(k in alone.not_checked for k in alone.checked if group_of(k) == group)
        out[group] = {"status": "passed" if alone.exit_code == 0 and not partial else "failed",
                      "verdict": alone.verdict, "examples": alone.examples_run,
                      "partial": partial}
    return out
