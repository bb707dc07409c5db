"""The twins' argument-check helpers share their names and call signatures.

Each check helper npformer has and torchformer needs exists in both twins under one name, takes the
same positional parameters in the same order (the argument's name first), and differs in keyword-only
parameters only by the backend's own: torchformer's `device` (where a checked tensor is placed).
Both have `finite` (float inputs scanned for NaN/inf; torchformer scans CPU tensors, not CUDA ones).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import npformer.guards.validation as np_checks
import torchformer.guards.validation as tf_checks

SHARED = ("check_float", "check_ids", "check_mask", "check_length", "check_positive_int", "check_dtype",
          "check_probability", "check_rng")
BACKEND_ONLY = {"npformer": set(), "torchformer": {"device"}}


def _params(fn, kinds):
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds]


POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@pytest.mark.parametrize("name", SHARED)
def test_twin_check_helpers_take_the_same_positional_parameters(name):
    np_fn, tf_fn = getattr(np_checks, name), getattr(tf_checks, name)
    assert _params(np_fn, POSITIONAL) == _params(tf_fn, POSITIONAL)
    assert _params(tf_fn, POSITIONAL)[0] == "name"


@pytest.mark.parametrize("name", SHARED)
def test_twin_check_helpers_differ_only_by_backend_keywords(name):
    kw = (inspect.Parameter.KEYWORD_ONLY,)
    np_kw = set(_params(getattr(np_checks, name), kw)) - BACKEND_ONLY["npformer"]
    tf_kw = set(_params(getattr(tf_checks, name), kw)) - BACKEND_ONLY["torchformer"]
    assert np_kw == tf_kw


@pytest.mark.parametrize("bad, error", [(1.0, ValueError), (-0.1, ValueError), ("0.1", TypeError),
                                        (True, TypeError), (None, TypeError)])
def test_twin_check_probability_refuses_alike(bad, error):
    for checks in (np_checks, tf_checks):
        with pytest.raises(error, match=r"^p: expected a float in \[0, 1\), got"):
            checks.check_probability("p", bad)
    assert tf_checks.check_probability("p", np.float32(0.25)) == 0.25


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4"])
def test_twin_check_positive_int_refuses_alike(bad):
    for checks in (np_checks, tf_checks):
        with pytest.raises(ValueError, match=r"^d_model: expected a positive int, got"):
            checks.check_positive_int("d_model", bad)
    assert tf_checks.check_positive_int("d_model", np.int64(3)) == 3


def test_twin_check_rng_names_the_argument():
    for checks in (np_checks, tf_checks):
        with pytest.raises(TypeError, match=r"^rng: expected a .*Generator.* or None, got int"):
            checks.check_rng("rng", 5)
    gen = torch.Generator()
    assert tf_checks.check_rng("rng", gen) is gen


def test_layer_constructors_name_the_bad_argument():
    from torchformer.layers.dropout import Dropout
    from torchformer.layers.linear import Linear
    with pytest.raises(ValueError, match=r"^out_features: expected a positive int, got 0"):
        Linear(3, 0)
    with pytest.raises(TypeError, match=r"^p: expected a float in \[0, 1\), got str"):
        Dropout("0.5")
