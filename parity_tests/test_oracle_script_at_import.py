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
    res = check("ffn", f"{notebook}:NotebookFeedForwardBUG", examples=25, shrink=False)
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


def test_what_could_change_a_definition_through_another_name_is_kept():
    """A file could be wrong as written and right under the oracle if what is left out changed a
    definition by another route: through an alias, a helper function, or by rebinding its name."""
    from parity_tests.oracle.reading.script_code import script_statements

    def left_out(src):
        return [s.lineno for s in script_statements(ast.parse(src))]

    head = "W = {'scale': 1.0}\nclass A:\n    def f(self):\n        return W['scale']\n"
    # a loop changing W through an alias is kept (nothing else to leave out)
    assert left_out(head + "alias = W\nfor _ in range(1):\n    alias['scale'] = 2.0\n") == []
    # a helper that changes W in place, or patches A, runs although an idle loop is left out
    assert left_out(head + "def spoil():\n    W['scale'] = 2.0\nfor _ in range(0):\n    pass\n"
                    "spoil()\n") == [7]
    assert left_out(head + "def g(self):\n    return 2.0\ndef patch():\n    A.f = g\n"
                    "for _ in range(0):\n    pass\npatch()\n") == [9]
    # so does a function calling such a helper, and a loop rebinding a class's own name
    assert left_out(head + "def spoil():\n    W['scale'] = 2.0\ndef main():\n    spoil()\n"
                    "for _ in range(0):\n    pass\nmain()\n") == [9]
    assert left_out(head + "class B(A):\n    pass\nfor _ in range(1):\n    A = B\n") == []
    # a loop calling globals() or exec is kept
    assert left_out(head + "for k in ['W']:\n    globals()[k] = {'scale': 2.0}\n") == []
