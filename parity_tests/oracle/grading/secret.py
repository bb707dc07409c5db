"""A course's grading secret: the same drawn values at every regrade of the same submission.

Each check mixes a secret salt into the array values it draws (core/upstream.secret_seed, round 8),
so code holding answers for the search's inputs finds none; without a course secret the salt is new
at every run, and two runs of `grade` (a Gradescope regrade) may draw different values. With
`--secret-file PATH`, each check's salt is derived here, in the parent, from the file's bytes, the
check's name, public or hidden, and the SHA-256 fingerprint of the submission's own files
(batch.fingerprint): the same files give the same values at every run, anywhere; any change to the
files gives new ones, so a submission that learned its inputs (through a message it raised) cannot
answer them in the next upload; two courses with different secrets draw different values.

The secret is read only by the parent: it is never sent to a worker, never placed in Options (which
the reports echo), never printed, never written into results, reports, the gradebook or the
summary; a salt cannot be turned back into it (a keyed BLAKE2b).
"""
from __future__ import annotations

import hashlib
import os
import stat

MIN_BYTES, MAX_BYTES = 16, 4096


def read_secret(path: str, flag: str = "--secret-file") -> bytes:
    """The secret's bytes (surrounding whitespace removed); a clear error naming `flag` when the
    file is missing, not a regular file, a link, too short or too long."""
    def fail(expected: str, got: str) -> ValueError:
        return ValueError(f"{flag} {path!r}: expected {expected}, got {got}")
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise fail("an existing file", exc.strerror or "an error") from None
    if stat.S_ISLNK(st.st_mode):
        raise fail("a regular file (a link is not followed)", "a link")
    if not stat.S_ISREG(st.st_mode):
        raise fail("a regular file", "a folder" if stat.S_ISDIR(st.st_mode) else "a special file")
    if st.st_size > MAX_BYTES + 64:
        raise fail(f"at most {MAX_BYTES} bytes", f"{st.st_size} bytes")
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 65).strip()
    if not MIN_BYTES <= len(data) <= MAX_BYTES:
        raise fail(f"{MIN_BYTES} to {MAX_BYTES} bytes of secret (e.g. `python -c \"import secrets; "
                   f"print(secrets.token_hex(32))\" > {os.path.basename(path)}`)",
                   f"{len(data)} bytes")
    return data


def check_salt(secret: bytes, check: str, hidden: bool, fingerprint: str) -> int:
    """The 64-bit salt of one check of one submission (never shown, never sent to the worker)."""
    h = hashlib.blake2b(key=hashlib.sha256(secret).digest(), digest_size=8)
    for part in (b"npformer-oracle check salt", check.encode(), b"hidden" if hidden else b"public",
                 fingerprint.encode()):
        h.update(len(part).to_bytes(4, "little") + part)
    return int.from_bytes(h.digest(), "little")
