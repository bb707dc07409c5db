"""`grade --resume` takes a record of OUT/.partial only when its key matches the run's. The key
holds no signature, so whoever could write OUT/.partial without the course's secret could copy a
real record's key and write full marks beside it; and the key left out the oracle's own source, so
a record graded by an older oracle (before a red-team fix) became credit under a newer one. With a
secret a record is now signed with it (out_folder.record_mac) and the key holds a digest of the
oracle, its harness and the reference (out_folder.oracle_digest)."""
from __future__ import annotations

import json
import os

from parity_tests.oracle.grading import out_folder
from parity_tests.oracle.grading.out_folder import OutFolder, submission_key

SECRET = b"course secret for the resume records"
FILES = {"mha.py": b"class MultiHeadAttention: ...\n"}


def _graded(score: float) -> dict:
    return {"student": "alice", "path": "alice", "score": score, "intact": True, "checks": [
        {"name": "mha", "verdict": "match" if score else "mismatch", "points": score,
         "max_points": 4.0}]}


def _record_path(out) -> str:
    part = os.path.join(out, ".partial")
    return os.path.join(part, next(n for n in os.listdir(part) if n.endswith(".json")))


def test_rows_rewritten_under_a_real_key_are_not_taken(tmp_path):
    out = str(tmp_path / "grades")
    key = submission_key(b"spec", FILES, SECRET)
    OutFolder(out, SECRET).keep(key, _graded(0.0))
    assert OutFolder(out, SECRET).kept({"alice": key})["alice"]["score"] == 0.0   # its own record
    path = _record_path(out)
    with open(path, encoding="utf-8") as fh:
        rec = json.load(fh)
    rec["graded"] = _graded(4.0)                  # full marks written beside the copied key
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(rec, fh)
    assert OutFolder(out, SECRET).kept({"alice": key}) == {}


def test_a_record_without_its_signature_is_not_taken(tmp_path):
    out = str(tmp_path / "grades")
    key = submission_key(b"spec", FILES, SECRET)
    OutFolder(out).keep(key, _graded(4.0))           # written by a run that had no secret to sign with
    assert OutFolder(out, SECRET).kept({"alice": key}) == {}


def test_a_record_of_another_oracle_source_is_not_taken(tmp_path, monkeypatch):
    out = str(tmp_path / "grades")
    monkeypatch.setattr(out_folder, "oracle_digest", lambda: b"an older oracle")
    older = submission_key(b"spec", FILES, SECRET)
    OutFolder(out, SECRET).keep(older, _graded(4.0))
    monkeypatch.undo()
    now = submission_key(b"spec", FILES, SECRET)
    assert now != older
    assert OutFolder(out, SECRET).kept({"alice": now}) == {}
