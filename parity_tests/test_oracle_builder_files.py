"""A whole model taking its parts whose builder lives in another file of its project
(`models/build_model.py` building `models/model/translator.py`'s Translator, returning
`Translator(...).to(device)`) is built through that function; its two width arguments (`d_embed`
beside `d_model`) both get the drawn width, and its token tables, each two modules deep
(`src_embed.embedding.0.embedding.weight`), are told apart by the side their name says. It
MATCHes; the BUG twin with unscaled embeddings stays a mismatch. Before, the model's parts were
passed sizes by position and it held no weights (INTERFACE_ERROR)."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.vocab_tables import _on_side  # noqa: E402


@pytest.fixture
def project(candidate_file, monkeypatch, tmp_path):
    # outside the project, its folder on PYTHONPATH, as a user's checkout would be
    shutil.copytree(candidate_file("builder_elsewhere", "models"), tmp_path / "models")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path / "models" / "model" / "translator.py"


def test_a_table_is_told_by_the_side_its_first_name_part_says():
    names = ["src_embed.embedding.0.embedding.weight", "tgt_embed.embedding.0.embedding.weight"]
    assert _on_side("src_embed.weight", names) == names[:1]
    assert _on_side("tgt_embed.weight", names) == names[1:]


def test_a_model_built_in_another_file_of_its_package_matches(project):
    res = check("model", f"{project}:Translator", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("built through build_translator(), the function in build_model.py" in n
               for n in res.notes), res.notes
    assert any("(d_embed, d_model)" in n for n in res.notes), res.notes


def test_its_unscaled_embedding_twin_is_a_mismatch(project):
    res = check("model", f"{project}:TranslatorUnscaled", examples=6)
    assert res.verdict == "mismatch", render_text(res)
    assert any("built through build_unscaled()" in n for n in res.notes), res.notes
