"""Layouts a candidate refuses. A layout run that raises is left uncompared (code written for
contiguous tensors raises there, loudly, wherever it runs). Code refusing only the layouts the
`strided` and `relaid` runs made (every NumPy one was read-only; torch views with a strided last
axis or gaps) and computing otherwise on the layouts callers hand over (q, k, v after
`.transpose(1, 2)`: dense, last axis contiguous; a writable transposed or Fortran-ordered array)
matched and earned full marks. The `strided` run now hands a network's layout over on about half
the examples (layout_modes.network_layout) and NumPy inputs are writable views in every layout
run but a broadcast; code refusing every layout it does not take still matches.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, gradescope_results
from parity_tests.oracle.core.modes import WHAT
from parity_tests.oracle.reading.frameworks import NumpyOps
from parity_tests.oracle.sandbox.layout_modes import network_layout, relaid_np

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "refuses_probe_layouts.py")
RIGHT = os.path.join(candidate_path(), "refused_layouts.py")


@pytest.mark.parametrize("name", ["attention", "numpy_attention", "writable_only_attention"])
def test_refusing_only_the_probe_layouts_fails_on_a_networks_layout(name):
    res = check("sdpa", f"{HOSTILE}:{name}", examples=10, score_groups=True)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] in ("strided", "relaid")
    assert WHAT[res.detail["mode"]] in res.message, res.message
    assert gradescope_results(res)["score"] == 0


@pytest.mark.parametrize("name", ["viewing_attention", "contiguous_only_attention",
                                  "writable_only_attention"])
def test_refusing_every_non_contiguous_layout_still_matches(name):
    res = check("sdpa", f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message


def test_the_networks_layout_is_dense_writable_and_not_contiguous():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    got = network_layout(NumpyOps(), x)
    assert np.array_equal(got, x) and got.flags.writeable and not got.flags.c_contiguous
    assert got.strides[-1] == x.itemsize and got.base.size == x.size      # dense, last axis unit
    assert network_layout(NumpyOps(), np.zeros((1, 1, 4, 5))) is None      # still contiguous


def test_numpy_inputs_in_other_layouts_are_writable_and_their_upstream_gradient_is_not():
    a = np.arange(24.0).reshape(2, 3, 4)
    for how in ("fortran", "reversed", "wide"):
        assert relaid_np(a, how, writable=True).flags.writeable
        assert not relaid_np(a, how).flags.writeable                    # the upstream gradient's
    assert not relaid_np(np.repeat(a[:1], 2, axis=0), "broadcast", writable=True).flags.writeable
