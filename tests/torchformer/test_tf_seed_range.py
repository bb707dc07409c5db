"""Seeds are 64-bit in both twins: a seed from 0 to 2**63 - 1 works in npformer and torchformer alike
(torch's generators take 64 bits, and the dropout generator is seeded with seed + 1); a larger one
is refused by both with the same message naming `seed` (torchformer raised torch's bare
"Overflow when unpacking long long", npformer accepted it, so a run could not move between
backends), and by the command line's --seed before any work."""
import numpy as np
import pytest

import npformer as nf
import npformer.decoding as nf_decoding
import torchformer as tf
import torchformer.decoding as tf_decoding
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

LARGEST = 2**63 - 1


def config():
    return nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                                num_decoder_layers=1, vocab_size=9, max_len=8, pad_id=0,
                                dropout=0.1)


def lm_config():
    return nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=0,
                                num_decoder_layers=1, vocab_size=9, max_len=8, pad_id=0)


def message(fn):
    with pytest.raises(ValueError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1, 2**64, 10**30])
def test_a_seed_beyond_63_bits_is_refused_alike_by_both_constructors(seed):
    a = message(lambda: nf.Transformer(config(), seed=seed))
    b = message(lambda: tf.Transformer(config(), seed=seed))
    assert a == b
    assert a.startswith("seed:") and str(seed) in a and "2**63 - 1" in a


def test_the_largest_seed_builds_the_same_model_in_both_twins():
    a, b = nf.Transformer(config(), seed=LARGEST), tf.Transformer(config(), seed=LARGEST)
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(v, b.state_dict()[k].detach().numpy(), err_msg=k)


@pytest.mark.parametrize("seed", [2**63, 2**64])
def test_sampling_seeds_beyond_63_bits_are_refused_alike(seed):
    prompts = np.array([[1, 3, 4]])
    a = message(lambda: nf_decoding.sample(nf.CausalLM(lm_config()), prompts, max_new_tokens=2, seed=seed))
    b = message(lambda: tf_decoding.sample(tf.CausalLM(lm_config()), prompts, max_new_tokens=2, seed=seed))
    assert a == b and a.startswith("seed:") and str(seed) in a
    nf_decoding.sample(nf.CausalLM(lm_config()), prompts, max_new_tokens=2, seed=LARGEST)
    tf_decoding.sample(tf.CausalLM(lm_config()), prompts, max_new_tokens=2, seed=LARGEST)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_cli_seed_beyond_63_bits_is_refused_before_any_work(backend, capsys):
    code, out, err = run(["train", *tiny_train_args(), "--backend", backend,
                          "--seed", str(2**64)], capsys)
    assert code == 2 and out == "", err
    assert "--seed" in err and str(2**64) in err and "Overflow" not in err


def test_cli_generate_seed_beyond_63_bits_is_refused(tmp_path, capsys):
    ckpt, text = tmp_path / "lm.npz", tmp_path / "t.txt"
    text.write_text("hello world. " * 20)
    code, _, err = run(["train", "--task", "lm", "--data", str(text), "--context", "8",
                        "--d-model", "8", "--heads", "2", "--layers", "1", "--d-ff", "16",
                        "--steps", "1", "--eval-size", "2", "--no-progress", "--save", str(ckpt)],
                       capsys)
    assert code == 0, err
    code, out, err = run(["generate", str(ckpt), "hello", "--backend", "torch",
                          "--seed", str(2**64)], capsys)
    assert code == 2 and out == "", err
    assert "--seed" in err and "Overflow" not in err
