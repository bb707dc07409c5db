"""`shrink=False` (Options.shrink): a failing check stops at the first failing example it drew and
reports it as drawn, with the same verdict and quantity a shrunk search reports; the suite's tests of
wrong candidates that assert only the verdict use it, since shrinking is most of their time. The
default still shrinks the counterexample to a minimal one."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.core.options import Options

UNSCALED = ("import numpy as np\n\ndef attention(Q, K, V, mask=None):\n"
            "    s = Q @ np.swapaxes(K, -1, -2)\n"          # no 1/sqrt(d_k): wrong
            "    if mask is not None:\n        s = np.where(mask, s, -1e9)\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n    w = w / w.sum(-1, keepdims=True)\n"
            "    return w @ V, w\n")


def _size(example: dict) -> int:
    """The example's drawn sizes summed (batch, heads, lengths, widths): what shrinking lowers."""
    return sum(v for k, v in example.items() if isinstance(v, int) and k != "seed")


def test_an_unshrunk_failure_has_the_verdict_of_a_shrunk_one_in_fewer_examples(tmp_path):
    f = tmp_path / "unscaled.py"
    f.write_text(UNSCALED)
    drawn = check("sdpa", f"{f}:attention", examples=20, shrink=False)
    shrunk = check("sdpa", f"{f}:attention", examples=20)
    assert drawn.verdict == shrunk.verdict == "mismatch", (drawn.message, shrunk.message)
    assert drawn.quantity == shrunk.quantity, (drawn.quantity, shrunk.quantity)
    assert drawn.options["shrink"] is False and shrunk.options["shrink"] is True
    # shrinking calls the candidate again on smaller examples; without it the search stops at once
    assert drawn.examples_run < shrunk.examples_run, (drawn.examples_run, shrunk.examples_run)
    assert 0 < _size(shrunk.example) < _size(drawn.example), (shrunk.example, drawn.example)


def test_a_right_candidate_still_matches_without_shrinking(tmp_path):
    f = tmp_path / "scaled.py"
    f.write_text(UNSCALED.replace("np.swapaxes(K, -1, -2)", "np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])"))
    res = check("sdpa", f"{f}:attention", examples=5, shrink=False)
    assert res.verdict == "match", res.message


@pytest.mark.parametrize("bad", ["no", 0, None])
def test_shrink_must_be_a_bool(bad):
    with pytest.raises(ValueError, match=r"shrink: expected True or False, got"):
        Options(shrink=bad).validate()


def test_an_assignment_spec_cannot_turn_shrinking_off(tmp_path):
    """Grading always reports the minimal counterexample: `shrink` is not a spec option."""
    from parity_tests.oracle.grading.spec import SpecError, load_spec
    p = tmp_path / "assignment.toml"
    p.write_text('[[check]]\ncomponent = "sdpa"\nentry = "attention"\noptions = { shrink = false }\n')
    with pytest.raises(SpecError, match=r"options.*shrink"):
        load_spec(str(p))
    p.write_text('[[check]]\ncomponent = "sdpa"\nentry = "attention"\noptions = { strict = true }\n')
    assert load_spec(str(p)).checks[0].options == {"strict": True}
