"""`BPETokenizer(merges)` checks its merges as `from_dict` does: a triple failed with Python's own
"too many values to unpack" and an id no token has yet with an IndexError from inside the
constructor; both now name the merge and the ids it may join. NumPy pairs are taken as ints."""
import numpy as np
import pytest

from npformer.data.tokenizers.bpe import FIRST_MERGE, BPETokenizer


@pytest.mark.parametrize("merges, message", [
    ([(1, 2, 3)], "merges: merge 0: expected a pair of ids below 259, got (1, 2, 3)"),
    ([(104, 101), (1, 5000)], "merges: merge 1: expected a pair of ids below 260, got (1, 5000)"),
    ([(104, 260)], "merges: merge 0: expected a pair of ids below 259"),
    ([(-1, 104)], "merges: merge 0: expected a pair of ids below 259"),
    ([(104.0, 101)], "merges: merge 0: expected a pair of ids below 259"),
    ([(True, 101)], "merges: merge 0: expected a pair of ids below 259"),
    (["ab"], "merges: merge 0: expected a pair of ids below 259, got 'ab'"),
], ids=repr)
def test_bad_merges_are_named(merges, message):
    with pytest.raises(ValueError) as e:
        BPETokenizer(merges)
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("merges", [None, 5, "abc", {"a": 1}], ids=repr)
def test_merges_that_are_not_a_list_are_named(merges):
    with pytest.raises(TypeError, match="merges: expected a list of"):
        BPETokenizer(merges)


def test_numpy_pairs_are_python_ints_and_encode_alike():
    a, b = BPETokenizer(np.array([[104, 101], [FIRST_MERGE, 108]])), BPETokenizer([(104, 101), (259, 108)])
    assert a.merges == b.merges and all(type(x) is int for m in a.merges for x in m)
    assert a.encode("hello") == b.encode("hello") and a.to_dict() == b.to_dict()
