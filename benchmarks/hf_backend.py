"""The `hf-cpu` backend: Hugging Face `transformers` GPT2LMHeadModel on the CPU, same weights.

For causal configurations with GPT-2's layout (gpt2s-cpu): the npformer master weights are mapped
onto `transformers.GPT2LMHeadModel` by npformer.io.hub_mapping (the mapping `npformer
pretrained` uses), so the same-model check compares its logits like any other backend's. Workloads:
`forward` (eval, no grad) and `generate` (`model.generate`, greedy, KV cache, a fixed number of new
tokens: no end-of-sequence token stops it, as npformer's `eos_id=None`). Training workloads are
skipped (the twins' training is what the goals compare). Seq2seq configurations: skipped.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from benchmarks.backends import Backend, Inputs, NotApplicable, Session


class HFSession(Session):
    def __init__(self, bc, backend: Backend, master_state: dict, inputs: Inputs, threads: int):
        self.bc, self.backend = bc, backend
        self.kv_cache = True
        self.model = None
        self.why_not = None
        if bc.model != "causal":
            self.why_not = "transformers' GPT-2 is a causal LM; this configuration is seq2seq"
            return
        import torch
        import transformers

        from npformer.io.hub_mapping import hf_config_for, state_to_hf

        self.torch = torch
        tcfg = bc.transformer_config("float32")
        try:
            hf_config = hf_config_for("gpt2", tcfg)
        except ValueError as e:
            self.why_not = f"no GPT2LMHeadModel has this layout ({e})"
            return
        cfg = transformers.GPT2Config(**{k: v for k, v in hf_config.items()
                                         if k not in ("model_type", "architectures")})
        model = transformers.GPT2LMHeadModel(cfg)
        state = {k: torch.from_numpy(np.ascontiguousarray(v))
                 for k, v in state_to_hf("gpt2", tcfg, master_state).items()}
        own = model.state_dict()
        missing = sorted(k for k in own if k not in state and not k.endswith(".attn.bias"))
        if missing:
            raise ValueError(f"hf-cpu: the mapped state lacks {missing[:5]}")
        model.load_state_dict({k: v for k, v in state.items() if k in own}, strict=False)
        model.generation_config.eos_token_id = None            # a fixed number of new tokens
        model.generation_config.pad_token_id = 0
        self.model = model.eval()
        self.ids = torch.from_numpy(inputs.tgt_in)
        self.gen_src = torch.from_numpy(inputs.gen_src)

    def fn(self, workload: str) -> Callable[[], object]:
        if self.why_not:
            raise NotApplicable(self.why_not)
        torch, m = self.torch, self.model
        if workload == "forward":
            def forward():
                with torch.no_grad():
                    return m(self.ids).logits
            return forward
        if workload == "generate":
            n = self.bc.gen_tokens
            mask = torch.ones_like(self.gen_src)

            def generate():
                with torch.no_grad():
                    return m.generate(self.gen_src, attention_mask=mask, max_new_tokens=n,
                                      do_sample=False, num_beams=1, use_cache=True)
            return generate
        raise NotApplicable("hf-cpu times forward and generate only (the goals compare it on "
                            "decoding)")

    def logits(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        if self.why_not:
            raise NotApplicable(self.why_not)
        with self.torch.no_grad():
            return self.model(self.torch.from_numpy(tgt)).logits.double().numpy()
