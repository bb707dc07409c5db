"""Code written for a newer Python than the oracle's: the load error says which version the code
needs and what it used (a `typing` name, a `type X = ...` statement); an import or syntax error
that no Python version would accept is never blamed on the version."""
from __future__ import annotations

import sys

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.python_version import newer_python_hint

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="the names exist from 3.12")
NEEDS = "the code needs Python 3.12 or newer"


def test_a_typing_name_of_a_newer_python_is_named():
    res = check("layernorm", f"{candidate_path('newer_python_names.py')}:Norm", examples=3)
    assert res.verdict == "load_error", render_text(res)
    assert NEEDS in render_text(res) and "`typing.override`" in render_text(res)


def test_a_misspelt_name_is_not_blamed_on_the_version():
    res = check("layernorm", f"{candidate_path('newer_python_misspelt.py')}:Norm", examples=3)
    assert res.verdict == "load_error", render_text(res)
    assert "needs Python" not in render_text(res)


@pytest.mark.parametrize("source, blamed", [
    ("type Width = int\n", True),
    ("class Box[T]:\n    pass\n", True),
    ("def f(:\n    pass\n", False),
])
def test_a_syntax_of_a_newer_python_is_named(tmp_path, source, blamed):
    (tmp_path / "helper.py").write_text(source)
    (tmp_path / "norm.py").write_text(
        "import helper\nimport numpy as np\n\n\ndef norm(x, eps=1e-5):\n"
        "    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)\n")
    res = check("layernorm", f"{tmp_path / 'norm.py'}:norm", examples=3)
    assert res.verdict == "load_error", render_text(res)
    assert (NEEDS in render_text(res)) == blamed, render_text(res)


def test_names_this_python_has_are_not_blamed():
    assert newer_python_hint("ImportError", "cannot import name 'Self' from 'typing'") is None
    assert newer_python_hint("ImportError", "cannot import name 'batched' from 'itertools'")
    assert newer_python_hint("ImportError", "cannot import name 'foo' from 'typing'") is None
