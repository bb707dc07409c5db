"""An optional head width with a number for its default (`d_k=64, d_v=64` beside `h`), right only at
the author's sizes, gets d_model // num_heads, said in a note; before, it kept 64, the weights came
out (d_model, h * 64) and the check was an INTERFACE_ERROR. A None default is left alone. Planted
bug (scores scaled by sqrt(d_model)): MISMATCH."""
from __future__ import annotations

import inspect

from parity_tests.oracle import check, render_text

FILE = "default_head_widths.py"


def test_numeric_default_head_widths_get_the_drawn_head_width(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:DefaultWidthAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'd_k': defaults to 64" in text, text


def test_the_planted_bug_behind_default_head_widths_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:DefaultWidthAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_none_defaults_and_constructors_without_a_head_count_are_left_alone():
    from parity_tests.oracle.reading.recognise.base import BuildContext
    from parity_tests.oracle.reading.recognise.derived import optional_head_widths

    def ctor(d_model, h, d_k=None, d_v=64):
        pass

    params = list(inspect.signature(ctor).parameters.values())
    ctx = BuildContext(module=None, framework="numpy", order=(), build=lambda *a: None)
    values = {"d_model": 8, "num_heads": 2}
    assert optional_head_widths(ctx, params, values, True, set()) == {"d_v": 4}
    assert optional_head_widths(ctx, params, values, False, set()) == {}
