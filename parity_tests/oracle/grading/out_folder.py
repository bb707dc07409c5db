"""The `--out` folder of one `grade` run: one run at a time, and the submissions an interrupted run
finished, kept for `--resume`.

    OUT/.grade-lock          held (flock) by the run writing into OUT, removed at its end; the
                             system drops the lock when that process ends, however it ends (a
                             file left by a killed run holds no lock: the next run takes it)
    OUT/.partial/<id>.json   one record per submission graded so far: its student, the key of
                             what it was graded with (the spec's bytes, the submission's bytes,
                             the secret's presence and digest, the oracle's own source) and its
                             graded rows; with a secret, signed with it (record_mac)

The gradebook, the summary and the students' files are written only at the end, as before: an
interrupted run leaves no gradebook, so nothing in OUT looks complete. `--resume` takes a record
only when its key equals the one this run computes (same spec, same files, same secret); any other
submission is graded again. `.partial/` is removed once the gradebook is written.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os

LOCK = ".grade-lock"
PARTIAL = ".partial"


class OutFolder:
    def __init__(self, out_dir: str, secret: bytes | None = None):
        self.out_dir = out_dir
        self.partial = os.path.join(out_dir, PARTIAL)
        self._secret = secret                 # signs the records (record_mac) where there is one
        self._lock_fd: int | None = None
        self._made = False

    def lock(self) -> None:
        """Take OUT's lock, or refuse: another grade run is writing into the same folder (its
        gradebook would have been replaced by this one's, or mixed with it)."""
        import fcntl

        self._made = not os.path.isdir(self.out_dir)
        os.makedirs(self.out_dir, exist_ok=True)
        path = os.path.join(self.out_dir, LOCK)
        for _ in range(10):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ValueError(f"--out {self.out_dir!r}: another grade run is writing into this "
                                 f"folder now; wait for it to end, or choose another --out") from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:                              # not a file the run before us just removed
                self._lock_fd = fd
                return
            os.close(fd)
        raise ValueError(f"--out {self.out_dir!r}: its lock file {LOCK} keeps changing; is "
                         f"another grade run starting there?")

    def unlock(self) -> None:
        """Remove the lock file (nothing is left in OUT but the grades), then drop the lock; an
        OUT this run created and left empty (refused, or stopped before anything) is removed."""
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.out_dir, LOCK))
            os.close(self._lock_fd)               # closing the descriptor drops the flock
            self._lock_fd = None
            if self._made:
                with contextlib.suppress(OSError):
                    os.rmdir(self.out_dir)        # only when empty

    def earlier(self, students) -> list[str]:
        """What an earlier run left in OUT that this one would replace."""
        out = [n for n in ("gradebook.csv", "summary.json")
               if os.path.lexists(os.path.join(self.out_dir, n))]
        return out + [f"{s}/{n}" for s in sorted(students) for n in ("results.json", "report.json")
                      if os.path.lexists(os.path.join(self.out_dir, s, n))]

    def partial_count(self) -> int:
        if not os.path.isdir(self.partial):
            return 0
        return len(self._records())

    def _records(self) -> list[str]:
        """The record files (never a temporary `.tmp-*` one being written)."""
        return sorted(n for n in os.listdir(self.partial)
                      if n.endswith(".json") and not n.startswith("."))

    def clear_partial(self) -> None:
        import shutil

        shutil.rmtree(self.partial, ignore_errors=True)

    def keep(self, key: str, graded: dict) -> None:
        """Record one finished submission (atomically: a stop mid-write leaves the old state)."""
        from ..core.report import json_text, write_json

        name = hashlib.sha256(graded["student"].encode("utf-8", "surrogateescape")).hexdigest()[:32]
        path = os.path.join(self.partial, name + ".json")
        rec = {"student": graded["student"], "key": key, "graded": graded}
        if self._secret is not None:          # signed as it will read back (JSON's own values)
            rec["mac"] = record_mac(self._secret, json.loads(json_text(rec)))
        write_json(path, rec)

    def kept(self, keys: dict[str, str]) -> dict[str, dict]:
        """The recorded submissions whose key matches this run's (student -> graded rows)."""
        found: dict[str, dict] = {}
        if not os.path.isdir(self.partial):
            return found
        for n in self._records():
            try:
                with open(os.path.join(self.partial, n), encoding="utf-8") as fh:
                    rec = json.load(fh)
                s = rec["student"]
                signed = self._secret is None or hmac.compare_digest(
                    str(rec.get("mac", "")), record_mac(self._secret, rec))
                if isinstance(s, str) and keys.get(s) == rec["key"] and isinstance(rec["graded"], dict) \
                        and signed:
                    found[s] = rec["graded"]
            except (OSError, ValueError, KeyError, TypeError):
                continue                          # unreadable or foreign: that student is regraded
        return found


def check_out_dir(out_dir: str) -> None:
    """Refuse, before anything is graded, an --out that is a file or cannot be made writable,
    naming the folder as the user gave it."""
    from ..core.report import check_output_path

    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"--out {out_dir!r}: expected a folder (made when missing), got a file")
    check_output_path(os.path.join(out_dir, "gradebook.csv"), "--out")


def record_mac(secret: bytes, rec: dict) -> str:
    """The signature of a record's student, key and graded rows, keyed by the course's secret: a
    record whose rows were written by anyone who cannot read the secret (its key copied from a
    real record) is not taken."""
    body = json.dumps([rec.get("student"), rec.get("key"), rec.get("graded")], sort_keys=True,
                      allow_nan=True)
    return hmac.new(hashlib.sha256(b"resume-record\0" + secret).digest(), body.encode(),
                    hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=1)
def oracle_digest() -> bytes:
    """The source of what decides a verdict: the oracle, its harness and the reference (npformer),
    every .py file by its path and bytes. A record kept by another version of them (one an
    audit has changed since) is graded again."""
    import npformer

    h = hashlib.sha256()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))        # parity_tests/oracle
    for root in (here, os.path.join(os.path.dirname(here), "harness"),
                 os.path.dirname(os.path.abspath(npformer.__file__))):
        for folder, dirs, names in sorted(os.walk(root)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(".py"):
                    path = os.path.join(folder, n)
                    with open(path, "rb") as fh:
                        h.update(os.fsencode(os.path.relpath(path, root)) + b"\0" + fh.read())
    return h.digest()


def submission_key(spec_bytes: bytes, files: dict[str, bytes], secret: bytes | None) -> str:
    """What a kept grade depends on: the spec, the submission's files (names and bytes), the
    secret (its digest only; without one, draws are new at every run anyway) and the oracle's own
    source (oracle_digest)."""
    h = hashlib.sha256(b"spec\0" + hashlib.sha256(spec_bytes).digest())
    h.update(b"oracle\0" + oracle_digest())
    for name in sorted(files):
        h.update(b"file\0" + os.fsencode(name) + b"\0" + hashlib.sha256(files[name]).digest())
    h.update(b"secret\0" + (b"-" if secret is None else hashlib.sha256(b"resume\0" + secret).digest()))
    return h.hexdigest()
