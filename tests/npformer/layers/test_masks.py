"""Mask helpers: keep-masks (True = may attend), bottom-right causal alignment, AND-combination."""
import numpy as np
import pytest

from npformer import causal_mask, combine_masks, padding_mask  # the checked public functions


def test_padding_mask():
    ids = np.array([[5, 3, 0, 0], [1, 0, 2, 0]])
    m = padding_mask(ids, 0)
    assert m.shape == (2, 1, 1, 4) and m.dtype == np.bool_
    for b in range(2):
        for j in range(4):
            assert m[b, 0, 0, j] == (ids[b, j] != 0)
    assert padding_mask(ids, None) is None


@pytest.mark.parametrize("q_len, k_len", [(1, 1), (4, 4), (2, 5), (5, 3), (3, 0)])
def test_causal_mask_is_bottom_right_aligned(q_len, k_len):
    m = causal_mask(q_len, k_len)
    assert m.shape == (1, 1, q_len, k_len) and m.dtype == np.bool_
    for i in range(q_len):
        for j in range(k_len):
            # the last query sees every key; each earlier query one key fewer
            assert m[0, 0, i, j] == (j <= i + (k_len - q_len))


def test_causal_mask_square_default_is_lower_triangle():
    assert np.array_equal(causal_mask(4)[0, 0], np.tril(np.ones((4, 4), dtype=bool)))


def test_combine_masks():
    pad = padding_mask(np.array([[4, 4, 0]]), 0)            # (1, 1, 1, 3)
    causal = causal_mask(3)                                 # (1, 1, 3, 3)
    m = combine_masks(pad, None, causal)
    assert m.shape == (1, 1, 3, 3)
    assert np.array_equal(m[0, 0], np.tril(np.ones((3, 3), dtype=bool)) & [True, True, False])
    assert combine_masks(None, None) is None and combine_masks() is None
    single = combine_masks(pad)
    assert np.array_equal(single, pad) and single is not pad
    ints = combine_masks(np.array([[1, 0, 1]]), np.array([[1], [0]]))
    assert ints.dtype == np.bool_ and np.array_equal(ints, [[True, False, True],
                                                            [False, False, False]])


def test_bad_input():
    with pytest.raises(TypeError, match="ids: expected integer"):
        padding_mask(np.array([[1.0, 0.0]]), 0)
    with pytest.raises(ValueError, match="ids: expected 2 dimensions"):
        padding_mask(np.array([1, 0]), 0)
    with pytest.raises(ValueError, match="q_len"):
        causal_mask(-1)
    with pytest.raises(ValueError, match="k_len"):
        causal_mask(2, 1.5)
    with pytest.raises(ValueError, match=r"masks: expected shapes that broadcast"):
        combine_masks(np.ones((2, 3), bool), np.ones((4,), bool))
    with pytest.raises(TypeError, match=r"masks\[1\]"):
        combine_masks(np.ones(2, bool), np.ones(2))
    with pytest.raises(ValueError, match=r"masks\[0\]: expected 0/1"):
        combine_masks(np.array([2, 0]))
