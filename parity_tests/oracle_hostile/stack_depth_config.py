"""Hostile: a whole model built from a config dataclass of its own holding both stack depths, that
builds its decoder with the encoder's depth (`config.num_encoder_layers` read for both)."""
from dataclasses import dataclass

from stack_count_unread import StackDepthTransformer


@dataclass
class Config:
    src_vocab_size: int = 100
    tgt_vocab_size: int = 100
    d_model: int = 512
    num_heads: int = 8
    d_ff: int = 2048
    num_encoder_layers: int = 6
    num_decoder_layers: int = 6


class ConfigDepthTransformer(StackDepthTransformer):
    def __init__(self, config):
        c = config
        dec = c.num_encoder_layers if self.DEC_FROM_ENC else c.num_decoder_layers
        super().__init__(c.src_vocab_size, c.tgt_vocab_size, c.d_model, c.num_encoder_layers, dec,
                         c.num_heads, c.d_ff)


class ConfigDepthTransformerRight(ConfigDepthTransformer):
    """The right twin: each stack its own depth."""

    DEC_FROM_ENC = False
