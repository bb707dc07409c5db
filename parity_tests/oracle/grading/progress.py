"""The progress of a `grade` run on stderr: submissions done of the total, with tqdm's rate and
time left when tqdm is installed."""
from __future__ import annotations

import sys


class Progress:
    """tqdm when installed, else one updating line on stderr."""

    def __init__(self, total: int, quiet: bool = False):
        self.total, self.done, self.quiet, self.bar = total, 0, quiet, None
        if not quiet:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="submission", file=sys.stderr)
            except ModuleNotFoundError:
                pass

    def step(self, label: str) -> None:
        self.done += 1
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(label[:30])
            self.bar.update(1)
        else:
            print(f"\rgraded {self.done}/{self.total} {label[:30]:30s}", end="", file=sys.stderr,
                  flush=True)

    def more(self, n: int) -> None:
        self.total += n
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif not self.quiet:
            print(file=sys.stderr)
