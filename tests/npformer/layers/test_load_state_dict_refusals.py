"""load_state_dict: missing, unexpected, mis-shaped keys refused with nothing partially loaded;
non-strict loads and dtypes; replayed dropout masks with unknown names queue nothing."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.bad_input_helpers import IDS, cfg, expect


@pytest.mark.parametrize("model", ["Transformer", "CausalLM", "EncoderClassifier", "Linear"])
def test_load_state_dict_rejects_and_loads_nothing(model):
    build = {"Transformer": lambda s: nf.Transformer(cfg(), seed=s),
             "CausalLM": lambda s: nf.CausalLM(cfg(tie_embeddings=True), seed=s),
             "EncoderClassifier": lambda s: nf.EncoderClassifier(cfg(), seed=s),
             "Linear": lambda s: nf.Linear(3, 2, dtype="float64", rng=np.random.default_rng(s))}
    m = build[model](0)
    before = m.state_dict()
    other = build[model](1).state_dict()                   # different numbers, same keys
    keys = list(other)
    first, last = keys[0], keys[-1]

    def assert_unchanged():
        now = m.state_dict()
        assert list(now) == list(before)
        assert all(np.array_equal(now[k], before[k]) for k in now)

    missing = {k: v for k, v in other.items() if k != last}
    expect(ValueError, lambda: m.load_state_dict(missing), "missing", last, "nothing was loaded",
           vs=False)
    assert_unchanged()
    unexpected = dict(other, **{"encoder.layers.9.norm1.weight": np.zeros(8)})
    expect(ValueError, lambda: m.load_state_dict(unexpected), "unexpected",
           "encoder.layers.9.norm1.weight", vs=False)
    assert_unchanged()
    bad_shape = dict(other)
    bad_shape[last] = np.zeros(other[last].shape + (2,))
    expect(ValueError, lambda: m.load_state_dict(bad_shape), last, str(other[last].shape),
           str(bad_shape[last].shape))
    assert_unchanged()
    bad_kind = dict(other)
    bad_kind[first] = np.full(other[first].shape, "x")
    expect(ValueError, lambda: m.load_state_dict(bad_kind), first, "real (float or integer)", "<U1")
    assert_unchanged()
    # the good one loads everything
    m.load_state_dict(other)
    now = m.state_dict()
    assert all(np.array_equal(now[k], other[k]) for k in other)


def test_load_state_dict_non_strict_loads_the_present_keys():
    m = nf.Linear(3, 2, dtype="float64")
    w = np.arange(6.0).reshape(2, 3)
    m.load_state_dict({"weight": w}, strict=False)
    assert np.array_equal(m.weight.data, w) and not m.bias.data.any()


def test_load_state_dict_keeps_the_model_dtype():
    """Values are cast to each parameter's dtype (as torch's copy_ does); documented in NUMERICS."""
    m = nf.Linear(3, 2, dtype="float32")
    sd = {"weight": np.full((2, 3), 1 / 3), "bias": np.array([1, 2])}      # float64 and int64
    m.load_state_dict(sd)
    assert m.weight.data.dtype == np.float32 and m.bias.data.dtype == np.float32
    assert m.weight.data[0, 0] == np.float32(1 / 3)


def test_replay_with_unknown_names_queues_nothing():
    m = nf.CausalLM(cfg(dropout=0.5), seed=3)
    ref = nf.CausalLM(cfg(dropout=0.5), seed=3)
    expect(ValueError, lambda: nf.replay_dropout_masks(m, {"tgt_dropout": np.ones((2, 4, 8), bool),
                                                           "nope": np.ones(2, bool)}),
           "masks", "nope", "expected names", vs=False)
    assert np.array_equal(m(IDS), ref(IDS))                # nothing queued, generator untouched
