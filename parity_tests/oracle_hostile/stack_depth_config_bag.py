"""Hostile: a whole model built from a config object of the caller's (no config class of its own), that
builds its decoder with the encoder's depth (`config.num_encoder_layers` read for both)."""

from stack_count_unread import StackDepthTransformer


class BagDepthTransformer(StackDepthTransformer):
    def __init__(self, config):
        c = config
        dec = c.num_encoder_layers if self.DEC_FROM_ENC else c.num_decoder_layers
        super().__init__(c.src_vocab_size, c.tgt_vocab_size, c.d_model, c.num_encoder_layers, dec,
                         c.num_heads, c.d_ff)


class BagDepthTransformerRight(BagDepthTransformer):
    """The right twin: each stack its own depth."""

    DEC_FROM_ENC = False


class BagOneDepthTransformer(BagDepthTransformer):
    """Right, with one depth for both stacks (`config.num_layers`)."""

    def __init__(self, config):
        c = config
        StackDepthTransformer.__init__(self, c.src_vocab_size, c.tgt_vocab_size, c.d_model, c.num_layers,
                                       c.num_layers, c.num_heads, c.d_ff)
