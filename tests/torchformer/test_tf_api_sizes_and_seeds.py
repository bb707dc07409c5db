"""The Python API of both twins refuses, with one message naming the argument, what cannot work:
sampling seeds (one check, the shared `check_seed`), beam searches whose rows cannot fit in memory
(a bound from the shapes, checked before any row is repeated) and training sizes (TrainConfig's
batch_size and eval_size) whose arrays cannot fit, refused before a batch is drawn."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf
from npformer.data.tasks import make_task
from npformer.decoding.sampling import sample as np_sample
from npformer.guards import rules
from npformer.training.train import TrainConfig, model_config_for
from npformer.training.train import train as np_train
from torchformer.decoding.sampling import sample as tf_sample
from torchformer.training.train import train as tf_train

CFG = nf.TransformerConfig(vocab_size=13, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                           num_encoder_layers=1, num_decoder_layers=1, max_len=16, dropout=0.0)
SRC = np.array([[5, 6, 2], [7, 2, 0]])
PROMPTS = np.array([[1, 5, 6], [1, 9, 0]])


@pytest.fixture(scope="module")
def models():
    return {"np": (nf.Transformer(CFG, seed=0), nf.CausalLM(CFG, seed=0), nf, np_sample),
            "torch": (tf.Transformer(CFG, seed=0), tf.CausalLM(CFG, seed=0), tf, tf_sample)}


@pytest.mark.parametrize("twin", ["np", "torch"])
@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", 2 ** 63])
def test_sample_seed_refused_by_the_shared_seed_check(models, twin, seed):
    _, lm, _, sample = models[twin]
    with pytest.raises(ValueError) as err:
        sample(lm, PROMPTS, seed=seed, max_new_tokens=2)
    with pytest.raises(ValueError) as shared:
        rules.check_seed(seed)
    assert str(err.value) == str(shared.value)


@pytest.mark.parametrize("twin", ["np", "torch"])
def test_sample_takes_a_numpy_integer_seed_in_both_twins(models, twin):
    _, lm, _, sample = models[twin]
    a = sample(lm, PROMPTS, seed=np.int64(3), max_new_tokens=3).tokens
    b = sample(lm, PROMPTS, seed=3, max_new_tokens=3).tokens
    assert np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("twin", ["np", "torch"])
def test_beam_beyond_any_memory_refused_naming_beam_size(models, twin):
    mt, _, api, _ = models[twin]
    with pytest.raises(ValueError, match=r"beam_size: expected a decode that fits .*beam_size=10+ "):
        api.beam_search(mt, SRC, beam_size=10 ** 12)


@pytest.mark.parametrize("twin", ["np", "torch"])
@pytest.mark.parametrize("which", ["transformer", "causal_lm"])
def test_beam_over_this_machines_memory_refused_before_the_search(models, twin, which, monkeypatch):
    """With the machine's memory said to be 64 KiB, 64 beams of 2 items cannot fit (each row needs at
    least 3 float64 rows of 13 scores); 1 beam of 2 items does."""
    mt, lm, api, _ = models[twin]
    model, inputs = (mt, SRC) if which == "transformer" else (lm, PROMPTS)
    monkeypatch.setattr(rules, "physical_memory", lambda: 64 * 1024)
    with pytest.raises(ValueError, match=r"beam_size: .*\(64\.0 KiB\)") as err:
        api.beam_search(model, inputs, beam_size=64, max_new_tokens=2)
    assert "beam_size=64 for a batch of 2" in str(err.value)
    api.beam_search(model, inputs, beam_size=1, max_new_tokens=2)


def test_cuda_model_bounds_its_part_by_the_gpus_memory(models):
    """The torch step reports no separate device memory for a CPU model."""
    mt = models["torch"][0]
    from torchformer.decoding.generate import TORCH_STEP
    assert TORCH_STEP.device_memory(mt) is None
    if torch.cuda.is_available():
        assert TORCH_STEP.device_memory(mt.to("cuda")) == torch.cuda.get_device_properties(0).total_memory


TASK = make_task("reverse")
TASK_CFG = model_config_for(TASK, d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1,
                            num_decoder_layers=1)
TRAINERS = {"np": (nf.Transformer, np_train), "torch": (tf.Transformer, tf_train)}


@pytest.mark.parametrize("twin", ["np", "torch"])
@pytest.mark.parametrize("sizes, name", [(dict(batch_size=1000), "batch_size"),
                                         (dict(batch_size=1, eval_size=1000, eval_every=1), "eval_size")])
def test_training_sizes_over_this_machines_memory_refused_naming_the_field(twin, sizes, name,
                                                                           monkeypatch):
    """Memory said to be 64 KiB: 1000 examples of reverse (rows of 11 tokens, 2 heads, vocabulary 13:
    1,540 bytes of attention weights and logits each in float32) cannot fit, nor 1000 held-out
    examples (176 bytes of int64 ids each); nothing is trained."""
    cls, train = TRAINERS[twin]
    model = cls(TASK_CFG, seed=0)
    before = {k: _array(v) for k, v in model.state_dict().items()}
    monkeypatch.setattr(rules, "physical_memory", lambda: 64 * 1024)
    with pytest.raises(ValueError, match=rf"TrainConfig\.{name}: expected .*\(64\.0 KiB\), got 1,000"):
        train(model, TASK, TrainConfig(steps=1, progress=False, **sizes))
    assert all(np.array_equal(before[k], _array(v)) for k, v in model.state_dict().items())


def _array(v) -> np.ndarray:
    return v.detach().cpu().numpy().copy() if isinstance(v, torch.Tensor) else np.array(v)
