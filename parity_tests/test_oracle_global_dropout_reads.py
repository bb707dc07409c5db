"""A dropout rate held as a module global is set to 0.0 before each build only when every read of
it is a dropout's rate (reading/recognise/global_dropout.py). A read through the module's globals
by name (`globals()["p_drop"]`) or as an attribute of a module counts as a read elsewhere: a
feed-forward scaling its output by 1 - p_drop in eval() that way matched before."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.global_dropout import dropout_only_names  # noqa: E402

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "dropout_rate_read_by_name.py")


@pytest.mark.parametrize("name", ["FeedForwardScaledByLookupBUG", "FeedForwardScaledByAttributeBUG"])
def test_a_rate_also_read_by_name_or_as_an_attribute_keeps_its_value(name):
    res = check("ffn", f"{HOSTILE}:{name}", examples=15, shrink=False)
    assert res.verdict == "mismatch", render_text(res)        # was match: the scale became 1


def test_indirect_reads_count_and_callees_docstrings_and_own_attributes_do_not():
    assert dropout_only_names("p = 0.1\nF.dropout(x, p) * globals()['p']\n") == {"x"}
    assert dropout_only_names("p = 0.1\nF.dropout(x, p) * (1 - cfg.p)\n") == {"x"}
    layer = ('dropout = 0.1\n\n\nclass L:\n    """drops at the dropout rate"""\n\n'
             '    def __init__(self):\n        self.dropout = nn.Dropout(dropout)\n\n'
             '    def forward(self, x):\n        return F.dropout(self.dropout(x), dropout)\n')
    assert "dropout" in dropout_only_names(layer)
