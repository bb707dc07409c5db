"""A file whose training wrapper derives from a class of a package the grader does not have
(`class LitGPT(L.LightningModule)`): the stand-in gives the class statement a placeholder base,
so the file's other components load and are checked (the whole file was LOAD_ERROR); building the
wrapper itself is RAISED naming the package, and a planted bug beside it stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def attention(candidate_file):
    return candidate_file("uninstalled_base_classes.py")


def test_attention_beside_a_class_deriving_from_an_uninstalled_package_matches(attention):
    res = check("mha", f"{attention}:SelfAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any(n.startswith("'absent_training_loops' is not installed") for n in res.notes), res.notes


def test_a_planted_scale_bug_beside_the_placeholder_base_is_a_mismatch(attention):
    res = check("mha", f"{attention}:SelfAttention_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_class_deriving_from_the_uninstalled_package_is_raised_naming_it(attention):
    res = check("mha", f"{attention}:TrainingWrapper", examples=8)
    assert res.verdict == "raised", render_text(res)
    assert "'absent_training_loops'" in res.message and "not installed" in res.message, res.message


def test_the_placeholder_base_refuses_instances_of_every_subclass():
    from parity_tests.oracle.reading.standins import StandIn

    base = StandIn("absent_pkg_for_tests.Trainer", "absent_pkg_for_tests")

    class Wrapper(base):                 # the class statement runs
        def __init__(self):
            pass

    class Deeper(Wrapper):
        pass

    assert Wrapper.__name__ == "Wrapper" and Wrapper.__mro__[1].__name__ == "Trainer"
    for cls in (Wrapper, Deeper):
        with pytest.raises(ModuleNotFoundError, match="'absent_pkg_for_tests'.*not installed"):
            cls()
