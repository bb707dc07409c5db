"""Constructor flags the assignment does not fix (`causal=False`, `bias=True`, as course skeletons
take them): a causal flag left at its default False is exercised (built True, called with no mask,
compared with the reference under a causal mask: sandbox/modes.causal_ctor), and a bias flag left
at its default True too (built False, compared with the reference with every bias 0: bias_ctor).
A candidate taking them and ignoring them (`oracle_hostile/ignores_constructor_flags.py`) used to
match; it is now a mismatch naming the flag's run. Right code honouring its flags still matches,
and the one-value line no longer lists the flags it exercised; a flag it cannot exercise is still
named there."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, json_report, render_text  # noqa: E402

HERE = os.path.dirname(__file__)
HOSTILE = os.path.join(HERE, "oracle_hostile", "ignores_constructor_flags.py") + ":MultiHeadAttention"
FLAGS = candidate_path("constructor_flags.py")


def _line(res) -> str:
    return next((n for n in res.notes if n.startswith("compared at one value only:")), "")


def test_constructor_flags_taken_and_ignored_are_a_mismatch():
    res = check("mha", HOSTILE, runs=1, examples=10, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert "built with its constructor's" in res.message, res.message
    assert res.message in json_report(res)["message"]


@pytest.mark.parametrize("comp,name,settings", [
    ("mha", "FlaggedAttention", {}),                      # causal and bias, torch
    ("encoder_layer", "CausalFlagBlock", {"norm_first": True}),   # is_causal, a GPT-style block
    ("mha", "NumpyFlaggedAttention", {}),                 # masked, NumPy
    ("mha", "RequiredCausalAttention", {}),               # causal required (no default)
    ("mha", "MaskSwitchAttention", {}),                   # use_mask, and no mask argument at all
])
def test_honoured_constructor_flags_match_and_are_not_listed_as_unchecked(comp, name, settings):
    res = check(comp, f"{FLAGS}:{name}", examples=12, settings=settings)
    assert res.verdict == "match", render_text(res)
    line = _line(res)
    assert line and "in the constructor" not in line, line


def test_a_causal_flag_applied_wrongly_is_a_mismatch():
    res = check("mha", f"{FLAGS}:FlaggedAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert "causal flag" in res.message, res.message


def test_a_flag_the_oracle_cannot_exercise_is_still_named(tmp_path):
    """`bias=False` by default (turning biases on is not a value the reference follows): named."""
    f = tmp_path / "default_off.py"
    f.write_text(open(FLAGS.split(":")[0]).read().replace("causal=False, bias=True", "causal=False, bias=False"))
    res = check("mha", f"{f}:FlaggedAttention", examples=5)
    assert res.verdict == "match", render_text(res)
    assert "bias left at its default False in the constructor" in _line(res), _line(res)


def test_a_mask_switch_beside_a_mask_argument_is_not_taken_for_a_causal_flag():
    """`use_mask` deciding whether the given mask is applied: built True by default, never flipped
    to a causal run, and named as not checked."""
    res = check("mha", f"{FLAGS}:MaskArgumentSwitchAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "use_mask left at its default True in the constructor" in _line(res), _line(res)


def test_only_the_flag_that_was_flipped_leaves_the_unchecked_list():
    """`causal` is exercised; `use_mask` (True, beside a mask argument) was never flipped and must
    stay named, though its name is a mask switch's."""
    res = check("mha", f"{FLAGS}:CausalAndMaskSwitchAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    line = _line(res)
    assert "use_mask left at its default True in the constructor" in line, line
    assert "causal left" not in line, line


def test_hyperparameters_the_oracle_passes_are_not_named():
    res = check("mha", f"{FLAGS}:FlaggedAttention", runs=1, examples=3)
    line = _line(res)
    for passed in ("d_model left", "num_heads left"):
        assert passed not in line, line
