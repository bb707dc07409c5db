"""Properties of decoding that need no reference, written once for both twins (the decoding test
files of tests/npformer/decoding and tests/torchformer/decoding run them), over small random models:

    rows alone        greedy decoding and beam search of a batch of sources / prompts of different
                      lengths give every row what it gets decoded alone (tokens, lengths; scores
                      and greedy logits to rounding)
    prompt lengths    CausalLM prompts whose padding holds arbitrary ids, with prompt_lengths, decode
                      bit for bit as pad-padded prompts without it
    cache             use_cache=True and False choose the same tokens, with the same logits at
                      every step (a KV-cache step vs a full recompute: to rounding)
    early stopping    beam search's early stopping changes no output field (documented exact)
    greedy limits     beam width 1 (alpha 0), top-k 1, a top-p below every token's probability and
                      a temperature of 1e-300 all choose greedy's tokens
    budget            max_new_tokens is respected exactly: with eos_id=None every row has exactly
                      that many tokens, with EOS at most that many
    seed              a fixed seed gives the same sample twice, the same as the generator it
                      stands for, and in other processes
                      (another hash seed); another seed gives other tokens

Tolerance: a row decoded alone runs other shapes than the batch (see model_invariants.py), so its
scores and logits compare with rtol 1e-9 (float64); tokens and lengths compare exactly.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from npformer.data.vocab import EOS, PAD
from tests.npformer.model_invariants import assert_alone_close, configs

MAX_NEW = 4


class DecodeTwin:
    """npformer's decoding functions; torchformer's adapter sets `api` and `sampling`."""

    name = "numpy"

    def __init__(self, fast: bool = False):
        """fast: npformer.fast's methods bound and the last-position logits switched on."""
        import npformer
        from npformer.decoding.sampling import sample
        self.api, self.sample, self.fast = npformer, sample, fast

    def build(self, cls: str, config, seed: int = 0):
        model = getattr(self.api, cls)(config, seed=seed).eval()
        if self.fast:
            from npformer.fast.accelerate import accelerate
            from npformer.fast.last_logits import use_last_position_logits
            use_last_position_logits(accelerate(model))
        return model

    def to_np(self, x) -> np.ndarray:
        return np.asarray(x)

    def generator(self, seed: int):
        """What `sample(seed=seed)` is documented to draw from."""
        return np.random.default_rng(seed)

    def out(self, result) -> dict[str, np.ndarray]:
        return {k: self.to_np(v) for k, v in result._asdict().items()}


def decoding_config(data):
    return data.draw(configs(dropout=False, pad_id=PAD, vocab_size=data.draw(st.integers(6, 10))))


def draw_inputs(data, cls: str, config) -> tuple[np.ndarray, list[int]]:
    """Right-padded (B, W) sources ending with EOS (Transformer) or prompts (CausalLM), and their
    lengths; one row fills the width."""
    B = data.draw(st.integers(2, 3))
    lengths = data.draw(st.lists(st.integers(1, 4), min_size=B, max_size=B))
    width = max(lengths)
    rows = np.full((B, width), PAD, dtype=np.int64)
    for i, n in enumerate(lengths):
        rows[i, :n] = data.draw(st.lists(st.integers(EOS + 1, config.vocab_size - 1), min_size=n,
                                         max_size=n))
        if cls == "Transformer":
            rows[i, n - 1] = EOS
    return rows, lengths


def check_rows_alone(twin: DecodeTwin, model, method: str, inputs, lengths, **kw) -> None:
    fn = getattr(twin.api, method)
    batch = twin.out(fn(model, inputs, **kw))
    for i, n in enumerate(lengths):
        alone = twin.out(fn(model, inputs[i:i + 1, :n], **kw))
        L = int(alone["lengths"][0])
        assert int(batch["lengths"][i]) == L, f"{method}: row {i}'s length differs from alone"
        np.testing.assert_array_equal(batch["tokens"][i, :L], alone["tokens"][0, :L],
                                      err_msg=f"{method}: row {i}'s tokens differ from alone")
        assert_alone_close(f"{method}: row {i}'s score", batch["scores"][i], alone["scores"][0])
        if "logits" in batch:
            assert_alone_close(f"{method}: row {i}'s logits", batch["logits"][i, :L],
                               alone["logits"][0, :L])


def check_prompt_lengths(twin: DecodeTwin, model, inputs, lengths, **kw) -> None:
    """CausalLM: tokens past `prompt_lengths` are never read: prompts whose padding holds arbitrary
    ids decode (greedy and beam) as the pad-padded prompts do without prompt_lengths."""
    garbage = inputs.copy()
    fill = np.random.default_rng(0).integers(EOS + 1, model.config.vocab_size, inputs.shape)
    garbage[inputs == PAD] = fill[inputs == PAD]
    for method in ("greedy_decode", "beam_search"):
        fn = getattr(twin.api, method)
        a = twin.out(fn(model, inputs, max_new_tokens=MAX_NEW, **kw))
        b = twin.out(fn(model, garbage, max_new_tokens=MAX_NEW, prompt_lengths=np.array(lengths), **kw))
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{method} {k}: prompt_lengths")


def check_greedy_limits(twin: DecodeTwin, model, inputs, cls: str) -> None:
    greedy = twin.out(twin.api.greedy_decode(model, inputs, max_new_tokens=MAX_NEW))
    uncached = twin.out(twin.api.greedy_decode(model, inputs, max_new_tokens=MAX_NEW,
                                               use_cache=False))
    np.testing.assert_array_equal(uncached["tokens"], greedy["tokens"], err_msg="cache vs no cache")
    for i, n in enumerate(greedy["lengths"]):           # every step's logits: one cached, one full
        assert_alone_close(f"row {i}: cached vs full logits", greedy["logits"][i, :n],
                           uncached["logits"][i, :n])
    beam = twin.out(twin.api.beam_search(model, inputs, beam_size=1, length_penalty_alpha=0.0,
                                         max_new_tokens=MAX_NEW))
    wide, full = (twin.out(twin.api.beam_search(model, inputs, beam_size=3, max_new_tokens=MAX_NEW,
                                                early_stopping=early)) for early in (True, False))
    for k in wide:                                     # documented: the bound is exact
        np.testing.assert_array_equal(wide[k], full[k], err_msg=f"beam {k}: early stopping changed it")
    np.testing.assert_array_equal(beam["tokens"], greedy["tokens"], err_msg="beam width 1")
    np.testing.assert_allclose(beam["scores"], greedy["scores"], rtol=1e-12, err_msg="beam width 1")
    if cls != "CausalLM":
        return
    for kw in (dict(top_k=1), dict(top_p=1e-9), dict(temperature=1e-300)):
        s = twin.out(twin.sample(model, inputs, max_new_tokens=MAX_NEW, seed=3, **kw))
        np.testing.assert_array_equal(s["tokens"], greedy["tokens"], err_msg=f"sampling {kw}")
        np.testing.assert_array_equal(s["lengths"], greedy["lengths"], err_msg=f"sampling {kw}")


def check_budget(twin: DecodeTwin, model, inputs, cls: str, n: int) -> None:
    calls = [("greedy_decode", twin.api.greedy_decode, {}),
             ("beam_search", twin.api.beam_search, dict(beam_size=2))]
    if cls == "CausalLM":
        calls.append(("sample", twin.sample, dict(seed=1)))
    for name, fn, kw in calls:
        free = twin.out(fn(model, inputs, max_new_tokens=n, eos_id=None, **kw))
        assert free["tokens"].shape == (len(inputs), n), f"{name}, eos_id=None: tokens {free['tokens'].shape}"
        assert (free["lengths"] == n).all(), f"{name}, eos_id=None: lengths {free['lengths']}"
        ended = twin.out(fn(model, inputs, max_new_tokens=n, **kw))
        assert ended["tokens"].shape[1] <= n and (ended["lengths"] <= n).all(), name
        assert (ended["lengths"] >= 1).all(), name


def check_seed(twin: DecodeTwin, model, inputs) -> None:
    """seed=11 twice, the generator seed=11 stands for, and no seed (documented as seed 0) vs 0."""
    kw = dict(max_new_tokens=MAX_NEW, temperature=1.5)
    a, b = (twin.out(twin.sample(model, inputs, seed=11, **kw)) for _ in range(2))
    c = twin.out(twin.sample(model, inputs, generator=twin.generator(11), **kw))
    d, e = twin.out(twin.sample(model, inputs, **kw)), twin.out(twin.sample(model, inputs, seed=0, **kw))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"sample field {k} with one seed")
        np.testing.assert_array_equal(a[k], c[k], err_msg=f"sample field {k}: seed vs its generator")
        np.testing.assert_array_equal(d[k], e[k], err_msg=f"sample field {k}: no seed vs seed 0")


FRESH_PROCESS = """
import json, sys
import numpy as np
from npformer.models.config import TransformerConfig
twin = __import__(sys.argv[1])
sample = __import__(sys.argv[1] + ".decoding.sampling", fromlist=["sample"]).sample
config = TransformerConfig(**json.loads(sys.argv[2]))
model = twin.CausalLM(config, seed=4).eval()
out = sample(model, np.array(json.loads(sys.argv[3])), max_new_tokens=6, seed=21, temperature=1.3)
print(json.dumps(np.asarray(out.tokens).tolist()))
"""
SEED_CONFIG = dict(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=2, max_len=12, vocab_size=11,
                   pad_id=PAD, dropout=0.1, dtype="float32")
SEED_PROMPTS = [[3, 4, 5], [6, 0, 0]]


def sample_in_a_fresh_process(package: str, hash_seed: str) -> list:
    """The tokens `sample(seed=21)` gives in a new interpreter (its own hash seed, no state shared)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONHASHSEED=hash_seed,
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", FRESH_PROCESS, package, json.dumps(SEED_CONFIG),
                        json.dumps(SEED_PROMPTS)], env=env, capture_output=True, text=True,
                       timeout=120, check=True)
    return json.loads(r.stdout)


def check_seed_across_processes(twin: DecodeTwin, package: str) -> None:
    from npformer.models.config import TransformerConfig
    model = twin.build("CausalLM", TransformerConfig(**SEED_CONFIG), seed=4)
    here = twin.out(twin.sample(model, np.array(SEED_PROMPTS), max_new_tokens=6, seed=21,
                                temperature=1.3))["tokens"].tolist()
    assert sample_in_a_fresh_process(package, "1") == here, "another process sampled other tokens"
    other = twin.out(twin.sample(model, np.array(SEED_PROMPTS), max_new_tokens=6, seed=22,
                                 temperature=1.3))["tokens"].tolist()
    assert other != here, "seeds 21 and 22 sampled the same tokens (the check would prove nothing)"
