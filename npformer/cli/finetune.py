"""`npformer train --init FOLDER`: fine-tune a pretrained Hugging Face model on your own text.

    npformer train --task lm  --data book.txt --init path/to/gpt2 [--context 128 --steps 200
                   --save run.npz --save-pretrained tuned/ --backend torch]
    npformer train --task mlm --data book.txt --init path/to/bert  (masked-LM, BERT's 80/10/10)
    npformer train --task classify --data reviews.tsv --init path/to/bert  (a classifier: BERT
                   with a fresh head drawn from --seed, one output per label of the file)

The folder gives the model's weights, its sizes and its own tokenizer: a GPT-2 folder (config.json,
model.safetensors, vocab.json, merges.txt; npformer.data.tokenizers.GPT2Tokenizer) is fine-tuned as
a language model on the next-token windows of `--task lm --data` (npformer.data.text_lm); a BERT
masked-LM or pre-training folder (vocab.txt; WordPieceTokenizer) on masked windows of the text
(npformer.data.text_mlm); any BERT folder as a classifier of `--task classify --data` rows
(npformer.data.text_classify: [CLS] text [SEP], the folder's WordPiece), its new head named in a
warning. The training loop, checkpoint, evaluate, generate and --resume are the
ones a model trained from scratch uses. Validation loss is reported before and after. Options the
folder decides (sizes, tokenizer, positions, dropout) are refused before any work, all named in one
line. --save-pretrained writes a folder transformers loads (config.json, model.safetensors and the
tokenizer files).

Defaults where fine-tuning differs from training from scratch (only when not given): FT_DEFAULTS.
"""
from __future__ import annotations

import os
from pathlib import Path

from npformer.cli import backends
from npformer.cli.argtypes import folder_path
from npformer.cli.common import heldout_set
from npformer.cli.errors import CliError
from npformer.cli.printing import print_eval

__all__ = ["add_init_args", "check_init_args", "finetune_state", "save_pretrained_folder",
           "FT_DEFAULTS", "FAMILIES", "FIXED_BY_FOLDER"]

# fine-tuning defaults: a small learning rate, few steps, small batches, no label smoothing
FT_DEFAULTS = dict(steps=200, lr=3e-4, warmup=20, batch_size=8, label_smoothing=0.0)
FT_CONTEXT = 128                           # tokens per window, unless the model reads fewer
_FT_DEFAULTS_TEXT = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in FT_DEFAULTS.items())
# per family: the task it trains, its tokenizer files, the config.json key of its context length,
# and what decides each option the folder fixes
FAMILIES = {
    "gpt2": dict(task="lm", files=("vocab.json", "merges.txt"), positions="n_positions",
                 fixed={"d_model": "n_embd", "heads": "n_head", "d_ff": "n_inner",
                        "layers": "n_layer", "encoder_layers": "n_layer",
                        "decoder_layers": "n_layer", "activation": "activation_function",
                        "norm_first": "GPT-2's pre-norm layout",
                        "positional": "learned positions (wpe)", "dropout": "resid_pdrop",
                        "tokenizer": "vocab.json + merges.txt", "vocab_size": "vocab.json"}),
    "bert_mlm": dict(task="mlm", files=("vocab.txt",), positions="max_position_embeddings",
                     fixed={"d_model": "hidden_size", "heads": "num_attention_heads",
                            "d_ff": "intermediate_size", "layers": "num_hidden_layers",
                            "encoder_layers": "num_hidden_layers",
                            "decoder_layers": "num_hidden_layers", "activation": "hidden_act",
                            "norm_first": "BERT's post-norm layout",
                            "positional": "learned positions (position_embeddings)",
                            "dropout": "hidden_dropout_prob", "tokenizer": "vocab.txt",
                            "vocab_size": "vocab.txt"}),
}
FAMILIES["bert_cls"] = dict(FAMILIES["bert_mlm"], task="classify")
BERT_KINDS = ("bert", "bert_mlm", "bert_cls")          # every BERT folder makes a classifier
FIXED_BY_FOLDER = sorted({d for f in FAMILIES.values() for d in f["fixed"]})
OPTIONAL_FILES = ("tokenizer_config.json",)          # copied by --save-pretrained when present


def add_init_args(p) -> None:
    """`train`'s --init and --save-pretrained (a group of their own)."""
    g = p.add_argument_group("fine-tuning a pretrained model (--init FOLDER)")
    g.add_argument("--init", type=folder_path, metavar="FOLDER", default=None,
                   help="start from a Hugging Face folder: its weights, sizes and tokenizer. A GPT-2 "
                        "folder (vocab.json, merges.txt) with --task lm --data FILE; a BERT "
                        "masked-LM folder (vocab.txt) with --task mlm --data FILE, any BERT folder "
                        "with --task classify --data FILE.tsv (defaults then: "
                        f"{_FT_DEFAULTS_TEXT}, --context {FT_CONTEXT} or the model's positions "
                        f"when fewer)")
    g.add_argument("--save-pretrained", type=folder_path, metavar="DIR", default=None,
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


def _family(kind: str, task: str) -> str:
    """The FAMILIES entry --init's folder of `kind` trains for --task `task`."""
    return "bert_cls" if kind in BERT_KINDS and (task == "classify" or kind == "bert_cls") \
        else kind


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
    kind = _family(kind, args.task)
    if kind not in FAMILIES:
        raise CliError(f"--init {args.init}: holds a {kind} model without a masked-LM head; "
                       f"fine-tuning from the command line takes a GPT-2 folder (--task lm), a "
                       f"BERT masked-LM / pre-training folder (--task mlm) or any BERT folder "
                       f"as a classifier (--task classify --data FILE)")
    fam = FAMILIES[kind]
    fixed = [given[d] for d in fam["fixed"] if d in given]
    if fixed:
        decided = sorted({fam["fixed"][d] for d in fam["fixed"] if d in given})
        them = "them" if len(fixed) > 1 else "it"
        raise CliError(f"{', '.join(fixed)}: not allowed with --init {args.init}: the folder "
                       f"decides {them} ({', '.join(decided)}); drop {them}")
    if args.task != fam["task"] or not args.data:
        what = {"gpt2": "a language model", "bert_mlm": "a masked language model",
                "bert_cls": "a classifier"}[kind]
        also = " (or --task classify --data FILE for a classifier)" if kind == "bert_mlm" else ""
        raise CliError(f"--init {args.init}: a {'GPT-2' if kind == 'gpt2' else 'BERT'} folder is "
                       f"fine-tuned as {what} on your text: use --task {fam['task']} --data FILE"
                       f"{also} (got --task {args.task}{'' if args.data else ', no --data'})")
    if getattr(args, "nproc", 1) > 1:
        raise CliError(f"--nproc {args.nproc}: not with --init (one process; --threads N for more "
                       f"cores)")
    n_pos = hf.get(fam["positions"])
    if args.context is not None and isinstance(n_pos, int) and args.context > n_pos:
        raise CliError(f"--context {args.context}: the model of --init {args.init} reads "
                       f"{n_pos} tokens at most ({fam['positions']})")
    if kind != "gpt2" and args.context is not None and args.context < 3:
        raise CliError(f"--context {args.context}: a BERT row is [CLS] + text + [SEP]; expected "
                       f">= 3")
    missing = [f for f in fam["files"] if not os.path.isfile(os.path.join(args.init, f))]
    if not any(os.path.isfile(os.path.join(args.init, f)) for f in
               ("model.safetensors", "model.safetensors.index.json")):
        missing.append("model.safetensors")
    if missing:
        raise CliError(f"--init {args.init}: the folder needs config.json, model.safetensors and "
                       f"{' + '.join(fam['files'])}; missing {', '.join(missing)}")
    for k, v in FT_DEFAULTS.items():                       # fine-tuning's defaults, never a given one
        if k not in given:
            setattr(args, k, v)
    if args.context is None:
        args.context = min(FT_CONTEXT, n_pos) if isinstance(n_pos, int) else FT_CONTEXT
    if getattr(args, "save_pretrained", None):
        from npformer.io.files import check_output_dir
        check_output_dir(args.save_pretrained, "--save-pretrained", overwrite=args.overwrite,
                         writes=("config.json", "model.safetensors", *fam["files"], *OPTIONAL_FILES))


def finetune_state(args):
    """The TrainState of --init: the folder's model and tokenizer, the text task of --data."""
    from npformer.data.text_lm import DEFAULT_VAL_FRACTION
    from npformer.data.tokenizers import GPT2Tokenizer, WordPieceTokenizer
    from npformer.training.resume import BatchStream, TrainState
    from npformer.training.train import TrainConfig
    folder = args.init
    kind = _family(_folder_config(folder)[0], args.task)
    try:
        if kind == "gpt2":
            tokenizer = GPT2Tokenizer.from_folder(folder)
        else:
            from npformer.cli.fill_mask import folder_lowercase
            tokenizer = WordPieceTokenizer.from_folder(folder, lowercase=folder_lowercase(folder))
    except (OSError, ValueError) as e:
        raise CliError(f"--init {folder}: {e}") from None
    split = dict(context=args.context, val_fraction=args.val_fraction or DEFAULT_VAL_FRACTION,
                 seed=args.seed)
    if kind == "bert_cls":
        task = _classify_task(args, tokenizer, split)
    else:
        task = _text_task(args, kind, tokenizer, split)
    num_labels = {"num_labels": task.num_classes, "seed": args.seed} if kind == "bert_cls" else {}
    dtype = args.dtype or "float32"
    try:
        if args.backend == "torch":
            from npformer.cli.common import torch_and_device
            _, dev = torch_and_device(args)
            model = backends.module("torch", "hub").from_pretrained(
                folder, dtype, device=dev, kind="bert_cls" if num_labels else None, **num_labels)
            if getattr(model, "dropout_rng", None) is None:
                # torchformer's BERT classes draw dropout from torch's global generator (its
                # CausalLM has its own, seeded): seeded here, a fresh run repeats bit for bit;
                # a --resume of it continues from a differently seeded global generator
                import torch
                torch.manual_seed(args.seed)
        else:
            from npformer.io import hub
            model = hub.from_pretrained(folder, dtype, kind="bert_cls" if num_labels else None,
                                        **num_labels)
    except (OSError, ValueError) as e:
        raise CliError(f"--init {folder}: {e}") from None
    if tokenizer.vocab_size > model.config.vocab_size:
        raise CliError(f"--init {folder}: {FAMILIES[kind]['files'][0]} has {tokenizer.vocab_size} "
                       f"tokens, the model "
                       f"{model.config.vocab_size}; the tokenizer is not this model's")
    model.train()
    tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, warmup=args.warmup,
                     label_smoothing=args.label_smoothing, clip_norm=args.clip_norm, seed=args.seed,
                     eval_every=args.eval_every, eval_size=args.eval_size,
                     progress=not args.no_progress)
    T = backends.module(args.backend, "train")
    optimizer, schedule = T.make_optimizer(model, tc)
    print(f"fine-tuning {folder} ({type(model).__name__}, its own {tokenizer.kind} tokenizer: "
          f"{tokenizer.vocab_size} tokens)")
    before = T.evaluate(model, task, heldout_set(task, tc.eval_size))
    print("before fine-tuning, ", end="")
    print_eval(before, task)
    return TrainState(model=model, optimizer=optimizer, schedule=schedule,
                      stream=BatchStream(task, tc.batch_size, tc.seed), config=tc, task=task, step=0)


def _text_task(args, kind: str, tokenizer, split: dict):
    """--task lm / mlm: the next-token or masked windows of the --data text."""
    from npformer.data.text_files import read_corpus
    from npformer.data.text_lm import TextLMTask
    corpus = read_corpus(args.data)
    common = dict(split, corpus=corpus)
    try:
        if kind == "gpt2":
            task = TextLMTask(list(corpus.files), tokenizer, **common)
        else:
            from npformer.data.text_mlm import TextMLMTask
            task = TextMLMTask(list(corpus.files), tokenizer, **common)
    except ValueError as e:
        raise CliError(f"--init {args.init}: {e}") from None
    task.arrays()                                         # a too-short text is named before loading
    return task


def _classify_task(args, tokenizer, split: dict):
    """--task classify: the labelled rows of --data, split, in the folder's WordPiece."""
    from npformer.data.text_classify import ClassifyTask
    from npformer.data.text_files import TextFileError
    from npformer.data.text_rows import read_labelled
    paths = [args.data] if isinstance(args.data, str) else list(args.data)
    if len(paths) != 1:
        raise CliError(f"--data: --task classify reads one file of labelled texts, got "
                       f"{len(paths)}")
    rows = read_labelled(paths[0])
    labels = sorted({lab for _, _, lab in rows.rows})
    if len(labels) < 2:
        raise TextFileError(paths[0], f"every row has the label {labels[0]!r}: a classifier needs "
                                      f"at least two labels")
    try:
        task = ClassifyTask(rows.files, tokenizer, labels, rows=rows, **split)
    except ValueError as e:
        raise CliError(f"--init {args.init}: {e}") from None
    task.sets()                                           # rows that fit the context, named now
    return task


def save_pretrained_folder(args, model) -> None:
    """--save-pretrained: the model as a Hugging Face folder, with --init's tokenizer files."""
    from npformer.cli.figures import to_numpy_model
    from npformer.io import hub
    out = args.save_pretrained
    np_model = model if args.backend == "numpy" else to_numpy_model(model)
    files = FAMILIES[_family(_folder_config(args.init)[0], args.task)]["files"] + tuple(
        f for f in OPTIONAL_FILES if os.path.isfile(os.path.join(args.init, f)))
    try:
        tokenizer_files = {}
        for f in files:                                   # written with the weights, all or none
            with open(os.path.join(args.init, f), "rb") as src:
                tokenizer_files[f] = src.read()
        # an earlier save's tokenizer files this tokenizer has none of (a cased model's
        # tokenizer_config.json beside an uncased one's vocab.txt), with --overwrite, go too
        earlier = {n for fam in FAMILIES.values() for n in fam["files"]} | set(OPTIONAL_FILES)
        stale = tuple(sorted(n for n in earlier - set(files)
                             if args.overwrite and os.path.isfile(os.path.join(out, n))))
        hub.save_pretrained(np_model, out, overwrite=args.overwrite, extra_files=tokenizer_files,
                            remove=stale)
    except FileExistsError:                               # written there since the checks
        from npformer.io.files import save_beside
        try:
            beside = save_beside(out, lambda p: hub.save_pretrained(np_model, p,
                                                                    extra_files=tokenizer_files))
        except OSError as e:
            raise CliError(f"--save-pretrained {out}: files were written there by another program "
                           f"while this run trained, and saving beside it failed: "
                           f"{e.strerror or e}; nothing was saved") from None
        args.saved_pretrained = str(beside)
        raise CliError(f"--save-pretrained {out}: files were written there by another program "
                       f"while this run trained (another run saving there?) and are left as they "
                       f"are; this run's model is saved as {beside} (with --overwrite a run "
                       f"replaces them)") from None
    except OSError as e:
        raise CliError(f"--save-pretrained {out}: write failed: {e.strerror or e}") from None
    args.saved_pretrained = str(out)                      # an interruption now: say it is written
    print(f"saved Hugging Face folder {out} (config.json, model.safetensors, {', '.join(files)})")
