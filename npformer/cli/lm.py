"""The command-line pieces for language models, called from npformer/cli.py:

    npformer train --task lm                        CausalLM on addition lines (npformer.data.lm_data)
    npformer generate LM.npz 12+7= 40+2=            greedy completion (default), checked when the
                                                    checkpoint holds the lm task
    npformer generate LM.npz 12+7= --temperature 0.8 --top-k 5 --top-p 0.9 --seed 1
                                                    sampling (npformer.decoding.sampling / torchformer.decoding.sampling)
"""
from __future__ import annotations

import math

import numpy as np

from npformer.cli import backends

__all__ = ["LM_DEFAULTS", "fill_task_defaults", "add_sampling_args", "sampling_requested",
           "generate_lm", "lm_attention_plots"]

# `npformer train --task lm` defaults where they differ from the seq2seq ones (cli.DEFAULTS); the
# rest (d_model 64, 4 heads, d_ff 128, 2 layers, batch 64, post-norm ReLU, sinusoidal) is shared.
# Measured: see README, "Language models from the command line".
LM_DEFAULTS = dict(steps=5000, lr=3e-3, warmup=400)
MLM_DEFAULTS = dict(steps=2000, lr=3e-3, warmup=400)               # --task mlm (BertForMaskedLM)
_TASK_DEFAULTS = {"lm": LM_DEFAULTS, "mlm": MLM_DEFAULTS}


def fill_task_defaults(args, defaults: dict) -> None:
    """Options left unset (None) take the task's default: LM_DEFAULTS for --task lm (or a --resume
    file holding the lm task), else `defaults` (the seq2seq main job's)."""
    name = getattr(args, "task", None)
    if getattr(args, "resume", None):
        try:
            from npformer.io.checkpoint import load_checkpoint
            name = load_checkpoint(args.resume).metadata.get("task", {}).get("name")
        except Exception:  # noqa: BLE001 - the real load reports what is wrong with the file
            pass
    for key in LM_DEFAULTS:
        if getattr(args, key, None) is None:
            setattr(args, key, _TASK_DEFAULTS.get(name, defaults)[key])


def add_sampling_args(p) -> None:
    """The `generate` options for sampling from a language model (their own argument group)."""
    from npformer.cli.main import _float_in, non_negative, positive, positive_float
    g = p.add_argument_group("sampling (language-model checkpoints; default: greedy)")
    g.add_argument("--temperature", type=positive_float, default=None, metavar="T",
                   help="sample with logits / T (default when sampling: 1.0)")
    g.add_argument("--top-k", type=positive, default=None, metavar="K",
                   help="sample among the K most probable tokens (1: greedy)")
    g.add_argument("--top-p", type=_float_in(0.0, 1.0, lo_open=True, hi_open=False), default=None,
                   metavar="P", help="nucleus sampling: the smallest set of tokens holding mass P")
    g.add_argument("--seed", type=non_negative, default=None,
                   help="seed of the sampling generator (default when sampling: 0)")


def sampling_requested(args) -> bool:
    return any(getattr(args, k, None) is not None for k in ("temperature", "top_k", "top_p", "seed"))


def _prompts(task, vocab, texts):
    """Right-padded prompts (N, P) and the expected completions (strings, or None each)."""
    from npformer.data.vocab import PAD
    if task is not None and getattr(task, "is_lm", False):
        ex = task.examples_from_text(texts)
        prompts, answer = task.prompts(ex)                             # BOS "a+b=", answer + EOS
        return prompts, [vocab.decode(r) for r in answer]
    ids = [vocab.encode(t) for t in texts]
    width = max(len(r) for r in ids)
    prompts = np.full((len(ids), width), PAD, dtype=np.int64)          # (N, P)
    for i, r in enumerate(ids):
        prompts[i, : len(r)] = r
    return prompts, [None] * len(ids)


def generate_lm(args, model, task, vocab, gen) -> int:
    """`npformer generate` for a CausalLM checkpoint (greedy, beam search or sampling)."""
    from npformer.cli.main import CliError
    kind = type(model).__name__
    sampling = sampling_requested(args)
    if kind == "BertForMaskedLM" and not sampling:
        return fill_masks(args, model, task, vocab)
    if kind != "CausalLM":
        raise CliError(f"--temperature/--top-k/--top-p/--seed: sampling is for language-model "
                       f"checkpoints (CausalLM); {args.checkpoint} holds a {kind}")
    if sampling and args.beam > 1:
        raise CliError(f"--beam {args.beam}: beam search cannot be combined with sampling "
                       f"(--temperature/--top-k/--top-p/--seed)")
    prompts, expected = _prompts(task, vocab, args.inputs)
    c = model.config
    if prompts.shape[1] >= c.max_len + 1:
        raise CliError(f"INPUT: the longest prompt has {prompts.shape[1]} tokens; the model's "
                       f"max_len={c.max_len} leaves no room to generate")
    if args.backend == "torch":
        import torch
        prompts = torch.as_tensor(prompts, device=model.device)
    common = dict(max_new_tokens=args.max_new_tokens, use_cache=not args.no_cache)
    if sampling:
        sm = backends.module(args.backend, "sampling")
        t = 1.0 if args.temperature is None else args.temperature
        seed = 0 if args.seed is None else args.seed
        out = sm.sample(model, prompts, temperature=t, top_k=args.top_k, top_p=args.top_p,
                        seed=seed, **common)
        how = (f"sampling (temperature {t:g}, top-k {args.top_k or 'off'}, top-p "
               f"{args.top_p if args.top_p is not None else 'off'}, seed {seed})")
    elif args.beam > 1:
        out = gen.beam_search(model, prompts, beam_size=args.beam, length_penalty_alpha=args.alpha,
                              **common)
        how = f"beam search (K={args.beam}, alpha={args.alpha})"
    else:
        out = gen.greedy_decode(model, prompts, **common)
        how = "greedy"
    return print_decoded(args, how, out, vocab, expected)


def print_decoded(args, how: str, out, vocab, expected: list) -> int:
    """`npformer generate`'s output for any model that decodes: one line per input (shared by the
    encoder-decoder and the language models)."""
    from npformer.cli.main import _numpy
    tokens = np.asarray(_numpy(out.tokens))
    scores = np.asarray(_numpy(out.scores))
    print(f"{how}, {'no cache' if args.no_cache else 'KV cache'}, {args.backend}")
    for text, row, score, exp in zip(args.inputs, tokens, scores, expected):
        got = vocab.decode(row)
        note = "" if exp is None else ("  ok" if got == exp else f"  (expected {exp})")
        s = float(score)
        print(f"{text} -> {got}   [log-prob score {s:.3f}]{note}" if math.isfinite(s) else
              f"{text} -> {got}{note}")
    return 0


def fill_masks(args, model, task, vocab) -> int:
    """`npformer generate` for a BertForMaskedLM: every "_" ([MASK]) replaced by its argmax."""
    from npformer.cli.main import CliError, _numpy
    from npformer.data.vocab import BOS, EOS, PAD
    if task is None or not getattr(task, "is_mlm", False):
        raise CliError(f"{args.checkpoint}: a BertForMaskedLM checkpoint without the mlm task; "
                       f"write sentences with its vocabulary through the Python API instead")
    if args.beam > 1:
        raise CliError(f"--beam {args.beam}: a masked language model fills masks in one pass")
    rows = task.examples_from_text(args.inputs)
    ids = np.full((len(rows), max(len(r) for r in rows) + 2), PAD, dtype=np.int64)  # (N, T)
    for i, r in enumerate(rows):
        ids[i, : len(r) + 2] = [BOS] + r + [EOS]
    x = ids
    if args.backend == "torch":
        import torch
        x = torch.as_tensor(ids, device=model.device)
    pred = np.asarray(_numpy(model(x))).argmax(axis=-1)                 # (N, T)
    filled = np.where(ids == task.mask_id, pred, ids)                   # (N, T)
    print(f"masked-token filling (argmax), {args.backend}")
    for text, row in zip(args.inputs, filled):
        got = vocab.decode(row)
        half, _, rest = got.partition("#")
        ok = "#" in got and rest == half[::-1]
        print(f"{text} -> {got}  {'ok (a mirror sentence)' if ok else '(not a mirror sentence)'}")
    return 0


def lm_attention_plots(model, task, examples, out_dir, kinds, layers, heads) -> list[str]:
    """Decoder self-attention maps of a CausalLM on the first example's whole line; for a
    BertForMaskedLM the encoder self-attention maps of the first sentence with one [MASK]."""
    from npformer.training import plots
    if getattr(task, "is_mlm", False):
        if isinstance(examples, list):                                  # plot --input "abc#c_a"
            from npformer.data.vocab import BOS, EOS
            ids = np.asarray([[BOS] + examples[0] + [EOS]], dtype=np.int64)  # (1, T)
        else:                                                           # a held-out sentence
            ids = task.single_mask(examples.take(np.arange(1)), np.random.default_rng(0)).ids
        return plots.save_attention_maps(model.bert, ids, None, task.vocab, out_dir,
                                         kinds=[k for k in kinds if k == "encoder"],
                                         layers=layers, heads=heads)
    ids = task.collate(examples).ids[:1]                                # (1, T) BOS + line
    n = int((ids[0] != model.config.pad_id).sum())
    return plots.save_attention_maps(model, None, ids[:, :n], task.vocab, out_dir,
                                     kinds=[k for k in kinds if k == "decoder"], layers=layers,
                                     heads=heads)
