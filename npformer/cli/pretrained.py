"""`npformer generate FOLDER "prompt"`: text in and text out with a Hugging Face GPT-2 folder
(a BERT folder fills [MASK] instead: npformer.cli.fill_mask).

The folder holds config.json + model.safetensors (the weights, read with NumPy alone) and GPT-2's
tokenizer files vocab.json + merges.txt (npformer.data.tokenizers.gpt2_bpe). The prompt is encoded,
continued greedily (or sampled, or by beam search) with the KV cache, and printed as text; a
continuation stops at `<|endoftext|>`.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from npformer.cli import backends
from npformer.cli.common import as_backend, to_numpy, torch_and_device
from npformer.cli.errors import CliError
from npformer.cli.text import check_input_text, checked_prompt, note_new_token_room
from npformer.cli.text_output import refuse_text_output, stop_strings, write_samples
from npformer.data.display import visible
from npformer.decoding.stop import cut_at_stop

__all__ = ["is_pretrained_folder", "generate_pretrained"]

EOT = "<|endoftext|>"
DEFAULT_NEW_TOKENS = 40


def is_pretrained_folder(path: str) -> bool:
    return os.path.isdir(path)


def _load(args):
    """(model, tokenizer) from the folder, in the chosen backend."""
    from npformer.data.tokenizers import GPT2Tokenizer
    folder = args.checkpoint
    missing = [f for f in ("config.json", "vocab.json", "merges.txt") if
               not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise CliError(f"CHECKPOINT {folder}: a folder must be a Hugging Face GPT-2 folder with "
                       f"config.json, model.safetensors, vocab.json and merges.txt (or a BERT "
                       f"folder with config.json, model.safetensors and vocab.txt); missing "
                       f"{', '.join(missing)}")
    try:
        tokenizer = GPT2Tokenizer.from_folder(folder)
        if args.backend == "torch":
            _, dev = torch_and_device(args)
            model = backends.module("torch", "hub").from_pretrained(folder, args.dtype or "float32",
                                                                    device=dev)
        else:
            from npformer.fast.last_logits import use_last_position_logits
            from npformer.fast.linear import use_few_rows_linear
            from npformer.io import hub
            model = hub.from_pretrained(folder, args.dtype or "float32")
            if not getattr(args, "no_fast_decoding", False):
                model = use_last_position_logits(use_few_rows_linear(model))
    except (OSError, ValueError) as e:
        raise CliError(f"CHECKPOINT {folder}: {e}") from None
    if type(model).__name__ != "CausalLM":
        raise CliError(f"CHECKPOINT {folder}: holds a {type(model).__name__}; text generation from a "
                       f"folder needs a GPT-2 (GPT2LMHeadModel) folder")
    if tokenizer.vocab_size > model.config.vocab_size:
        raise CliError(f"CHECKPOINT {folder}: vocab.json has {tokenizer.vocab_size} tokens, the "
                       f"model {model.config.vocab_size}; the tokenizer is not this model's")
    return model.eval(), tokenizer


def check_tokenizer_files(folder: str) -> None:
    """A folder whose tokenizer files are the other model family's (GPT-2 weights beside BERT's
    vocab.txt, BERT weights beside GPT-2's vocab.json + merges.txt) is refused naming both: a mode
    chosen by the tokenizer files alone would read GPT-2 weights beside a vocab.txt as a BERT folder
    and answer with misleading lines ("a BERT model fills [MASK]")."""
    from npformer.io.hub_checks import read_json
    from npformer.io.hub_mapping import kind_from_hf
    try:
        kind = kind_from_hf(read_json(Path(folder) / "config.json", "a JSON object"))
    except (OSError, ValueError):
        return                                            # the loader names what is wrong
    has = {f: os.path.isfile(os.path.join(folder, f)) for f in ("vocab.txt", "vocab.json", "merges.txt")}
    bpe = has["vocab.json"] and has["merges.txt"]
    if kind == "gpt2" and not bpe and has["vocab.txt"]:
        raise CliError(f"CHECKPOINT {folder}: config.json describes a GPT-2 model, whose tokenizer is "
                       f"vocab.json + merges.txt, but the folder holds vocab.txt (a BERT WordPiece "
                       f"vocabulary) instead; put the model's own tokenizer files beside it")
    if kind != "gpt2" and not has["vocab.txt"] and (has["vocab.json"] or has["merges.txt"]):
        raise CliError(f"CHECKPOINT {folder}: config.json describes a BERT model, whose tokenizer is "
                       f"vocab.txt, but the folder holds GPT-2's vocab.json / merges.txt instead; "
                       f"put the model's own tokenizer file beside it")


def generate_pretrained(args) -> int:
    """Continue every INPUT with the folder's GPT-2 and print prompt + continuation; a BERT folder
    (vocab.txt) fills each INPUT's [MASK] instead (npformer.cli.fill_mask)."""
    from npformer.cli.fill_mask import fill_mask_cli, is_bert_folder
    check_tokenizer_files(args.checkpoint)
    if is_bert_folder(args.checkpoint):
        refuse_text_output(args, "is a BERT folder, which fills [MASK] and generates no text")
        return fill_mask_cli(args)
    model, tok = _load(args)
    eos = tok.vocab.get(EOT)
    sampling = any(getattr(args, k, None) is not None for k in ("temperature", "top_k", "top_p",
                                                                "seed"))
    if sampling and args.beam > 1:
        raise CliError(f"--beam {args.beam}: beam search cannot be combined with sampling "
                       f"(--temperature/--top-k/--top-p/--seed)")
    limit = model.config.max_len
    # ids past the tokenizer's (a vocabulary padded in the weights, or a vocab.json that is not the
    # model's) have no text: never chosen
    untokenizable = tuple(range(tok.vocab_size, model.config.vocab_size))
    gen = backends.module(args.backend, "generate")
    prompts = []                                          # every INPUT checked before the first sample
    for text in args.inputs:
        check_input_text(text)
        prompts.append(checked_prompt(text, tok.encode(text), limit))
    note_new_token_room(args, limit, prompts, " (n_positions)")
    samples = []
    for text, ids in prompts:
        prompt = as_backend(np.asarray([ids], dtype=np.int64), model, args)        # (1, P)
        common = dict(max_new_tokens=min(args.max_new_tokens or DEFAULT_NEW_TOKENS, limit - len(ids)),
                      use_cache=not args.no_cache, eos_id=eos, suppress_ids=untokenizable)
        stop = stop_strings(args, lambda new: tok.decode([i for i in new if i != eos]))
        if sampling:
            out = backends.module(args.backend, "sampling").sample(
                model, prompt, temperature=1.0 if args.temperature is None else args.temperature,
                top_k=args.top_k, top_p=args.top_p, seed=0 if args.seed is None else args.seed,
                stop=stop, **common)
        elif args.beam > 1:
            out = gen.beam_search(model, prompt, beam_size=args.beam, length_penalty_alpha=args.alpha,
                                  stop=stop, **common)
        else:
            out = gen.greedy_decode(model, prompt, stop=stop, **common)
        new = [int(i) for i in np.asarray(to_numpy(out.tokens))[0][: int(to_numpy(out.lengths)[0])]]
        sample = text + cut_at_stop(tok.decode([i for i in new if i != eos]), args.stop)
        samples.append(sample)
        print(visible(sample))
    write_samples(args, samples)
    return 0
