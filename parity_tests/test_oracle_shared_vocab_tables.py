"""Whole models sharing their vocabulary tables as the paper does (one table for both embeddings and
the output projection, or the output tied to the target table only): the reference is built the same
way and right code matches; the cross-attention under a name no list holds is found by structure
inside the decoder layers, and a frozen positional parameter is kept as the candidate computes it.
A planted bug beside the shared table stays a mismatch; --set overrides what was found."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path, oracle_refusal  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.vocab_tables import shared  # noqa: E402

FILE = candidate_path("shared_vocab_tables.py")


@pytest.mark.parametrize("name, tables", [
    ("PaperTransformer", "one table for the source and target embeddings and the output projection"),
    ("OutputTiedTransformer", "the target embedding's table for the output projection"),
    ("FunctionalTiedTransformer", "one table for the source and target embeddings and the output"),
])
def test_models_sharing_their_vocabulary_tables_match(name, tables):
    res = check("model", f"{FILE}:{name}", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any(tables in n for n in res.notes), res.notes
    assert any("frozen parameters" in n and "positions" in n for n in res.notes), res.notes
    cross = [m for m in res.mapping if m.startswith("decoder.layers.0.cross_attn.q_proj.weight <-")]
    assert cross and "look_at_source.wq.weight" in cross[0] and "found by structure" in cross[0], cross


def test_a_planted_bug_beside_one_shared_table_is_a_mismatch():
    res = check("model", f"{FILE}:PaperTransformerBUG", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)


def test_setting_the_tables_apart_overrides_what_was_found():
    res = check("model", f"{FILE}:PaperTransformer", examples=5,
                settings={"share_embeddings": False, "tie_embeddings": False}, shrink=False)
    assert res.verdict != "match", render_text(res)


@pytest.mark.parametrize("tables, expected", [
    ([(["emb.weight", "dec_emb.weight", "out.weight"], ["Embedding", "Embedding", "Linear"])], (True, True)),
    ([(["emb.weight"], ["Embedding"])], (True, True)),
    ([(["emb.weight", "tgt_emb.weight"], ["Embedding", "Embedding"]), (["fc_out.weight"], ["Linear"])],
     (True, False)),
    ([(["src_emb.weight"], ["Embedding"]), (["tgt_emb.weight", "proj.weight"], ["Embedding", "Linear"])],
     (False, True)),
    ([(["src_emb.weight"], ["Embedding"]), (["tgt_emb.weight"], ["Embedding"])], (False, True)),
    ([(["a.weight"], ["Embedding"]), (["b.weight"], ["Embedding"]), (["c.weight"], ["Linear"])], None),
    ([(["out.weight"], ["Linear"]), (["head.weight"], ["Linear"])], None),
])
def test_the_tables_a_model_holds_say_what_it_shares(tables, expected):
    assert shared(tables) == expected


def test_sharing_tables_of_two_sizes_is_refused(capsys):
    oracle_refusal(capsys, ["check", "model", f"{FILE}:PaperTransformer", "--set", "share_embeddings=true",
                            "--set", "src_vocab=7", "--set", "tgt_vocab=9"], "share_embeddings")
