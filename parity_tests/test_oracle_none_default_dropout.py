"""A dropout rate defaulting to None that the constructor hands to a dropout anyway
(`def __init__(self, d, h, rate: float = None): self.drop = nn.Dropout(rate)`) is passed 0.0, said
in a note, and the check runs; an optional module defaulting to None keeps its None. Before, the
constructor raised inside nn.Dropout(None) and the verdict was RAISED. Planted bug: MISMATCH."""
from __future__ import annotations

import inspect

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.base import BuildContext

FILE = "none_default_dropout.py"


def test_a_none_default_handed_to_a_dropout_gets_zero(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:RateNoneAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'rate': defaults to None but is handed to a dropout" in text, text


def test_the_planted_bug_behind_a_none_default_dropout_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:RateNoneAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_arguments_handed_to_a_dropout_are_given_zero():
    import importlib.util

    from parity_tests.conftest import candidate_path
    from parity_tests.oracle.reading.recognise.dropout_args import none_rates
    spec = importlib.util.spec_from_file_location("none_default_dropout", candidate_path(FILE))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = mod.RateNoneAttention
    params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    ctx = BuildContext(module=mod, framework="torch", order=(), build=lambda *a: None)
    assert none_rates(ctx, cls, params, set()) == {"rate": 0.0}
    assert none_rates(ctx, cls, params, {"rate"}) == {}
