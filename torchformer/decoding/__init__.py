"""Decoding: greedy (generate), beam search (beam) and sampling (sampling), with the KV cache."""
from torchformer.decoding.beam import beam_search
from torchformer.decoding.generate import BeamOutput, GenerateOutput, greedy_decode
from torchformer.decoding.sampling import sample

__all__ = ["greedy_decode", "beam_search", "sample", "GenerateOutput", "BeamOutput"]
