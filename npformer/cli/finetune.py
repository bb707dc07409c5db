"""`npformer train --init FOLDER`: fine-tune a pretrained Hugging Face model on your own text.

    npformer train --task lm --data book.txt --init path/to/gpt2 [--context 128 --steps 200
                   --save run.npz --save-pretrained tuned/ --backend torch]

A GPT-2 folder (config.json, model.safetensors, vocab.json, merges.txt) gives the model's weights,
its sizes and its own byte-level BPE tokenizer (npformer.data.tokenizers.GPT2Tokenizer): the text is
encoded with it into the same next-token windows as `--task lm --data` (npformer.data.text_lm),
and the training loop, checkpoint, evaluate, generate and --resume are the ones a model trained
from scratch uses. Validation loss is reported before and after. Options the folder decides (sizes,
tokenizer, positions, dropout) are refused before any work, all named in one line. --save-pretrained
writes a folder transformers loads (config.json, model.safetensors and the tokenizer files).

Defaults where fine-tuning differs from training from scratch (only when not given): FT_DEFAULTS.
BERT folders are refused with what is missing: there is no text task for BERT in this tree yet.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from npformer.cli import backends
from npformer.cli.errors import CliError

__all__ = ["add_init_args", "check_init_args", "finetune_state", "save_pretrained_folder",
           "FT_DEFAULTS", "FIXED_BY_FOLDER"]

# fine-tuning defaults: a small learning rate, few steps, small batches, no label smoothing
FT_DEFAULTS = dict(steps=200, lr=3e-4, warmup=20, batch_size=8, label_smoothing=0.0)
FT_CONTEXT = 128                           # tokens per window, unless the model reads fewer
_FT_DEFAULTS_TEXT = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in FT_DEFAULTS.items())
TOKENIZER_FILES = ("vocab.json", "merges.txt")
# dest -> what decides it in a GPT-2 folder
FIXED_BY_FOLDER = {"d_model": "n_embd", "heads": "n_head", "d_ff": "n_inner", "layers": "n_layer",
                   "encoder_layers": "n_layer", "decoder_layers": "n_layer",
                   "activation": "activation_function", "norm_first": "GPT-2's pre-norm layout",
                   "positional": "learned positions (wpe)", "dropout": "resid_pdrop",
                   "tokenizer": "vocab.json + merges.txt", "vocab_size": "vocab.json"}


def add_init_args(p) -> None:
    """`train`'s --init and --save-pretrained (a group of their own)."""
    g = p.add_argument_group("fine-tuning a pretrained model (--init FOLDER)")
    g.add_argument("--init", metavar="FOLDER", default=None,
                   help="start from a Hugging Face GPT-2 folder (config.json, model.safetensors, "
                        "vocab.json, merges.txt): its weights, sizes and tokenizer; with --task lm "
                        f"--data FILE (defaults then: {_FT_DEFAULTS_TEXT}, --context {FT_CONTEXT} "
                        f"or the model's n_positions when smaller)")
    g.add_argument("--save-pretrained", metavar="DIR", default=None,
                   help="with --init: also write the fine-tuned model as a Hugging Face folder "
                        "(config.json, model.safetensors, the tokenizer files) that transformers "
                        "and npformer generate DIR load; checked before training")


def _folder_config(folder: str) -> tuple[str, dict]:
    """(kind, config.json dict) of --init's folder, or a CliError naming what is wrong."""
    from npformer.io.hub_checks import read_json
    from npformer.io.hub_mapping import kind_from_hf
    if not os.path.isdir(folder):
        raise CliError(f"--init {folder}: expected a Hugging Face model folder, got "
                       f"{'a file' if os.path.exists(folder) else 'no such folder'}")
    cfg = Path(folder) / "config.json"
    if not cfg.is_file():
        raise CliError(f"--init {folder}: expected config.json in the folder (a Hugging Face model "
                       f"folder); it is missing")
    try:
        hf = read_json(cfg, "a JSON object (a Hugging Face config)")
        return kind_from_hf(hf), hf
    except ValueError as e:
        raise CliError(f"--init {folder}: {e}") from None


def check_init_args(args) -> None:
    """Everything about --init that can be refused before work: one line naming the options."""
    given = getattr(args, "given", {}) or {}
    if getattr(args, "save_pretrained", None) and not args.init:
        raise CliError("--save-pretrained: only with --init FOLDER (a fine-tuned Hugging Face "
                       "model); a model trained from scratch is saved with --save")
    if not args.init:
        return
    if args.resume:
        raise CliError(f"--init {args.init}: not with --resume {args.resume} (a resumed run "
                       f"continues from its checkpoint's weights)")
    kind, hf = _folder_config(args.init)
    if kind != "gpt2":
        raise CliError(f"--init {args.init}: holds a BERT model ({kind}); fine-tuning from the "
                       f"command line takes a GPT-2 folder (--task lm --data FILE). Fine-tune BERT "
                       f"in Python: npformer.io.hub.from_pretrained(folder, kind='bert_cls', "
                       f"num_labels=N) (docs/GPT2_BERT.md)")
    fixed = [given[d] for d in FIXED_BY_FOLDER if d in given]
    if fixed:
        decided = sorted({FIXED_BY_FOLDER[d] for d in FIXED_BY_FOLDER if d in given})
        raise CliError(f"{', '.join(fixed)}: not allowed with --init {args.init}: the folder "
                       f"decides them ({', '.join(decided)}); drop {'them' if len(fixed) > 1 else 'it'}")
    if args.task != "lm" or not args.data:
        raise CliError(f"--init {args.init}: a GPT-2 folder is fine-tuned as a language model on "
                       f"your text: use --task lm --data FILE (got --task {args.task}"
                       f"{'' if args.data else ', no --data'})")
    if getattr(args, "nproc", 1) > 1:
        raise CliError(f"--nproc {args.nproc}: not with --init (one process; --threads N for more "
                       f"cores)")
    n_pos = hf.get("n_positions")
    if args.context is not None and isinstance(n_pos, int) and args.context > n_pos:
        raise CliError(f"--context {args.context}: the model of --init {args.init} reads "
                       f"{n_pos} tokens at most (n_positions)")
    missing = [f for f in TOKENIZER_FILES if not os.path.isfile(os.path.join(args.init, f))]
    if not any(os.path.isfile(os.path.join(args.init, f)) for f in
               ("model.safetensors", "model.safetensors.index.json")):
        missing.append("model.safetensors")
    if missing:
        raise CliError(f"--init {args.init}: a GPT-2 folder needs config.json, model.safetensors, "
                       f"vocab.json and merges.txt; missing {', '.join(missing)}")
    for k, v in FT_DEFAULTS.items():                       # fine-tuning's defaults, never a given one
        if k not in given:
            setattr(args, k, v)
    if args.context is None:
        args.context = min(FT_CONTEXT, n_pos) if isinstance(n_pos, int) else FT_CONTEXT
    if getattr(args, "save_pretrained", None):
        from npformer.io.files import check_output_dir
        check_output_dir(args.save_pretrained, "--save-pretrained")
        taken = [f for f in ("config.json", "model.safetensors", *TOKENIZER_FILES)
                 if os.path.exists(os.path.join(args.save_pretrained, f))]
        if taken and not args.overwrite:
            raise CliError(f"--save-pretrained {args.save_pretrained}: holds {', '.join(taken)}; "
                           f"pass --overwrite to replace them")


def finetune_state(args):
    """The TrainState of --init: the folder's model and tokenizer, the text task of --data."""
    from npformer.data.text_files import read_corpus
    from npformer.data.text_lm import DEFAULT_VAL_FRACTION, TextLMTask
    from npformer.data.tokenizers import GPT2Tokenizer
    from npformer.training.resume import BatchStream, TrainState
    from npformer.training.train import TrainConfig
    folder = args.init
    try:
        tokenizer = GPT2Tokenizer.from_folder(folder)
    except (OSError, ValueError) as e:
        raise CliError(f"--init {folder}: {e}") from None
    corpus = read_corpus(args.data)
    task = TextLMTask(list(corpus.files), tokenizer, context=args.context,
                      val_fraction=args.val_fraction or DEFAULT_VAL_FRACTION, seed=args.seed,
                      corpus=corpus)
    task.arrays()                                         # a too-short text is named before loading
    dtype = args.dtype or "float32"
    try:
        if args.backend == "torch":
            from npformer.cli.common import torch_and_device
            _, dev = torch_and_device(args)
            model = backends.module("torch", "hub").from_pretrained(folder, dtype, device=dev)
        else:
            from npformer.io import hub
            model = hub.from_pretrained(folder, dtype)
    except (OSError, ValueError) as e:
        raise CliError(f"--init {folder}: {e}") from None
    if tokenizer.vocab_size > model.config.vocab_size:
        raise CliError(f"--init {folder}: vocab.json has {tokenizer.vocab_size} tokens, the model "
                       f"{model.config.vocab_size}; the tokenizer is not this model's")
    model.train()
    tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, warmup=args.warmup,
                     label_smoothing=args.label_smoothing, clip_norm=args.clip_norm, seed=args.seed,
                     eval_every=args.eval_every, eval_size=args.eval_size,
                     progress=not args.no_progress)
    T = backends.module(args.backend, "train")
    optimizer, schedule = T.make_optimizer(model, tc)
    print(f"fine-tuning {folder} (GPT-2, its own tokenizer: {tokenizer.vocab_size} tokens)")
    before = T.evaluate(model, task, task.heldout(tc.eval_size))
    print(f"before fine-tuning, held-out {before.summary().splitlines()[0]}", flush=True)
    return TrainState(model=model, optimizer=optimizer, schedule=schedule,
                      stream=BatchStream(task, tc.batch_size, tc.seed), config=tc, task=task, step=0)


def save_pretrained_folder(args, model) -> None:
    """--save-pretrained: the model as a Hugging Face folder, with --init's tokenizer files."""
    from npformer.cli.figures import to_numpy_model
    from npformer.io import hub
    out = args.save_pretrained
    np_model = model if args.backend == "numpy" else to_numpy_model(model)
    try:
        hub.save_pretrained(np_model, out, overwrite=args.overwrite)
        for f in TOKENIZER_FILES:
            shutil.copyfile(os.path.join(args.init, f), os.path.join(out, f))
    except OSError as e:
        raise CliError(f"--save-pretrained {out}: write failed: {e.strerror or e}") from None
    print(f"saved Hugging Face folder {out} (config.json, model.safetensors, "
          f"{', '.join(TOKENIZER_FILES)})")
