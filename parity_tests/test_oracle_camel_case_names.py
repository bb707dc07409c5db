"""Names written in camelCase are read as their snake_case words: `numberOfHeads` is
number_of_heads (a head count), `embeddingSize` embedding_size (the model width), `inputMask`
input_mask (the mask argument), `dModel` d_model. Before, such a forward's `inputMask` was left at
its default and masks went uncompared (a mask that code drops was a MATCH with the gap named).
Planted bug (the mask lost by a masked_fill not in place): MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "camel_case_names.py"


def test_camel_case_arguments_are_bound_and_masks_compared(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:CamelCaseAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "NOT COMPARED (masks)" not in text and "passed d_model by position" not in text, text


def test_a_mask_lost_behind_a_camel_case_argument_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:CamelCaseAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_camel_case_humps_become_words():
    from parity_tests.oracle.reading.name_words import names_hyper, snake
    assert snake("numberOfHeads") == "number_of_heads"
    assert snake("dModel") == "d_model" and snake("W_Q") == "w_q" and snake("d_ff") == "d_ff"
    assert names_hyper("num_heads", "numberOfHeads") and names_hyper("d_model", "modelEmbeddingSize")
