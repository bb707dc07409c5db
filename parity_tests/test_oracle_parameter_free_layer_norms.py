"""A NumPy layer whose norms have no gain and shift: when nothing the object holds could be them
(the walk that finds a projection's bias absent), they are held at 1 and 0 and named as not
compared, as missing biases are. Before, the check stopped at an interface error asking for
`--map norm1.weight=-` and the three others. A LayerNorm checked on its own keeps that error
(test_oracle_affine_free_norms). Planted bug (the unbiased variance): MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "parameter_free_layer_norms.py"


def test_a_layer_with_parameter_free_norms_matches_naming_them(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:ParameterFreeNormLayer", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    gap = next(line for line in text.splitlines() if "NOT COMPARED (parameters)" in line)
    assert all(n in gap for n in ("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias")), gap
    assert "q_proj.bias" not in gap, gap


def test_a_parameter_free_norm_with_a_bug_is_a_mismatch(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:ParameterFreeNormLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
