"""Sizes a file's classes read as globals that only its `if __name__ == "__main__":` block sets
(the nlp-tutorial Transformer and its copies): the loader runs those plain assignments, each build
gets the example's sizes by what the names mean (reading/main_sizes.py), a forward reading them sees
its own instance's, and the mask's True = hidden is read through a module built inline
(`Attention()(q, k, v, mask)`). Planted bugs stay MISMATCH."""
from __future__ import annotations

import ast
import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.main_sizes import own_arguments  # noqa: E402
from parity_tests.oracle.reading.script_code import main_block_constants  # noqa: E402

FILE = candidate_path("main_block_sizes.py")


@pytest.mark.parametrize("comp,name", [("sdpa", "ScaledDotAttention"),
                                       ("encoder_layer", "GlobalSizedEncoderLayer")])
def test_sizes_set_only_under_main_are_given_the_examples_sizes(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("set by its __main__ block" in n for n in res.notes), res.notes


def test_a_mask_applied_by_a_module_built_inline_is_read_as_true_hidden():
    res = check("encoder_layer", f"{FILE}:GlobalSizedEncoderLayer", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("as True = hidden" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("sdpa", "ScaledDotAttentionBUG"),
                                       ("encoder_layer", "GlobalSizedEncoderLayerBUG")])
def test_a_planted_bug_in_main_sized_code_is_a_mismatch(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_plain_assignments_the_definitions_need_are_taken():
    tree = ast.parse(
        "class A:\n    def f(self):\n        return width * 2\n"
        "if __name__ == '__main__':\n    vocab = {'a': 0, 'b': 1}\n    width = len(vocab) + 1\n"
        "    other = 3\n    model = A()\n    steps = load_steps()\n")
    taken = [ast.unparse(s) for s in main_block_constants(tree)]
    assert taken == ["vocab = {'a': 0, 'b': 1}", "width = len(vocab) + 1"]


def test_a_name_bound_at_top_level_is_not_taken_from_main():
    tree = ast.parse("width = 4\nclass A:\n    n = width\nif __name__ == '__main__':\n    width = 8\n")
    assert main_block_constants(tree) == []


def test_a_value_that_is_not_plain_is_not_run():
    tree = ast.parse("class A:\n    n = width\nif __name__ == '__main__':\n    width = ask()\n")
    assert main_block_constants(tree) == []


def test_a_functions_own_variable_does_not_hide_a_global_set_under_main():
    tree = ast.parse("def f():\n    width = 2\n    return width\nclass A:\n    n = width\n"
                     "if __name__ == '__main__':\n    width = 8\n")
    assert [ast.unparse(s) for s in main_block_constants(tree)] == ["width = 8"]


def test_a_global_beside_the_constructors_own_argument_keeps_the_files_value():
    hostile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                           "main_global_heads.py:MultiHeadAttention")
    res = check("mha", hostile, examples=10)
    assert res.verdict in ("mismatch", "raised"), render_text(res)
    assert any("kept the file's value (8)" in n for n in res.notes), res.notes


def test_own_arguments_reads_a_class_and_a_factory():
    class Layer:
        def __init__(self, d_model, num_heads=2):
            pass

    assert own_arguments(Layer) == ("d_model", "num_heads")
    assert own_arguments(lambda n_heads: n_heads) == ("n_heads",)


def test_a_call_in_the_main_block_runs_in_the_worker_not_the_oracles_process():
    hostile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                           "main_block_call.py:attention")
    res = check("sdpa", hostile, examples=3)
    assert res.verdict == "load_error", render_text(res)
    text = render_text(res)
    assert "the __main__ block's call ran in process" in text
    assert f"ran in process {os.getpid()}" not in text
