"""A byte-level BPE model of your own text never generates the ids of bytes no corpus can hold:
"\\r" (line ends are read as "\\n") and the bytes UTF-8 never uses (0xC0, 0xC1, 0xF5..0xFF). They
are untrained, so a sampled one printed U+FFFD or a carriage return; they are now in the task's
`suppress_ids` (language model and translation targets) beside PAD, BOS and EOS."""
import numpy as np
import pytest

from npformer.data.registry import build_text_task_from_files
from npformer.data.text_lm import UNWRITTEN_BYTES, unwritten_byte_ids
from npformer.data.tokenizers.bpe import BYTE0
from npformer.decoding import sample

# every kind of text a user's files hold: Windows and old-Mac line ends, a BOM, tabs, scripts, emoji,
# combining marks, the highest code point
TEXT = ("\ufeffWindows line\r\nold Mac line\rtab\there naïve café e\u0301 日本語 Ω 😀 \U0010ffff "
        "ǅ ﬁ\n") * 60


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    d = tmp_path_factory.mktemp("text")
    (d / "all.txt").write_bytes(TEXT.encode("utf-8"))
    (d / "pairs.tsv").write_bytes(("".join(f"{w} {i}\t{w[::-1]} {i}\r\n" for i in range(60)
                                           for w in ("naïve", "日本", "😀x"))).encode())
    lm = build_text_task_from_files("lm", [str(d / "all.txt")], tokenizer="bpe", vocab_size=300,
                                    context=16)
    mt = build_text_task_from_files("translate", [str(d / "pairs.tsv")], tokenizer="bpe",
                                    vocab_size=300, context=16)
    return lm, mt


def test_the_unwritten_bytes_are_cr_and_the_bytes_utf8_never_uses():
    # a lead byte depends on the code point's bits above the lowest 6, a continuation byte on those
    # 6: every 64th code point and the first 256 write every byte UTF-8 uses
    points = [*range(0, 0x110000, 64), *range(0x100)]
    used = set(b"".join(chr(c).encode("utf-8", "surrogatepass") for c in points))
    never = set(range(256)) - used
    assert set(UNWRITTEN_BYTES) == never | {0x0D}
    assert unwritten_byte_ids() == [BYTE0 + b for b in UNWRITTEN_BYTES]


def test_no_text_encodes_to_them_and_they_are_suppressed(tasks):
    lm, mt = tasks
    held = set(np.concatenate(lm.arrays()).tolist())
    assert not held & set(unwritten_byte_ids())                   # the corpus never holds them
    assert lm.suppress_ids == [0, 1, 2, *unwritten_byte_ids()]
    assert mt.suppress_ids == [0, 1, *unwritten_byte_ids()]
    assert 2 not in mt.suppress_ids                                # a translation ends with EOS


def test_sampling_never_draws_them_however_likely(tasks):
    """A model whose output bias makes an unwritten byte's id by far the likeliest still samples
    only text ids."""
    from npformer.training.train import build_model, model_config_for
    lm, _ = tasks
    model = build_model(model_config_for(lm, d_model=16, num_heads=2, d_ff=16, num_encoder_layers=0,
                                         num_decoder_layers=1, dtype="float64"), lm, seed=0)
    bias = dict(model.named_parameters())["output_proj.bias"].data
    bias[BYTE0 + 0x0D] = 50.0                                     # "\r" would win every draw
    bias[BYTE0 + 0xFF] = 49.0
    out = sample(model, np.array([[BYTE0 + ord("a")]]), max_new_tokens=12, temperature=1.0, seed=0,
                 eos_id=None, suppress_ids=lm.suppress_ids)
    assert not set(np.asarray(out.tokens).ravel().tolist()) & set(unwritten_byte_ids())
