"""NumPy numbers are taken wherever a Python number is, as the models, configs, tasks and optimizers
already take them: `beam_search(length_penalty_alpha=np.float32(0.6))` (both twins),
`accelerate(model, threads=np.int64(2))` and `train(..., fast_threads=np.int64(1))` were refused
with "expected a float/int, got np.float32(0.6)", and sampling's `temperature` / `top_p` refused
NumPy integers that Python's were taken as, and `CrossEntropyLoss(label_smoothing=np.float32(0.1))`
was refused by both twins; each gives what the Python number gives.
`from_pretrained(..., num_labels=np.int64(3), seed=np.int64(1))` already did (regression guard)."""
import numpy as np
import pytest

import npformer as nf
from npformer.data.tasks import Task
from npformer.fast.accelerate import accelerate, accelerated_threads
from npformer.training.train import TrainConfig, build_model, model_config_for, train

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, vocab_size=11, max_len=16,
                           num_encoder_layers=1, num_decoder_layers=1)
SRC = np.array([[3, 4, 5, 2], [3, 4, 2, 0]])


def _twins():
    out = [(nf, lambda a: a)]
    try:
        import torch

        import torchformer as tf
        out.append((tf, torch.from_numpy))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("twin, to", _twins(), ids=lambda t: getattr(t, "__name__", ""))
@pytest.mark.parametrize("alpha", [np.float32(0.5), np.float64(0.5), np.int64(1)], ids=repr)
def test_beam_search_takes_a_numpy_length_penalty(twin, to, alpha):
    model = twin.Transformer(CFG, seed=0).eval()
    got = twin.beam_search(model, to(SRC), beam_size=2, max_new_tokens=3, length_penalty_alpha=alpha)
    want = twin.beam_search(model, to(SRC), beam_size=2, max_new_tokens=3,
                            length_penalty_alpha=float(alpha))
    assert np.array_equal(np.asarray(got.tokens), np.asarray(want.tokens))
    assert np.array_equal(np.asarray(got.scores), np.asarray(want.scores))


def test_accelerate_takes_numpy_threads_as_python_ones():
    model = accelerate(nf.Transformer(CFG, seed=0), np.int64(2))
    assert accelerated_threads(model) == 2 and type(accelerated_threads(model)) is int
    for bad in (0, 2.0, True, "2"):
        with pytest.raises(ValueError, match="threads: expected a positive int, got "):
            accelerate(nf.Transformer(CFG, seed=0), bad)


def test_train_takes_numpy_fast_threads():
    task = Task("reverse", num_symbols=4, max_len=3)
    runs = []
    for threads in (np.int64(1), 1):
        model = build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=16,
                                             num_encoder_layers=1, num_decoder_layers=1), task, seed=0)
        runs.append(train(model, task, TrainConfig(steps=2, batch_size=4, progress=False),
                          fast_threads=threads).losses)
    assert runs[0] == runs[1]


def test_from_pretrained_takes_numpy_num_labels_and_seed(tmp_path):
    pytest.importorskip("transformers")
    from npformer.io.hub import from_pretrained
    from tests.npformer.io.tiny_folders import bert_folder
    folder = bert_folder(tmp_path / "bert", head="BertModel")
    got = from_pretrained(folder, kind="bert_cls", num_labels=np.int64(3), seed=np.int64(1))
    want = from_pretrained(folder, kind="bert_cls", num_labels=3, seed=1)
    assert got.config.num_classes == 3
    for (name, a), (_, b) in zip(got.named_parameters(), want.named_parameters()):
        assert np.array_equal(a.data, b.data), name


@pytest.mark.parametrize("twin, to", _twins(), ids=lambda t: getattr(t, "__name__", ""))
@pytest.mark.parametrize("kwargs", [dict(temperature=np.int64(2)), dict(top_p=np.int64(1)),
                                    dict(temperature=np.int32(1), top_p=np.int8(1))], ids=repr)
def test_sampling_takes_numpy_integers_where_it_takes_python_ones(twin, to, kwargs):
    lm = twin.CausalLM(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, vocab_size=11,
                                            max_len=16, num_decoder_layers=1), seed=0).eval()
    sample = twin.decoding.sampling.sample
    got = sample(lm, to(SRC[:, :2]), max_new_tokens=3, seed=4, **kwargs)
    want = sample(lm, to(SRC[:, :2]), max_new_tokens=3, seed=4, **{k: int(v) for k, v in kwargs.items()})
    assert np.array_equal(np.asarray(got.tokens), np.asarray(want.tokens))


@pytest.mark.parametrize("twin, to", _twins(), ids=lambda t: getattr(t, "__name__", ""))
def test_the_loss_takes_a_numpy_label_smoothing_and_ignore_index(twin, to):
    rng = np.random.default_rng(0)
    logits, targets = rng.standard_normal((6, 5)).astype(np.float32), np.array([1, 0, 4, 0, 2, 3])
    got = twin.CrossEntropyLoss(ignore_index=np.int64(0), label_smoothing=np.float32(0.25))
    want = twin.CrossEntropyLoss(ignore_index=0, label_smoothing=0.25)
    assert (type(got.ignore_index), type(got.label_smoothing)) == (int, float)
    assert float(got(to(logits), to(targets))) == float(want(to(logits), to(targets)))
