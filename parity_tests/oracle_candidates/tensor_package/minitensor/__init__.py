"""A small autograd package of the candidate's own, imported whole (`import minitensor as mt`):
its `Tensor` is reached only as `mt.Tensor`, its functions (`mt.mean`, `mt.sqrt`) read `.data`."""
from .engine import Tensor, mean, ones, sqrt, zeros

__all__ = ["Tensor", "mean", "ones", "sqrt", "zeros"]
