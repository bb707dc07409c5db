"""Module.train's mode is a bool, as in torch: anything else is refused, naming the module and the
argument, and leaves the modes as they were."""
import numpy as np
import pytest

import npformer as nf


@pytest.mark.parametrize("mode", ["no", "eval", 0, 1, None, 1.0])
def test_train_refuses_a_mode_that_is_not_a_bool(mode):
    model = nf.Transformer(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                                                num_decoder_layers=1, vocab_size=11))
    model.eval()
    with pytest.raises(ValueError, match=r"Transformer\.train: mode: expected a bool"):
        model.train(mode)
    assert not any(m.training for _, m in model.named_modules())     # nothing switched


@pytest.mark.parametrize("mode, want", [(True, True), (False, False), (np.bool_(False), False)])
def test_train_takes_python_and_numpy_bools(mode, want):
    layer = nf.Linear(2, 3)
    assert layer.train(mode) is layer and layer.training is want
    assert layer.eval().training is False and layer.train().training is True
