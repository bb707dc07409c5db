"""Training progress: a tqdm bar when tqdm is installed, else a line rewritten in place on a terminal,
else a plain line every so often (a log file, a pipe)."""
from __future__ import annotations

import sys
import time


class Progress:
    """Training progress on `file` (stderr): steps done, rate, ETA and the latest stats.

    - tqdm installed (pip install tqdm, the [progress] extra): a tqdm bar.
    - else, `file` a terminal: one line rewritten in place with '\\r'.
    - else (a log file, a pipe): one plain line every `log_every` steps.
    `start` is the step a resumed run starts from (the bar shows start..start+total).
    """

    def __init__(self, total: int, enabled: bool = True, log_every: int = 25, desc: str = "train",
                 file=None, start: int = 0, use_tqdm: bool | None = None):
        self.total, self.enabled, self.log_every, self.desc = total, enabled, log_every, desc
        self.start, self.end = start, start + total
        self.file = file if file is not None else sys.stderr
        self.bar = None
        self.tty = bool(getattr(self.file, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._width = 0
        self.hint = ""
        if enabled and use_tqdm is not False:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=self.end, initial=start, desc=desc, file=self.file,
                                dynamic_ncols=True, mininterval=0.5)
            except ImportError:
                self.bar = None
                self.hint = "(pip install tqdm for a tqdm progress bar)"

    def eta_text(self, step: int) -> str:
        done = step - self.start
        el = time.perf_counter() - self.t0
        if done <= 0:
            return "ETA ?"
        left = el / done * (self.end - step)
        return f"{done / max(el, 1e-9):.1f} it/s, ETA {int(left) // 60}:{int(left) % 60:02d}"

    def update(self, step: int, **stats: float) -> None:
        if not self.enabled:
            return
        text = {k: (f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in stats.items()}
        if self.bar is not None:
            self.bar.update(1)
            if step % self.log_every == 0 or step == self.end:
                self.bar.set_postfix(text, refresh=False)
            return
        body = " ".join(f"{k}={v}" for k, v in text.items())
        line = f"{self.desc} step {step}/{self.end} {body} [{self.eta_text(step)}]"
        if self.hint:
            print(self.hint, file=self.file, flush=True)
            self.hint = ""
        if self.tty:
            pad = max(self._width - len(line), 0)
            self._width = len(line)
            print("\r" + line + " " * pad, end="", file=self.file, flush=True)
        elif step % self.log_every == 0 or step == self.end:
            print(line, file=self.file, flush=True)

    def write(self, msg: str) -> None:
        """A message above the bar (printed even when the bar is disabled)."""
        if self.bar is not None:
            self.bar.write(msg, file=self.file)
            return
        if self.tty and self._width:
            print("\r" + " " * self._width + "\r", end="", file=self.file)
            self._width = 0
        print(msg, file=self.file, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.tty and self._width:
            print(file=self.file, flush=True)
            self._width = 0
