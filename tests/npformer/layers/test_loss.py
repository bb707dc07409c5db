"""Cross-entropy: torch's semantics (ignore_index, label smoothing, mean over counted targets)."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.loss import CrossEntropyLoss, cross_entropy_backward, cross_entropy_forward

TOL = 1e-6


def data(N=7, C=5, seed=0, ignore=-100):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((N, C)) * 2
    targets = rng.integers(0, C, N)
    targets[[1, 4]] = ignore
    return logits, targets


def reference(logits, targets, ignore_index, eps):
    """Row by row with math: the cross entropy against the smoothed target distribution."""
    total, count = 0.0, 0
    C = logits.shape[1]
    for z, t in zip(logits, targets):
        if t == ignore_index:
            continue
        m = max(z)
        lse = m + math.log(sum(math.exp(v - m) for v in z))
        q = [(1 - eps) * (c == t) + eps / C for c in range(C)]
        total += -sum(qc * (zc - lse) for qc, zc in zip(q, z))
        count += 1
    return total / count


@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0])
def test_forward_matches_reference(eps):
    logits, targets = data()
    loss, _ = cross_entropy_forward(logits, targets, -100, eps)
    assert loss.shape == () and loss.dtype == np.float64
    assert float(loss) == pytest.approx(reference(logits, targets, -100, eps), rel=1e-13)


@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_pair_gradients(eps):
    logits, targets = data(seed=1)
    rep = check_pair(cross_entropy_forward, cross_entropy_backward, (logits, targets, -100, eps))
    assert rep.passed and rep.max_error < TOL, str(rep)


@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_module_gradcheck_with_leading_dims(eps):
    logits, targets = data(N=6, seed=2, ignore=0)
    m = CrossEntropyLoss(ignore_index=0, label_smoothing=eps)
    rep = gradcheck(m, logits.reshape(2, 3, 5), targets.reshape(2, 3))
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_ignored_rows_get_zero_gradient_and_upstream_scales():
    logits, targets = data(seed=3)
    m = CrossEntropyLoss()
    m(logits, targets)
    d1 = m.backward()
    m(logits, targets)                      # a second backward needs a second forward (as torch)
    d3 = m.backward(3.0)
    assert np.all(d1[[1, 4]] == 0)
    assert np.allclose(d3, 3 * d1, rtol=1e-15)
    assert np.allclose(d1.sum(axis=1), 0, atol=1e-15)      # p - q sums to 0 on each row


def test_against_torch():
    torch = pytest.importorskip("torch")
    logits, targets = data(N=9, C=4, seed=4)
    for eps in (0.0, 0.15):
        m = CrossEntropyLoss(label_smoothing=eps)
        loss = m(logits, targets)
        d = m.backward()
        t = torch.tensor(logits, requires_grad=True)
        ref = torch.nn.functional.cross_entropy(t, torch.tensor(targets), ignore_index=-100,
                                                label_smoothing=eps)
        ref.backward()
        assert float(loss) == pytest.approx(ref.item(), rel=1e-14)
        assert np.allclose(d, t.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_float32_stays_float32():
    logits, targets = data()
    m = CrossEntropyLoss(label_smoothing=0.1)
    loss = m(logits.astype(np.float32), targets)
    assert loss.dtype == np.float32
    assert m.backward().dtype == np.float32
    assert float(loss) == pytest.approx(reference(logits.astype(np.float32).astype(np.float64),
                                                  targets, -100, 0.1), rel=1e-5)


def test_all_targets_ignored_is_an_error():
    logits, _ = data()
    with pytest.raises(ValueError, match="every target equals ignore_index=-100"):
        CrossEntropyLoss()(logits, np.full(7, -100))


def test_bad_input():
    m = CrossEntropyLoss()
    logits, targets = data()
    with pytest.raises(ValueError, match=r"targets: expected shape \(7,\)"):
        m(logits, targets[:5])
    with pytest.raises(ValueError, match=r"targets: expected class indices in \[0, 5\)"):
        m(logits, np.where(targets == -100, 5, targets))
    with pytest.raises(ValueError, match=r"targets: expected class indices"):
        m(logits, np.full(7, -1))
    with pytest.raises(TypeError, match="targets: expected integer"):
        m(logits, targets.astype(np.float64))
    with pytest.raises(ValueError, match="logits: expected finite"):
        m(np.full((7, 5), np.nan), targets)
    with pytest.raises(RuntimeError, match="CrossEntropyLoss.backward called before forward"):
        CrossEntropyLoss().backward()
    m(logits, targets)
    with pytest.raises(ValueError, match="dout"):
        m.backward(np.ones(2))
    with pytest.raises(TypeError, match="dout"):
        m.backward(np.float32(1.0))                         # loss is float64
    with pytest.raises(ValueError, match="label_smoothing"):
        CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError, match="ignore_index"):
        CrossEntropyLoss(ignore_index=1.0)
