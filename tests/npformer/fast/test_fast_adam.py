"""npformer.fast.adam (blocked, threaded Adam/AdamW) against the plain npformer.optim.adam: bit-equal."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.fast import adam as fast_adam
from npformer.fast.adam import BlockedAdam, BlockedAdamW, default_threads
from npformer.layers.module import Parameter
from npformer.optim import Adam, AdamW

SHAPES = [(7, 5), (11,), (3, 4, 2), (1,), (1, 1)]          # odd sizes: no block divides them evenly


def run(make, init, grads, fortran_first=False):
    ps = [Parameter(a.copy()) for a in init]
    opt = make(list(zip("abcde", ps)))
    for g in grads:
        for p, gp in zip(ps, g):
            p.grad = gp.copy()
        if fortran_first:
            ps[0].grad = np.asfortranarray(ps[0].grad)      # non-contiguous: the whole-array path
        opt.step()
    return [p.data.copy() for p in ps], opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("plain, fast, kw", [
    (Adam, BlockedAdam, dict(lr=0.01, weight_decay=0.1)),
    (Adam, BlockedAdam, dict(lr=0.02, betas=(0.3, 0.9), amsgrad=True)),   # lerp's other branch
    (AdamW, BlockedAdamW, dict(lr=0.01, amsgrad=True)),
])
@pytest.mark.parametrize("threads, block", [(1, 10 ** 9), (1, 3), (3, 4), (2, 1), (2, 5)])
def test_blocked_adam_equals_the_plain_adam_bit_for_bit(dtype, plain, fast, kw, threads, block):
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(4)]
    want, _ = run(lambda ps: plain(ps, **kw), init, grads)

    def make(ps):
        opt = fast(ps, threads=threads, **kw)
        opt.BLOCK = opt.BLOCK_THREADED = block              # tiny blocks: many per parameter
        opt.MIN_THREADED = 0                                # threads even for this little work
        return opt
    got, opt = run(make, init, grads, fortran_first=True)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(want[1], init[1])             # the parameters did move
    if threads > 1:
        assert threads in fast_adam._POOLS                  # the threaded path really ran
    assert opt.state_dict()["type"] == plain.__name__        # its state is the plain rule's


def test_blocked_adam_state_loads_into_the_plain_adam():
    """A checkpoint written while training with BlockedAdam resumes with the plain Adam, same steps."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(3)]
    _, fast = run(lambda ps: BlockedAdam(ps, lr=0.1, threads=2), init, grads[:2])
    plain_params = [Parameter(p.data.copy()) for p in fast.params]
    plain = Adam(list(zip("abcde", plain_params)), lr=0.1)
    plain.load_state_dict(fast.state_dict())
    for opt, ps in ((fast, fast.params), (plain, plain_params)):
        for p, g in zip(ps, grads[2]):
            p.grad = g.copy()
        opt.step()
    for a, b in zip(fast.params, plain_params):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("bad", [0, 1.5, -1, True])
def test_threads_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="threads"):
        BlockedAdam([Parameter(np.zeros(2))], threads=bad)


def test_default_threads_follows_the_blas_limit(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    assert BlockedAdam([Parameter(np.zeros(1))]).threads == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert default_threads() == 2
