"""Reach: whole layers as tutorials write them. From-scratch tutorial layers
(ScaleDotProductAttention module, LayerNorm with gamma/beta defaulting to eps=1e-12, EncoderLayer(
d_model, ffn_hidden, n_head, drop_prob), DecoderLayer(dec, enc, trg_mask, src_mask)); seq2seq notebook
layers (hid_dim/pf_dim, device, self_attn_layer_norm/ff_layer_norm, forward returning (x, attention));
a NumPy encoder layer with a hand-written backward, parts holding self.params dicts, x @ W. Each right
candidate reaches "match" from the command an instructor would type (file plus class), its wrong twin
"mismatch"; the recognisers added for them are also tested on their own, without a worker."""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import derived, norm_eps  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING, BuildContext  # noqa: E402
from parity_tests.oracle.reading.slots import numpy_space  # noqa: E402

HERE = candidate_path("whole_layer_styles")
LAY, S2S, NPL = (os.path.join(HERE, f) for f in
                 ("layered_style.py", "seq2seq_style.py", "numpy_layer_style.py"))
N = 5
EPS = "epsilon is fixed by the candidate's code at 1e-12"

PAIRS = [
    # id, component, file, right, wrong, a note (or mapping text) the right report carries
    ("tutorial_encoder_eps_1e-12", "encoder_layer", LAY, "EncoderLayer", "EncoderLayerNoResidual", EPS),
    ("tutorial_decoder_dec_enc", "decoder_layer", LAY, "DecoderLayer", "DecoderLayerStaleResidual", EPS),
    ("seq2seq_encoder_hid_pf_device", "encoder_layer", S2S, "EncoderLayer", "EncoderLayerNormsSwapped",
     "norm2.weight <- ff_layer_norm.weight"),
    ("seq2seq_decoder_x_attention", "decoder_layer", S2S, "DecoderLayer", "DecoderLayerNoCrossMask",
     "norm2.weight <- enc_attn_layer_norm.weight"),
    ("numpy_encoder_backward_x_at_W", "encoder_layer", NPL, "EncoderLayer", "EncoderLayerNoSkipGrad",
     "computes x @ W"),
    ("numpy_decoder_backward_x_at_W", "decoder_layer", NPL, "DecoderLayer",
     "DecoderLayerCrossScaleTwice", "computes x @ W"),
]


def _said(res, text):
    return any(text in n for n in res.notes) or any(text in m for m in res.mapping)


@pytest.mark.parametrize("component,file,right,wrong,note", [p[1:] for p in PAIRS],
                         ids=[p[0] for p in PAIRS])
def test_right_matches_wrong_mismatches(component, file, right, wrong, note):
    res = check(component, f"{file}:{right}", examples=N)
    assert res.verdict == "match", render_text(res)
    assert _said(res, note), (res.notes, res.mapping)
    bad = check(component, f"{file}:{wrong}", examples=20, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_seq2seq_feed_forward_hid_dim_is_d_model():
    """PositionwiseFeedforwardLayer(hid_dim, pf_dim, dropout): hid_dim was taken as d_ff by position."""
    res = check("ffn", f"{S2S}:PositionwiseFeedforwardLayer", examples=N)
    assert res.verdict == "match", render_text(res)


def test_hid_dim_before_d_model_is_the_hidden_width():
    """hid_dim is no d_model alias: FeedForward(hid_dim, d_model) keeps working by order."""
    res = check("ffn", f"{LAY}:HiddenFirstFeedForward", examples=N)
    assert res.verdict == "match", render_text(res)


def test_numpy_part_built_with_a_generator():
    res = check("ffn", f"{NPL}:FeedForward", examples=N)
    assert res.verdict == "match", render_text(res)
    assert _said(res, "'rng'"), res.notes


def test_an_explicit_eps_is_not_overridden_and_mismatches():
    """--set eps=1e-5 says what the assignment requires: the probe stays out and 1e-12 mismatches.

    25 examples, not N: the values are a secret of each check, new at every run, and some draws do
    not show the epsilon beyond tolerance; with 5 examples 1 run in 12 matched (measured by hand),
    with 25 none of 16 runs did."""
    res = check("encoder_layer", f"{LAY}:EncoderLayer", examples=25, settings={"eps": 1e-5})
    assert res.verdict == "mismatch", render_text(res)
    assert not _said(res, "epsilon is fixed"), res.notes


def test_a_pre_norm_setting_on_a_post_norm_numpy_layer_is_not_switched():
    """The layer layout probe predicts from norm_first; a post-norm layer checked as pre-norm fits
    neither layout and stays a mismatch (no switch note)."""
    res = check("encoder_layer", f"{NPL}:EncoderLayer", examples=N, settings={"norm_first": True})
    assert res.verdict == "mismatch", render_text(res)
    assert not _said(res, "read as --weight-layout in_out"), res.notes


# -- recognisers on their own --------------------------------------------------------------------
class _Norm:
    def __init__(self, eps):
        self.eps, self.gain = eps, np.ones(3)


class _Layer:
    def __init__(self, e1, e2):
        self.blocks = [_Norm(e1), {"n": _Norm(e2)}]


class _Guarded:
    """A layer normalising itself with self.eps, beside an attention holding a softmax guard."""

    def __init__(self):
        self.eps, self.attn = 1e-6, _Attention()


class _Attention:
    def __init__(self):
        self.eps = 1e-9


def test_eps_values_walk_lists_dicts_and_skip_arrays():
    assert norm_eps._eps_values(_Layer(1e-12, 1e-12)) == {1e-12}
    assert norm_eps._eps_values(_Layer(1e-6, 1e-12)) == {1e-6, 1e-12}
    assert norm_eps._eps_values(np.ones(3)) == set()


def test_eps_values_are_the_norms_not_another_parts():
    assert norm_eps._eps_values(_Guarded()) == {1e-6}          # the layer's own, not the softmax's
    layer = _Layer(1e-12, 1e-12)
    layer.attn = _Attention()
    assert norm_eps._eps_values(layer) == {1e-12}


def test_numpy_parts_params_dicts_are_named_like_attributes():
    class Part:
        def __init__(self):
            self.params = {"W": np.zeros((2, 3)), "b": np.zeros(3)}

    class Clash:
        def __init__(self):
            self.W = np.ones((2, 2))
            self.params = {"W": np.zeros((2, 3))}

    class Whole:
        def __init__(self):
            self.fc1, self.other = Part(), Clash()

    space, _ = numpy_space(Whole())
    assert {"fc1.W", "fc1.b", "other.W", "other.params.W"} == set(space.names)


def test_rng_argument_gets_a_generator_only_when_required_by_name():
    import inspect
    ctx = BuildContext(module=None, framework="numpy", order=(), build=lambda *a: None)
    p = inspect.Parameter("rng", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    assert isinstance(derived.value(ctx, p, {}), np.random.Generator)
    q = inspect.Parameter("seed_list", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    assert derived.value(ctx, q, {}) is MISSING


def test_seq2seq_model_with_learned_positions_is_never_a_verdict_on_the_computation():
    """Seq2Seq(encoder, decoder, src_pad_idx, trg_pad_idx, device) takes its parts built and no
    function of its project builds it from sizes: an interface error naming the parts it takes
    built (and how to check it), never match or mismatch, and never sizes handed where parts go."""
    S2M = os.path.join(HERE, "seq2seq_model_style.py")
    res = check("model", f"{S2M}:Seq2Seq", examples=2)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "takes its parts built (encoder, decoder)" in text and "--adapter" in text, text
    assert not _said(res, "'encoder': passed src_vocab by position"), res.notes
