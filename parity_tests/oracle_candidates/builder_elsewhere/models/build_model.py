"""Builds the package's translators from sizes (model/translator.py holds the classes). Our own
code; `build_unscaled` builds the BUG twin."""
from torch import nn

from models.model.translator import (
    FFN,
    MHA,
    DecoderLayer,
    Embed,
    EncoderLayer,
    Stack,
    Translator,
    TranslatorUnscaled,
    UnscaledEmbed,
)


def _stacks(n_layers, d_model, d_ff, n_heads):
    enc = Stack(nn.ModuleList(EncoderLayer(MHA(n_heads, d_model), FFN(d_model, d_ff), d_model)
                              for _ in range(n_layers)))
    dec = Stack(nn.ModuleList(DecoderLayer(MHA(n_heads, d_model), MHA(n_heads, d_model),
                                           FFN(d_model, d_ff), d_model) for _ in range(n_layers)))
    return enc, dec


def build_translator(src_vocab_size, tgt_vocab_size, n_layers=2, d_embed=32, d_model=32, d_ff=64,
                     n_heads=4, device="cpu"):
    enc, dec = _stacks(n_layers, d_model, d_ff, n_heads)
    model = Translator(enc, dec, Embed(src_vocab_size, d_embed), Embed(tgt_vocab_size, d_embed),
                       nn.Linear(d_model, tgt_vocab_size)).to(device)
    return model


def build_unscaled(src_vocab_size, tgt_vocab_size, n_layers=2, d_embed=32, d_model=32, d_ff=64,
                   n_heads=4, device="cpu"):
    enc, dec = _stacks(n_layers, d_model, d_ff, n_heads)
    return TranslatorUnscaled(enc, dec, UnscaledEmbed(src_vocab_size, d_embed),
                              UnscaledEmbed(tgt_vocab_size, d_embed),
                              nn.Linear(d_model, tgt_vocab_size)).to(device)
