"""torchformer's adapter for the model properties of tests/npformer/model_invariants.py: builds
torchformer models through the public API, runs autograd for the input and parameter gradients
(the first layers' kept inputs: `decoder_input`, `encoder_input`) and returns NumPy arrays.
`need_weights`: True runs attention by the explicit path (its weights are compared), False by
torch's scaled_dot_product_attention (no weights kept)."""
from __future__ import annotations

import numpy as np
import torch

import torchformer
from tests.npformer.model_invariants import Twin


class TorchTwin(Twin):
    name = "torch"

    def __init__(self, need_weights: bool = True):
        self.fast, self.need_weights, self.api = False, need_weights, torchformer

    def __repr__(self) -> str:
        return f"torch-{'explicit' if self.need_weights else 'sdpa'}"

    def build(self, cls: str, config, seed: int, train: bool):
        m = getattr(torchformer, cls)(config, seed=seed)
        m.train(train)
        return torchformer.set_need_weights(m, self.need_weights)

    def to_np(self, x):
        return None if x is None else x.detach().cpu().numpy()

    def weights(self, model) -> dict[str, np.ndarray]:
        return {n: self.to_np(m.attn_weights) for n, m in model.named_modules()
                if getattr(m, "attn_weights", None) is not None}

    def backward(self, model, raw, upstream: np.ndarray, inputs: tuple[str, ...]) -> dict:
        raw.backward(torch.from_numpy(upstream).to(raw.dtype))
        return {k: self.to_np(getattr(model, k).grad) for k in inputs}

    def param_grads(self, model) -> dict[str, np.ndarray]:
        return {n: np.zeros(tuple(p.shape)) if p.grad is None else self.to_np(p.grad)
                for n, p in model.named_parameters()}

    def loss(self, **kw):
        return torchformer.CrossEntropyLoss(**kw)

    def as_targets(self, ids: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(ids))

    def loss_backward(self, model, loss, loss_fn, logits) -> float:
        model.zero_grad()
        loss.backward()
        return float(loss.item())
