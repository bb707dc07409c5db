"""`npformer generate` for language-model checkpoints:

    npformer generate LM.npz 12+7= 40+2=            greedy completion (default), checked when the
                                                    checkpoint holds the lm task
    npformer generate LM.npz 12+7= --temperature 0.8 --top-k 5 --top-p 0.9 --seed 1
                                                    sampling (npformer.decoding.sampling /
                                                    torchformer.decoding.sampling)
    npformer generate MLM.npz "ab#b_"               a BertForMaskedLM fills every "_" ([MASK])

(`npformer train --task lm` / `--task mlm` take their defaults from npformer/cli/defaults.py.)
"""
from __future__ import annotations

import numpy as np

from npformer.cli import backends
from npformer.cli.common import to_numpy
from npformer.cli.decode_options import refuse_alpha_without_beam, sampling_requested
from npformer.cli.errors import CliError
from npformer.cli.printing import print_decoded

__all__ = ["sampling_requested", "generate_lm", "fill_masks", "refuse_alpha_without_beam"]


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
    kind = type(model).__name__
    if getattr(task, "is_text", False) and kind == "CausalLM":     # your own text: prints text
        from npformer.cli.text import generate_text
        return generate_text(args, model, task, gen, backends.module(args.backend, "sampling"))
    if kind == "BertForMaskedLM" and getattr(task, "tokenizer", None) is not None:   # BERT on text
        from npformer.cli.fill_mask import fill_mask_cli
        return fill_mask_cli(args, model, task.tokenizer)
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
    refuse_alpha_without_beam(args)
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


def fill_masks(args, model, task, vocab) -> int:
    """`npformer generate` for a BertForMaskedLM: every "_" ([MASK]) replaced by its argmax."""
    from npformer.data.vocab import BOS, EOS, PAD
    if task is None or not getattr(task, "is_mlm", False):
        raise CliError(f"{args.checkpoint}: a BertForMaskedLM checkpoint without the mlm task; "
                       f"write sentences with its vocabulary through the Python API instead")
    if args.beam > 1:
        raise CliError(f"--beam {args.beam}: a masked language model fills masks in one pass")
    decoding = [o for d, o in getattr(args, "given", {}).items()
                if d in ("alpha", "max_new_tokens", "no_cache")]
    if decoding:                                             # never silently ignored
        raise CliError(f"{decoding[0]}: a masked language model fills every mask in one pass; "
                       f"it generates no tokens (drop {', '.join(decoding)})")
    rows = task.examples_from_text(args.inputs)
    ids = np.full((len(rows), max(len(r) for r in rows) + 2), PAD, dtype=np.int64)  # (N, T)
    for i, r in enumerate(rows):
        ids[i, : len(r) + 2] = [BOS] + r + [EOS]
    x = ids
    if args.backend == "torch":
        import torch
        x = torch.as_tensor(ids, device=model.device)
    pred = np.asarray(to_numpy(model(x))).argmax(axis=-1)               # (N, T)
    filled = np.where(ids == task.mask_id, pred, ids)                   # (N, T)
    print(f"masked-token filling (argmax), {args.backend}")
    for text, row in zip(args.inputs, filled):
        got = vocab.decode(row)
        half, _, rest = got.partition("#")
        ok = "#" in got and rest == half[::-1]
        print(f"{text} -> {got}  {'ok (a mirror sentence)' if ok else '(not a mirror sentence)'}")
    return 0
