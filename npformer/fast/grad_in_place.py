"""Weight gradients made where `.grad` already lives: Linear's dW = G^T x written into the gradient
array, and an embedding's rows added into it, instead of a fresh array copied or added in.

The plain layers hand `accumulate` a new array: Linear's `dW = g2.T @ x2`, (O, I), and Embedding's
dense `dW`, (V, D) zeros with a few rows filled. Under FusedAdam every parameter is a
LazyZeroParameter (npformer.fast.lazy_grad): its `.grad` array survives the step, marked zero, and
the first `accumulate` copies the new array over it. So every step allocates each weight's
gradient again (fresh pages the kernel must fault in and zero) and copies it once more; for GPT-2
small's tied 50257 x 768 table that is 154 MB made, copied, then another 154 MB of zeros made and
added for the embedding's 128 rows.

    linear_module_backward     Linear.backward; when the weight's `.grad` is marked zero and can
                               take the product's output, dW = G^T x is computed into it
                               (np.matmul(..., out=)): the same BLAS call, the same bits
    embedding_module_backward  Embedding.backward; each looked-up row's gradient summed in a
                               (rows, D) array (np.add.at, the same additions in the same order as
                               the plain dense one), then added into `.grad`'s rows only

Equal to the plain methods bit for bit, with LazyZeroParameter's one exception, the sign of a zero:
the plain embedding adds 0.0 to every row of `.grad` it did not look up, which turns a -0.0 there
into +0.0; this one leaves those rows alone. Anything else (a plain Parameter, no `.grad` array yet,
an unexpected shape, dtype or layout) runs the plain step. npformer.fast.accelerate binds them.
"""
from __future__ import annotations

import numpy as np

from npformer.fast.lazy_grad import LazyZeroParameter
from npformer.layers.embedding import embedding_backward

__all__ = ["linear_module_backward", "embedding_module_backward", "gradient_array"]


def gradient_array(p, dtype) -> np.ndarray | None:
    """p's `.grad` array when it is a LazyZeroParameter whose gradient can be written in place: the
    array exists, has the data's shape, `dtype`, C order and is writeable; else None."""
    if not isinstance(p, LazyZeroParameter):
        return None
    grad = p.__dict__.get("grad")
    if grad is None or grad.shape != p.data.shape or grad.dtype != dtype:
        return None
    return grad if grad.flags.c_contiguous and grad.flags.writeable else None


def linear_module_backward(self, dout: np.ndarray) -> np.ndarray:
    """Linear.backward: dx = G W returned; dW = G^T x into `.grad` when it is marked zero."""
    cache, _ = self._require_cache()
    x, W, has_bias = cache
    O, I = W.shape
    g2 = dout.reshape(-1, O)                                   # (N, O) every leading position a row
    x2 = x.reshape(-1, I)                                      # (N, I)
    dx = (g2 @ W).reshape(x.shape)                             # (N, O) @ (O, I) -> (..., I)
    p = self.weight
    grad = gradient_array(p, np.result_type(g2, x2))
    if grad is not None and p.grad_is_zero:
        np.matmul(g2.T, x2, out=grad)                          # (O, N) @ (N, I) -> (O, I), in place
        p.__dict__["grad_is_zero"] = False
    else:
        p.accumulate(g2.T @ x2)                                # += dW: weights may be tied
    if self.bias is not None:
        self.bias.accumulate(g2.sum(axis=0))                   # (O,)
    return dx


def embedding_module_backward(self, dout: np.ndarray) -> None:
    """Embedding.backward: the looked-up rows' gradients added into `.grad`'s rows only."""
    cache, _ = self._require_cache()
    ids, (V, D), dtype, scale, padding_idx = cache
    p = self.weight
    grad = gradient_array(p, dtype)
    if grad is None:
        p.accumulate(embedding_backward(dout, cache))          # the plain dense (V, D) gradient
        return None
    g = dout.reshape(-1, D)                                    # (N, D) one row per position
    if scale != 1.0:
        g = g * scale                                          # (N, D)
    rows, where = np.unique(ids.reshape(-1), return_inverse=True)   # (R,) sorted ids, (N,) into them
    acc = np.zeros((rows.size, D), dtype=dtype)                # (R, D) the dense dW's nonzero rows
    np.add.at(acc, where.reshape(-1), g)                       # the plain sums, in the same order
    if padding_idx is not None:
        acc[rows == padding_idx] = 0                           # the padding row learns nothing
    if p.grad_is_zero:                                         # not tied (or first): zeros, then rows
        grad[...] = 0
        p.__dict__["grad_is_zero"] = False
    grad[rows] += acc                                          # (R, D) rows of grad + dW
    return None
