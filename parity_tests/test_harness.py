"""The harness itself: comparisons fail when they must, with a message that names the tensor."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.models.config import TransformerConfig
from parity_tests.harness import ParityError, compare, compare_all, measure, note_case, tolerance
from parity_tests.harness import strategies as S
from parity_tests.harness.case import case
from parity_tests.harness.tolerances import FLOORS, QUANTITIES, SAFETY, TOLERANCES


def test_every_dtype_and_quantity_has_a_tolerance_above_its_floor():
    for dt in ("float32", "float64"):
        for q in QUANTITIES:
            tol = tolerance(dt, q)
            assert tol.atol >= FLOORS[dt][q] * SAFETY and tol.rtol >= FLOORS[dt][q] * SAFETY
            assert tol.atol <= FLOORS[dt][q] * SAFETY * 5   # rounding up, not loosening
    assert TOLERANCES["float64"]["param_grad"].atol < 1e-11  # tight stays tight


def test_unknown_dtype_or_quantity_is_a_clear_error():
    with pytest.raises(KeyError, match="dtype"):
        tolerance("float16", "output")
    with pytest.raises(KeyError, match="quantity"):
        tolerance("float64", "outputs")


def test_message_names_tensor_worst_index_values_errors_and_rerun():
    ref = np.linspace(-1, 1, 12).reshape(3, 4)
    got = ref.copy()
    got[2, 1] += 3e-9
    got[0, 0] += 1e-9
    with case(seed=7, shape=(3, 4)):
        with pytest.raises(ParityError) as e:
            compare("decoder.layers.0.self_attn.q_proj.weight.grad", got, ref, "float64",
                    "param_grad")
    msg = str(e.value)
    first = msg.splitlines()[0]
    assert "decoder.layers.0.self_attn.q_proj.weight.grad" in first and "param_grad" in first
    assert "worst index (2, 1)" in msg
    assert repr(float(got[2, 1])) in msg and repr(float(ref[2, 1])) in msg
    assert "abs err 3.000e-09" in msg and "x tolerance" in msg
    assert "elements over tolerance: 2 of 12" in msg
    assert "seed=7" in msg and "re-run" in msg
    assert e.value.report.worst_index == (2, 1)


def test_a_nan_or_inf_result_is_infinitely_over_tolerance():
    """The figures a report prints for a NaN or inf where the reference has a number: never the
    0 x tolerance and 0 largest error of a report that was never filled in."""
    ref = np.array([0.5, 1.0, -2.0])
    nan = measure("w", np.array([0.5, np.nan, -2.0]), ref, "float64")
    assert not nan.passed and nan.ratio == np.inf and np.isnan(nan.max_abs) and nan.n_over == 1
    inf = measure("w", np.array([np.inf, 1.0, -2.0]), ref, "float64")
    assert not inf.passed and inf.ratio == np.inf and inf.max_abs == np.inf


def test_within_tolerance_passes_and_just_outside_fails():
    ref = np.array([0.0, 1.0, -2.0, 100.0])
    tol = tolerance("float32", "output")
    allowed = tol.bound(ref)
    compare("x", ref + 0.99 * allowed, ref, "float32")
    with pytest.raises(ParityError, match="parity mismatch: x "):
        compare("x", ref + 1.01 * allowed * (np.arange(4) == 1), ref, "float32")


def test_nan_shape_and_dtype_problems_are_reported():
    ref = np.zeros((2, 2))
    with pytest.raises(ParityError, match="non-finite"):
        compare("w", np.array([[0, np.nan], [0, 0]]), ref, "float64")
    with pytest.raises(ParityError, match="non-finite.*reference"):
        compare("w", ref, np.array([[0, np.inf], [0, 0]]), "float64")
    compare("w", np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), "float64")   # same inf: equal
    with pytest.raises(ParityError, match=r"shape: got \(2, 3\), ref \(2, 2\)"):
        compare("w", np.zeros((2, 3)), ref, "float64")
    with pytest.raises(ParityError, match="dtype: got float64, expected float32"):
        compare("w", ref, ref.astype(np.float32), "float32", check_dtype=True)


def test_compare_all_names_the_first_failure_in_order_and_lists_the_rest():
    a = np.ones(3)
    items = [("first", a, a, "output"), ("second", a + 1, a, "output"),
             ("third", a * 3, a, "param_grad")]
    with pytest.raises(ParityError) as e:
        compare_all(items, dtype="float64")
    assert str(e.value).startswith("parity mismatch: second ")
    assert "also failing (1): third" in str(e.value)


def test_torch_tensors_are_accepted():
    import torch

    t = torch.arange(4, dtype=torch.float64, requires_grad=True) * 2
    rep = measure("t", t, np.arange(4.0) * 2, "float64")
    assert rep.passed and rep.max_abs == 0.0


@given(st.data())
def test_attention_masks_are_bool_keep_masks_of_broadcastable_shape(data):
    B, H = data.draw(S.batch_sizes()), data.draw(st.integers(1, 3))
    tq, tk = data.draw(S.lengths()), data.draw(S.lengths())
    allow = data.draw(st.booleans())
    m = data.draw(S.attention_masks(B, H, tq, tk, allow_fully_masked=allow))
    if m.keep is None:
        assert m.kind == "none"
        return
    assert m.keep.dtype == np.bool_
    full = np.broadcast_to(m.keep, np.broadcast_shapes(m.keep.shape, (B, H, tq, tk)))
    assert full.shape == (B, H, tq, tk)
    empty = ~full.any(-1)
    assert bool(empty.any()) == m.fully_masked_rows
    if not allow:
        assert not empty.any()


def test_causal_keep_is_bottom_right_aligned():
    k = S.causal_keep(2, 4)[0, 0]
    assert k.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert S.causal_keep(3)[0, 0].tolist() == np.tril(np.ones((3, 3), bool)).tolist()


@given(st.data())
def test_configs_and_ids_are_valid(data):
    model = data.draw(st.sampled_from(("transformer", "classifier", "causal_lm")))
    cfg = data.draw(S.configs(model))
    assert isinstance(cfg, TransformerConfig)
    inp = data.draw(S.model_inputs(cfg, model))
    for ids, pad, vocab in ((inp.src, inp.src_pad, cfg.src_vocab), (inp.tgt, inp.tgt_pad,
                                                                     cfg.tgt_vocab)):
        if ids is None:
            continue
        assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < vocab
        if cfg.pad_id is not None:
            assert ((ids == cfg.pad_id) == ~pad.keep).all()


def test_note_case_appears_in_messages():
    note_case(example="drawn-thing")
    try:
        with pytest.raises(ParityError, match="example='drawn-thing'"):
            compare("z", np.ones(2), np.zeros(2), "float64")
    finally:
        from parity_tests.harness import clear_case
        clear_case()


def test_recording_names_match_torch_named_modules():
    from parity_tests.harness.recording import flatten_outputs, record_numpy, record_torch
    from parity_tests.harness.twins import twins

    a, b = twins("attention.MultiHeadAttention", 4, 2, dtype="float64", seed=0)
    x = np.random.default_rng(0).standard_normal((1, 3, 4))
    with record_numpy(a) as ra:
        a(x, x, x)
    from parity_tests.harness.torch_utils import to_tensor
    xt = to_tensor(x)                                   # on the parity device, as the twin
    with record_torch(b) as rb:
        b(xt, xt, xt)
    assert "forward" not in a.q_proj.__dict__          # the wrapper is gone after the block
    assert {"q_proj", "k_proj", "v_proj", "out_proj"} <= set(flatten_outputs(ra))
    assert {"q_proj", "k_proj", "v_proj", "out_proj"} <= set(flatten_outputs(rb))
