"""Decoding: greedy (generate), beam search (beam) and sampling (sampling), with the KV cache."""
from npformer.decoding.beam import beam_search
from npformer.decoding.generate import BeamOutput, GenerateOutput, greedy_decode
from npformer.decoding.sampling import sample

__all__ = ["greedy_decode", "beam_search", "sample", "GenerateOutput", "BeamOutput"]
