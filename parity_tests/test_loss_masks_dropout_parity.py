"""Cross-entropy (ignore_index, label smoothing), masks, and Dropout with replayed masks."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import compare, note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_pair, check_parity
from parity_tests.harness.twins import twins


@st.composite
def loss_cases(draw):
    lead = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    classes = draw(st.integers(1, 7))
    ignore = draw(st.sampled_from((-100, 0, None)))
    if ignore == 0 and classes == 1:
        ignore = -100                # with one class, ignoring class 0 would ignore every target
    smoothing = draw(st.sampled_from((0.0, 0.1, 0.5, 1.0)))
    scale = draw(st.sampled_from((0.1, 1.0, 20.0)))
    return lead, classes, ignore, smoothing, scale


def _targets(rng, lead, classes, ignore):
    t = S.targets_for(rng, lead, classes, ignore)
    if ignore is not None and (t == ignore).all():
        t.flat[0] = (ignore + 1) % classes if ignore >= 0 else 0   # keep one target counted
    return t


@given(c=loss_cases(), dtype=S.dtypes(), seed=S.seeds())
def test_cross_entropy_pair_vs_torch(c, dtype, seed):
    import torch.nn.functional as F

    from npformer.layers.loss import cross_entropy_backward, cross_entropy_forward

    lead, classes, ignore, smoothing, scale = c
    rng = np.random.default_rng(seed)
    n = int(np.prod(lead))
    logits = S.normal(rng, (n, classes), dtype, scale)
    ii = -100 if ignore is None else ignore
    t = _targets(rng, (n,), classes, ignore)
    check_pair(lambda z, y: cross_entropy_forward(z, y, ii, smoothing), cross_entropy_backward,
               lambda z, y: F.cross_entropy(z, y, ignore_index=ii, label_smoothing=smoothing),
               (logits, t), dtype=dtype, seed=seed, input_names=("logits",),
               output_quantities=("loss",),
               case=dict(n=n, classes=classes, ignore_index=ii, smoothing=smoothing, dtype=dtype,
                         seed=seed))


@given(c=loss_cases(), dtype=S.dtypes(), seed=S.seeds())
def test_cross_entropy_module(c, dtype, seed):
    lead, classes, ignore, smoothing, scale = c
    ii = -100 if ignore is None else ignore
    note_case(lead=lead, classes=classes, ignore_index=ii, smoothing=smoothing, dtype=dtype,
              seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("loss.CrossEntropyLoss", ignore_index=ii, label_smoothing=smoothing)
    logits = S.normal(rng, lead + (classes,), dtype, scale)
    targets = _targets(rng, lead, classes, ignore)
    # the module's backward takes a scalar upstream: check_parity draws a random 0-d one
    check_parity(a, t, (logits, targets), dtype=dtype, seed=seed, input_names=("logits",))


@given(b=S.batch_sizes(), tq=st.integers(0, 6), tk=st.integers(0, 6) | st.none(),
       pad=st.none() | st.integers(0, 4), seed=S.seeds())
def test_masks_match_torchformer_and_the_definition(b, tq, tk, pad, seed):
    import npformer.layers.masks as nm
    import torchformer.layers.masks as tm

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 5, size=(b, max(tq, 1)))
    k = tq if tk is None else tk
    pairs = [("causal_mask", nm.causal_mask(tq, tk), tm.causal_mask(tq, tk),
              S.causal_keep(tq, k)),
             ("padding_mask", nm.padding_mask(ids, pad), tm.padding_mask(ids, pad),
              None if pad is None else S.key_padding_keep(ids != pad))]
    for name, got, tref, ref in pairs:
        if ref is None:
            assert got is None and tref is None, name
            continue
        assert got.dtype == np.bool_
        compare(f"npformer.layers.masks.{name}", got, ref, "float64", "output", case=dict(b=b, tq=tq))
        compare(f"torchformer.layers.masks.{name}", tref, ref, "float64", "output")
    c = S.causal_keep(max(tq, 1), max(k, 1))
    p = S.key_padding_keep(rng.random((b, max(k, 1))) < 0.7)
    compare("combine_masks", nm.combine_masks(None, c, p), c & p, "float64")
    compare("torchformer.combine_masks", tm.combine_masks(None, c, p), c & p, "float64")
    assert nm.combine_masks(None, None) is None


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple),
       p=st.sampled_from((0.0, 0.1, 0.5, 0.9)), train=st.booleans(), dtype=S.dtypes(),
       seed=S.seeds())
def test_dropout_module_with_replayed_mask(shape, p, train, dtype, seed):
    note_case(shape=shape, p=p, train=train, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("dropout.Dropout", p)
    a.rng = np.random.default_rng(seed)          # a fresh stream per example
    x = S.normal(rng, shape, dtype)
    r = check_parity(a, t, (x,), dtype=dtype, seed=seed, input_names=("x",), train=train)
    if train and p > 0:
        assert r.numpy.dropout_masks[""].shape == shape      # a mask was drawn and replayed
        kept = r.numpy.dropout_masks[""]
        compare("dropout output (definition)", r.numpy.output, np.where(kept, x / (1 - p), 0),
                dtype, "output")


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple),
       p=st.sampled_from((0.1, 0.5)), dtype=S.dtypes(), seed=S.seeds())
def test_dropout_pair(shape, p, dtype, seed):
    from npformer.layers.dropout import dropout_backward, dropout_forward
    from torchformer.layers.dropout import dropout_apply

    rng = np.random.default_rng(seed)
    x = S.normal(rng, shape, dtype)
    mask = rng.random(shape) >= p
    check_pair(lambda x, m: dropout_forward(x, p, m), dropout_backward,
               lambda x, m: dropout_apply(x, m, p), (x, mask), dtype=dtype, seed=seed,
               input_names=("x",), case=dict(shape=shape, p=p, dtype=dtype, seed=seed))
