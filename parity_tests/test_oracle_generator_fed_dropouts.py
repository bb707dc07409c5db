"""A constructor handing its random generator to a dropout by keyword (`Dropout(dropout,
rng=rng)`) is not handing it a rate: the generator keeps its None default (the code makes one)
instead of being given 0.0, which the code then called methods on (RAISED). The dropout's rate, its
first positional argument or a keyword naming a rate, is still read as one; a planted bug in the
same block still fails."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.dropout_args import dropout_fed

FILE = candidate_path("generator_fed_dropouts.py")


@pytest.mark.parametrize("name, verdict", [("GeneratorFedFFN", "match"),
                                           ("GeneratorFedFFNLeaky", "mismatch")])
def test_a_generator_handed_to_a_dropout_is_no_rate(name, verdict):
    res = check("ffn", f"{FILE}:{name}", examples=12)
    assert res.verdict == verdict, render_text(res)
    assert not any("'rng'" in n and "passed 0.0" in n for n in res.notes), res.notes


class _Fed:
    def __init__(self, d, p_attn, p_ff, rng=None, seed=None, inplace=False):
        self.a = Dropout(p_attn, rng=rng, inplace=inplace)          # noqa: F821 - read, never run
        self.b = nn.Dropout(p=p_ff, seed=seed)                       # noqa: F821


def test_only_a_dropouts_rate_arguments_are_read_as_rates():
    assert dropout_fed(_Fed) == {"p_attn", "p_ff"}
