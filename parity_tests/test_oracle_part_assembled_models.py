"""A whole model assembled from parts handed to its constructor (`Translator(encoder, decoder,
src_embed, tgt_embed, head)`) is built through the function of its file that makes the parts from
sizes and returns it (before, each part was built as a class from the model's sizes: RAISED), and
the epsilon its norms fix, held in residual wrappers five modules deep, is found (before, the
model was compared with eps 1e-5). A planted bug is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "part_assembled_models.py")

pytest.importorskip("torch")


def test_a_model_assembled_from_parts_is_built_through_its_files_function():
    res = check("model", f"{CANDS}:Translator", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("built through build_translator()" in n for n in res.notes), res.notes
    assert "1e-06" in res.gaps.get("eps", ""), res.gaps


def test_a_planted_bug_in_a_model_assembled_from_parts_is_a_mismatch():
    res = check("model", f"{CANDS}:TranslatorUnscaled", examples=6)
    assert res.verdict == "mismatch", render_text(res)
    assert any("built through build_unscaled()" in n for n in res.notes), res.notes


def test_the_function_is_read_only_for_a_class_that_takes_its_parts():
    import importlib.util

    from parity_tests.oracle.reading.recognise import model_factory
    spec = importlib.util.spec_from_file_location("part_assembled_models", CANDS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert model_factory.factory(mod.Translator, mod) is mod.build_translator
    assert model_factory.factory(mod.TranslatorUnscaled, mod) is mod.build_unscaled
    assert model_factory.factory(mod.MHA, mod) is None          # takes sizes
    assert model_factory.factory(mod.Stack, mod) is None        # one part, no function returns it
