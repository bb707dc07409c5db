"""A random generator of the other library is named by its public name: npformer's Linear/Dropout
given a torch.Generator said "expected a numpy.random.Generator or None, got Generator", and
torchformer's Dropout given a numpy Generator "expected a torch.Generator or None, got Generator"."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf


@pytest.mark.parametrize("make, rng, got", [
    (lambda r: nf.Linear(4, 2, rng=r), torch.Generator(), "torch.Generator"),
    (lambda r: nf.Dropout(0.1, rng=r), torch.Generator(), "torch.Generator"),
    (lambda r: nf.Dropout(0.1, rng=r), np.random.RandomState(0), "numpy.random.RandomState"),
    (lambda r: tf.Dropout(0.1, rng=r), np.random.default_rng(0), "numpy.random.Generator"),
    (lambda r: tf.Linear(4, 2, rng=r), np.random.PCG64(0), "numpy.random.PCG64"),
    (lambda r: nf.Linear(4, 2, rng=r), 0, "int"),
], ids=lambda v: type(v).__name__ if not callable(v) else "")
def test_the_other_librarys_generator_is_named(make, rng, got):
    with pytest.raises(TypeError) as e:
        make(rng)
    assert str(e.value).startswith("rng: expected a ") and str(e.value).endswith(f"or None, got {got}")
