"""A model taking key paddings (batch, length) that hides no padded token (it never applies its
source padding): the key-padding form is still chosen, because it is the form that runs, and the
comparison shows the missing padding (MISMATCH). Before, the oracle's (batch, 1, T, T) masks were
handed over and the model RAISED on their shape. The right model (key_padding_models.py) still
matches under the form it hides with (test_oracle_key_padding_models.py)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


def test_a_model_whose_key_paddings_hide_nothing_is_a_mismatch(candidate_file):
    res = check("model", f"{candidate_file('unhiding_padding_models.py')}:PaddingIgnoringSeq2SeqBUG",
                examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "hid the padded source token under neither convention" in text, text
