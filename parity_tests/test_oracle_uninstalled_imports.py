"""A file importing packages the grader does not have (an editor's unused import, a library one
helper needs): each gets a stand-in in the worker, named in the report, so the file's other
components are checked (they were all LOAD_ERROR); a component that uses the missing package is
RAISED naming it, and a planted bug beside the stand-ins stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def ffns(candidate_file):
    return candidate_file("uninstalled_imports.py")


def test_a_feed_forward_beside_uninstalled_imports_matches_and_the_stand_ins_are_named(ffns):
    res = check("ffn", f"{ffns}:FeedForward", examples=8)
    assert res.verdict == "match", render_text(res)
    for package in ("absent_editor_helpers", "absent_special_functions"):
        assert any(n.startswith(f"{package!r} is not installed") for n in res.notes), res.notes


def test_a_planted_activation_bug_beside_uninstalled_imports_is_a_mismatch(ffns):
    res = check("ffn", f"{ffns}:FeedForward_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_feed_forward_using_the_uninstalled_package_is_raised_naming_it(ffns):
    res = check("ffn", f"{ffns}:GeluFeedForward", examples=8)
    assert res.verdict == "raised", render_text(res)
    assert "'absent_special_functions'" in res.message and "not installed" in res.message, res.message


def test_a_stand_in_answers_only_imports_written_in_the_submissions_folder(tmp_path):
    """A library's own optional `import absent_pkg` (a file outside the submission's folder) still
    fails as the library expects; the same import written in the submission's folder gets the
    stand-in, and using it raises naming the package."""
    import sys

    from parity_tests.oracle.reading.standins import StandIn, _Finder

    finder = _Finder()
    finder.tops["absent_pkg_for_tests"] = "`import absent_pkg_for_tests`"
    sub, lib = tmp_path / "submission", tmp_path / "library"
    sub.mkdir()
    lib.mkdir()
    finder.folders.add(str(sub))
    code = "def ask(finder):\n    return finder.find_spec('absent_pkg_for_tests.special')\n"
    answers = {}
    for where in (sub, lib):
        space: dict = {}
        exec(compile(code, str(where / "asker.py"), "exec"), space)   # our own two-line file
        answers[where] = space["ask"](finder)
    assert answers[lib] is None
    assert answers[sub] is not None and answers[sub].name == "absent_pkg_for_tests.special"
    module = finder.create_module(answers[sub])
    with pytest.raises(ModuleNotFoundError, match="'absent_pkg_for_tests'.*not installed"):
        module.erf(1.0)
    assert isinstance(module.erf, StandIn) and "absent_pkg_for_tests.special" not in sys.modules
