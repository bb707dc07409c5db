"""The right party blamed: a failure the submission causes is its verdict (load_error /
interface_error / wrong_type) with one line saying why, never oracle_error or the oracle's
traceback: a parse bomb, a constructor reading an attribute the oracle's config object lacks, a
missing file, an output the oracle cannot read (a tensor without values).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from parity_tests.oracle import check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def parse_bomb(folder) -> str:
    """One expression nested 200 000 unary minus signs deep (the oracle's own scan of the source
    used to fail with MemoryError: oracle_error). Written at test time, not kept in the
    repository: linters that parse every file would overflow their stack on it."""
    path = folder / "attention.py"
    path.write_text("x = " + "-" * 200_000 + "1\n\n\ndef attention(Q, K, V, mask=None):\n"
                    "    return Q, None\n")
    return f"{path}:attention"


def test_a_parse_bomb_is_the_submissions_load_error(tmp_path):
    res = check("sdpa", parse_bomb(tmp_path), examples=2)
    assert res.verdict == "load_error", (res.verdict, res.message)
    assert "nested too deeply" in res.message


def test_a_constructor_reading_a_missing_config_attribute_is_an_interface_error():
    pytest.importorskip("torch")
    res = check("mha", os.path.join(HOSTILE, "config_missing_attribute.py:MultiHeadAttention"),
                examples=2)
    assert res.verdict == "interface_error", (res.verdict, res.message)
    assert "flux_capacitance" in res.message


def test_a_missing_file_is_one_line_without_a_traceback(tmp_path):
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        str(tmp_path / "nothere.py") + ":attention", "--examples", "2"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 2
    assert "does not exist" in p.stdout and "Traceback" not in p.stdout + p.stderr
    assert 'File "' not in p.stdout


def test_an_output_without_values_is_the_submissions_wrong_type():
    # a tensor on the meta device: the oracle's reader raised on it (oracle_error before)
    pytest.importorskip("torch")
    res = check("sdpa", os.path.join(HOSTILE, "meta_output.py:attention"), examples=2)
    assert res.verdict == "wrong_type", (res.verdict, res.message)
    assert "meta tensor" in res.message
