"""Two opaque ops used only inside torch.compile graphs on the CPU: dropout noise and ReLU.

Why: TorchInductor's C++ backend (torch 2.13, measured on this project's AVX-512 machine) writes
bool tensors very slowly: a kernel storing `x <= 0` for 131k floats took 1.8 ms against 40 us for
the same comparison stored as float. Left to itself, the compiled graph stores exactly such bool
tensors: ReLU's backward mask (the partitioner saves `y <= 0` rather than the float output) and
dropout's keep-mask (`rand >= p`, drawn by a scalar per-element Philox generator, itself slow).
With them, torch.compile made the `small` benchmark's fwd_bwd 1.6x SLOWER than eager.

So, on the CPU under compile only:

- `keep_noise(x, p)` returns the scaled keep-noise n = (U >= p) / (1 - p), U ~ U[0, 1), in x's
  dtype, drawn by ATen's vectorised generator as an opaque call (tagged nondeterministic_seeded so
  no pass merges two draws); the caller computes y = x * n and autograd saves the float noise.
- `relu(x)` is ATen's relu as an opaque call whose backward is written here,
  dL/dx = dL/dy * [y > 0], from the saved float output; the compiled backward fuses that into one
  pass and stores no bool tensor. Used only when x requires grad: without a backward there is no
  mask to store, and inductor's own fused ReLU is the faster choice.

Eager code and other devices never call these (the eager paths are faster as they are, and on
CUDA Triton fuses ReLU and dropout into their neighbours, which an opaque op would prevent).
"""
from __future__ import annotations

import torch
from torch import Tensor


@torch.library.custom_op("torchformer::keep_noise", mutates_args=(),
                         tags=(torch.Tag.nondeterministic_seeded,))
def keep_noise(x: Tensor, p: float) -> Tensor:
    """(U >= p) / (1 - p) of x's shape and dtype; x's values are not read."""
    return torch.rand_like(x).ge_(p).mul_(1.0 / (1.0 - p))          # (x.shape) 0 or 1/(1-p)


@keep_noise.register_fake
def _keep_noise_fake(x: Tensor, p: float) -> Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("torchformer::relu", mutates_args=())
def relu(x: Tensor) -> Tensor:
    """max(0, x)."""
    return torch.relu(x)


@relu.register_fake
def _relu_fake(x: Tensor) -> Tensor:
    return torch.empty_like(x)


def _relu_setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(output)                                     # y, float


def _relu_backward(ctx, grad: Tensor) -> Tensor:
    (y,) = ctx.saved_tensors
    return torch.where(y > 0, grad, torch.zeros_like(grad))          # dL/dx = dL/dy * [y > 0]


relu.register_autograd(_relu_backward, setup_context=_relu_setup)
