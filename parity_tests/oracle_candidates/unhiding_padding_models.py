"""A model taking key paddings (batch, length), as key_padding_models.py's does, that never applies
its source padding: no padded token is ever hidden (BUG twin of key_padding_models.PaddedSeq2Seq)."""
from key_padding_models import PaddedSeq2Seq


class PaddingIgnoringSeq2SeqBUG(PaddedSeq2Seq):
    """BUG: the source padding is never applied (every source token is attended)."""

    def forward(self, input_sequence, input_attention_mask, output_sequence, output_attention_mask):
        b, s = input_attention_mask.shape                          # (batch, length) only
        everything = input_attention_mask.new_ones((b, s))
        return super().forward(input_sequence, everything, output_sequence, output_attention_mask)
