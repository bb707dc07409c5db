"""The torch backends' session (torchformer and stock torch.nn, CPU and CUDA): the same weights and
inputs as every other backend (benchmarks/backends.py), timed per workload."""
from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np

from benchmarks.backends import BOS, Backend, Inputs, NotApplicable, Session


class TorchSession(Session):
    def __init__(self, bc, backend: Backend, master_state: dict, inputs: Inputs, threads: int):
        import torch
        import torch.nn.functional as F

        self.torch, self.F = torch, F
        self.bc, self.backend = bc, backend
        dev = torch.device(backend.device)
        self.dev = dev
        tcfg = bc.transformer_config("float32")
        self.tcfg = tcfg
        if backend.impl == "torchformer":
            self.model = tf_model(bc.model, tcfg, dev)
            self.model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v))
                                        for k, v in master_state.items()})
            if backend.attention == "explicit":
                from torchformer.layers.attention import set_need_weights
                set_need_weights(self.model, True)
        else:
            from benchmarks.stock import build_stock, load_from_twin_state
            self.model = build_stock(tcfg, bc.model, device=dev)
            load_from_twin_state(self.model, master_state)
            self.kv_cache = False
        self.model.to(dev)
        self.run_model = self.model
        if backend.compile:
            self.run_model = torch.compile(self.model)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        t = lambda a: torch.from_numpy(a).to(dev)  # noqa: E731
        self.src, self.tgt_in, self.tgt_out = t(inputs.src), t(inputs.tgt_in), t(inputs.tgt_out)
        self.gen_src = t(inputs.gen_src)

    @contextlib.contextmanager
    def _numerics(self):
        """TF32 flags and autocast of this backend, restored afterwards."""
        torch = self.torch
        old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = self.backend.tf32
        torch.backends.cudnn.allow_tf32 = self.backend.tf32
        try:
            if self.backend.autocast:
                with torch.autocast(device_type=self.dev.type,
                                    dtype=getattr(torch, self.backend.autocast)):
                    yield
            else:
                yield
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old

    def _logits(self, model, src=None, tgt=None):
        src = self.src if src is None else src
        tgt = self.tgt_in if tgt is None else tgt
        if self.bc.model == "seq2seq":
            return model(src, tgt)
        return model(tgt)

    def fn(self, workload: str) -> Callable[[], object]:
        torch, F, m = self.torch, self.F, self.run_model
        V = self.tcfg.tgt_vocab

        def forward():
            self.model.eval()
            with torch.no_grad(), self._numerics():
                return self._logits(m)

        def fwd_bwd():
            self.model.train()
            self.opt.zero_grad(set_to_none=True)
            with self._numerics():
                logits = self._logits(m)                                  # (B, T, V)
                loss = F.cross_entropy(logits.reshape(-1, V).float(), self.tgt_out.reshape(-1))
            loss.backward()
            return loss

        def train_step():
            loss = fwd_bwd()
            self.opt.step()
            return loss

        if workload == "forward":
            return forward
        if workload == "fwd_bwd":
            return fwd_bwd
        if workload == "train_step":
            return train_step
        if workload == "generate":
            if self.backend.compile:
                raise NotApplicable("torch.compile would recompile for every new KV-cache length")
            return self._generate
        raise ValueError(f"workload: unknown {workload!r}")

    def _generate(self):
        torch = self.torch
        self.model.eval()
        with torch.no_grad(), self._numerics():
            if self.backend.impl == "torch.nn":
                return self._generate_stock()
            from torchformer.decoding.generate import greedy_decode
            return greedy_decode(self.model, self.gen_src, max_new_tokens=self.bc.gen_tokens,
                                 eos_id=None)

    def _generate_stock(self):
        """nn.TransformerDecoder has no KV cache: every step re-runs the decoder on the whole prefix."""
        torch, m, bc = self.torch, self.model, self.bc
        B = self.gen_src.shape[0]
        if bc.model == "seq2seq":
            memory = m.encode(self.gen_src)
            seq = torch.full((B, 1), BOS, dtype=torch.long, device=self.dev)
            run = lambda s: m.decode(s, memory, self.gen_src)  # noqa: E731
        else:
            seq = self.gen_src
            run = m
        for _ in range(bc.gen_tokens):
            nxt = run(seq)[:, -1].argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], dim=1)
        return seq

    def logits(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        torch = self.torch
        self.model.eval()
        with torch.no_grad(), self._numerics():
            out = self._logits(self.model, torch.from_numpy(src).to(self.dev),
                               torch.from_numpy(tgt).to(self.dev))
        return out.double().cpu().numpy()

    def compile_stats(self) -> dict[str, int] | None:
        if not self.backend.compile:
            return None
        from torch._dynamo.utils import counters
        return {"graph_breaks": int(sum(counters["graph_break"].values())),
                "unique_graphs": int(counters["stats"].get("unique_graphs", 0))}

    def close(self) -> None:
        if self.backend.compile:
            from torch._dynamo.utils import counters
            counters.clear()
            self.torch._dynamo.reset()
        if self.backend.cuda:
            self.torch.cuda.empty_cache()


def tf_model(model: str, tcfg, dev):
    if model == "seq2seq":
        from torchformer.models.transformer import Transformer
        return Transformer(tcfg, seed=0, device=dev)
    from torchformer.models.causal_lm import CausalLM
    return CausalLM(tcfg, seed=0, device=dev)
