"""A config whose weights alone cannot fit in this machine's memory is refused by both twins'
model constructors at once, naming the sizes, before anything is allocated: num_encoder_layers=10**9
used to build small layers until the process was killed, d_model=2**20 to ask numpy for 8 TiB and
fail with a bare MemoryError. Models that fit still build."""
import re
import time

import pytest

import npformer as nf
from npformer.guards.rules import physical_memory

tf = pytest.importorskip("torchformer")

BASE = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
            vocab_size=11, pad_id=0, max_len=8)
ABSURD = {"layers": dict(num_encoder_layers=10 ** 9), "width": dict(d_model=2 ** 20),
          "vocabulary": dict(vocab_size=10 ** 12), "float64 layers": dict(num_decoder_layers=10 ** 9,
                                                                          dtype="float64")}


@pytest.mark.skipif(physical_memory() is None, reason="the platform does not report its memory")
@pytest.mark.parametrize("twin", [nf, tf], ids=["npformer", "torchformer"])
@pytest.mark.parametrize("model", ["Transformer", "CausalLM", "EncoderClassifier"])
@pytest.mark.parametrize("fields", ABSURD.values(), ids=ABSURD.keys())
def test_a_config_beyond_memory_is_refused_before_building(twin, model, fields):
    config = nf.TransformerConfig(**{**BASE, **fields})
    start = time.perf_counter()
    with pytest.raises(ValueError, match=re.escape("config: expected a model that fits in this "
                                                   "machine's")) as err:
        getattr(twin, model)(config)
    assert time.perf_counter() - start < 5                 # refused, not attempted
    for field in ("d_model", "num_encoder_layers", "num_decoder_layers", "max_len"):
        assert f"{field}={getattr(config, field)}" in str(err.value)
    assert f"in {config.dtype}" in str(err.value)


@pytest.mark.parametrize("twin", [nf, tf], ids=["npformer", "torchformer"])
def test_models_that_fit_still_build(twin):
    config = nf.TransformerConfig(**{**BASE, "num_encoder_layers": 3, "vocab_size": 5000})
    assert type(twin.Transformer(config)).__name__ == "Transformer"
