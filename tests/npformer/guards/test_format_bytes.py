"""One byte-size formatter, npformer.guards.rules.format_bytes, writes every size in both twins'
messages: the memory bounds of npformer.guards.rules and the checkpoint limits of
npformer.io.checkpoint_read (each had its own copy, with different units and rounding)."""
import pytest

import npformer.guards.rules as rules
import npformer.io.checkpoint_read as checkpoint_read
from npformer.guards.rules import format_bytes


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (1, "1 B"), (1023, "1023 B"),
    (1024, "1.0 KiB"), (1536, "1.5 KiB"), (64 * 1024, "64.0 KiB"),
    (2**20 - 1, "1,024.0 KiB"), (2**20, "1.0 MiB"), (5 * 2**30 // 2, "2.5 GiB"),
    (2**47, "128.0 TiB"), (2**50, "1.0 PiB"), (3 * 2**60, "3,072.0 PiB"),
])
def test_sizes_are_written_in_the_largest_unit_they_reach(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize("bad", ["1024", None, True])
def test_a_value_that_is_not_a_number_of_bytes_is_named(bad):
    with pytest.raises(TypeError, match="nbytes: expected a number of bytes, got "):
        format_bytes(bad)


def test_one_formatter_serves_the_rules_the_checkpoint_reader_and_the_torch_twin():
    assert checkpoint_read.format_bytes is format_bytes
    tf_validation = pytest.importorskip("torchformer.guards.validation")
    assert tf_validation.format_bytes is format_bytes
    assert not hasattr(rules, "_size") and not hasattr(checkpoint_read, "_fmt_bytes")


def test_the_memory_rules_write_small_memories_in_their_unit(monkeypatch):
    """A machine said to have 1,536 bytes: its memory is written "1.5 KiB" (the rule's own copy
    wrote sizes under 1 MiB in KiB only, and the config rule everything in GiB: "0.0 GiB")."""
    monkeypatch.setattr(rules, "physical_memory", lambda: 1536)
    config = rules.TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                                     num_decoder_layers=1, max_len=4, vocab_size=5)
    with pytest.raises(ValueError) as err:
        rules.check_config_fits_memory("config", config)
    assert "fits in this machine's available memory (1.5 KiB), got at least" in str(err.value)
