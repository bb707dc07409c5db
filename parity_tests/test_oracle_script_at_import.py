"""Files that run a script when imported (a notebook exported as `.py`: model code, then a
training loop and a sampling call at top level, no `__main__` guard). Imported as written they
never finish (TIMEOUT); the oracle now runs them without top-level loops that nothing the file
defines reads and without top-level calls of the file's own functions, and says so. A loop that
fills a table a class reads still runs. Planted bug: MISMATCH."""
from __future__ import annotations

import ast

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def notebook(candidate_file):
    return candidate_file("script_at_import.py")


def test_a_feed_forward_in_a_file_that_trains_at_import_matches(notebook):
    res = check("ffn", f"{notebook}:NotebookFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "runs a script when imported" in render_text(res)
    assert "line(s) 61, 69)" in render_text(res), render_text(res)


def test_a_planted_bug_beside_the_training_script_is_a_mismatch(notebook):
    res = check("ffn", f"{notebook}:NotebookFeedForwardBUG", examples=25)
    assert res.verdict == "mismatch", render_text(res)


def test_a_top_level_loop_that_fills_a_table_a_class_reads_still_runs(notebook):
    res = check("positional", f"{notebook}:NotebookPositions", examples=10, settings={"d_model": 8})
    assert res.verdict == "match", render_text(res)


def test_which_top_level_statements_are_script_code_is_read_from_the_text():
    from parity_tests.oracle.reading.script_code import script_statements

    def left_out(src):
        return [s.lineno for s in script_statements(ast.parse(src))]

    assert left_out("import numpy as np\nlosses = []\ndef train():\n    return 1\n"
                    "for i in range(9):\n    losses.append(np.zeros(i))\ntrain()\nprint(1)\n") == [5, 7]
    # a loop changing what a function reads is kept, and with it nothing is left out
    assert left_out("CACHE = {}\ndef get(k):\n    return CACHE[k]\nfor k in range(3):\n"
                    "    CACHE[k] = k\nget(1)\n") == []
    # a call of a function declaring a global is kept; a file without a loop is unchanged
    assert left_out("N = 0\ndef setup():\n    global N\n    N = 3\nfor _ in range(2):\n    pass\n"
                    "setup()\n") == [5]
    assert left_out("def main():\n    pass\nmain()\n") == []
    # a loop setting attributes (it could patch a class through another name) is kept
    assert left_out("class A:\n    pass\ndef f(self):\n    return 1\nfor c in (A,):\n"
                    "    c.forward = f\n") == []
    assert left_out("class A:\n    pass\nfor c in (A,):\n    setattr(c, 'forward', None)\n") == []
