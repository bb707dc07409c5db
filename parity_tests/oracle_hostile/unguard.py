"""Not a submission: imported first by the hostile files that rewrite the worker's harness, to
switch off the worker's own harness check (sandbox/tamper.py, held by child.py), found
through the garbage collector, with no name of the oracle's written down. Their tests then show
what the parent believes from a submission that has beaten every check made in its process."""
import gc


def unguard() -> None:
    for o in gc.get_objects():
        if type(o).__name__ == "_Checker":
            o.forged = lambda: []
