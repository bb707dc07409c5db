"""Names as people write them: a component given as its code names it (`LayerNorm`,
`multi_head_attention`) is the canonical component, reported under its canonical name; an ambiguous
or misspelt name is a one-line error that says what to give; a candidate given as a file without
`:Name` is told the names the file defines, read as text (nothing in it runs).
"""
from __future__ import annotations

import json
import textwrap

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.cli import main
from parity_tests.oracle.components import get
from parity_tests.oracle.grading.spec import SpecError, load_spec

LAYERNORM = textwrap.dedent('''
    import numpy as np

    class LayerNorm:
        def __init__(self, d_model, eps=1e-5):
            self.weight = np.ones(d_model)
            self.bias = np.zeros(d_model)
            self.eps = eps

        def forward(self, x):
            mu = x.mean(-1, keepdims=True)
            var = x.var(-1, keepdims=True)
            return self.weight * (x - mu) / np.sqrt(var + self.eps) + self.bias

    def helper(x):
        return x
''')


@pytest.mark.parametrize("given,expected", [
    ("layernorm", "layernorm"), ("LayerNorm", "layernorm"), ("layer_norm", "layernorm"),
    ("Layer-Normalization", "layernorm"), ("MultiHeadAttention", "mha"),
    ("multi_head_attention", "mha"), ("scaled_dot_product_attention", "sdpa"),
    ("PositionalEncoding", "positional"), ("FeedForward", "ffn"),
    ("position_wise_feed_forward", "ffn"), ("EncoderLayer", "encoder_layer"),
    ("decoder-block", "decoder_layer"), ("Transformer", "model"),
])
def test_common_spellings_name_the_canonical_component(given, expected):
    assert get(given).name == expected


def test_attention_alone_is_refused_as_ambiguous():
    with pytest.raises(KeyError) as e:
        get("Attention")
    assert "sdpa" in e.value.args[0] and "mha" in e.value.args[0] and "'Attention'" in e.value.args[0]


def test_a_misspelt_name_gets_the_closest_one_suggested():
    with pytest.raises(KeyError, match=r"got 'lyernorm' \(did you mean layernorm\?\)"):
        get("lyernorm")
    with pytest.raises(KeyError) as e:
        get("banana")
    assert "expected one of sdpa, mha" in e.value.args[0] and "did you mean" not in e.value.args[0]


def test_the_command_line_reports_the_canonical_name(tmp_path, capsys):
    src = tmp_path / "ln.py"
    src.write_text(LAYERNORM)
    report = tmp_path / "report.json"
    code = main(["check", "Layer_Norm", f"{src}:LayerNorm", "--examples", "2",
                 "--report", str(report)])
    out = capsys.readouterr().out
    data = json.loads(report.read_text())
    assert code == 0, out
    assert data["component"] == "layernorm" and data["verdict"] == "match"
    assert "check layernorm " in out


def test_a_spec_may_spell_the_component_as_code_does(tmp_path):
    spec = tmp_path / "assignment.toml"
    spec.write_text('[assignment]\nname = "a"\nentry_file = "ln.py"\n\n'
                    '[[check]]\ncomponent = "LayerNorm"\nentry = "LayerNorm"\n')
    checks = load_spec(str(spec)).checks
    assert [(c.name, c.component) for c in checks] == [("layernorm", "layernorm")]
    spec.write_text('[assignment]\nname = "a"\nentry_file = "ln.py"\n\n'
                    '[[check]]\ncomponent = "attention"\nentry = "f"\n')
    with pytest.raises(SpecError, match=r"\[\[check\]\] #1.*could mean sdpa"):
        load_spec(str(spec))


def test_a_file_without_a_name_is_told_what_the_file_defines(tmp_path):
    src = tmp_path / "ln.py"
    marker = tmp_path / "imported"
    src.write_text(LAYERNORM + f"\nopen({str(marker)!r}, 'w').close()\n")
    res = check("layernorm", str(src))
    assert res.verdict == "load_error" and res.exit_code == 2
    assert "defines LayerNorm, helper" in res.message
    assert f"{src}:LayerNorm" in res.message
    assert not marker.exists()                  # read as text, never imported
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    res = check("layernorm", str(empty))
    assert res.verdict == "load_error" and "defines no public class or function" in res.message
