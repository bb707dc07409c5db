"""`npformer evaluate CKPT`: held-out loss, token accuracy and exact-sequence accuracy of a
checkpoint (either backend), on the task it was trained on or one the options describe."""
from __future__ import annotations

import time

from npformer.cli import backends
from npformer.cli.common import (
    check_backend,
    checkpoint_task,
    describe,
    heldout_set,
    load_for_backend,
)
from npformer.cli.errors import CliError
from npformer.cli.option_rules import refuse_ignored_options
from npformer.cli.printing import print_eval, print_examples
from npformer.cli.text import test_data_task

__all__ = ["cmd_evaluate", "check_model_fits_task", "check_task_fits_model_class", "MODEL_KINDS"]

# checkpoint's model class -> (what it is, the --task values it evaluates)
MODEL_KINDS = {
    "Transformer": ("an encoder-decoder Transformer", ("copy", "reverse", "sort", "pairs", "translate")),
    "EncoderClassifier": ("an EncoderClassifier (encoder + class head)", ("majority", "classify")),
    "BertForSequenceClassification": ("a BERT classifier", ("classify",)),
    "CausalLM": ("a CausalLM (decoder-only language model)", ("lm",)),
    "BertForMaskedLM": ("a BertForMaskedLM (BERT masked language model)", ("mlm",)),
}


def cmd_evaluate(args) -> int:
    check_backend(args)
    model, ckpt = load_for_backend(args)
    meta = ckpt.metadata.get("task") if isinstance(ckpt.metadata, dict) else None
    if not (isinstance(meta, dict) and meta.get("data") is not None):   # your text: its task is fixed
        check_task_fits_model_class(getattr(args, "task", None), ckpt.model_class, args.checkpoint)
    task = test_data_task(args, checkpoint_task(args, ckpt))   # evaluate --data: a test file
    refuse_ignored_options(args, task.name)              # e.g. --num-symbols on an lm checkpoint
    check_model_fits_task(model, task, args.checkpoint)
    T = backends.module(args.backend, "train")
    print(f"{describe(model)}  [checkpoint {args.checkpoint}, step {ckpt.step}, written by "
          f"{ckpt.writer}]")
    print(task.describe())
    t0 = time.perf_counter()
    ev = T.evaluate(model, task, heldout_set(task, args.eval_size), num_shown=args.examples)
    print_eval(ev, task)
    print(f"evaluation took {time.perf_counter() - t0:.1f} s")
    print_examples(ev.examples, task.is_classification)
    return 0


def check_task_fits_model_class(task: str | None, model_class: str, path) -> None:
    """`--task` names a task the checkpoint's kind of model can evaluate (an encoder-decoder cannot
    classify, a classifier cannot decode): else one line naming --task, the model and its tasks."""
    if task is None or model_class not in MODEL_KINDS:
        return
    what, tasks = MODEL_KINDS[model_class]
    if task not in tasks:
        needs = next((w for w, t in MODEL_KINDS.values() if task in t), "another kind of model")
        raise CliError(f"--task {task}: expected a task that checkpoint {path} can evaluate; it holds {what}, "
                       f"which evaluates --task {' / '.join(tasks)}, got {task}, which needs {needs}")


def check_model_fits_task(model, task, path) -> None:
    """The model's vocabulary and max_len hold the task's rows (else one line naming the file)."""
    c = model.config
    vocab = c.src_vocab if type(model).__name__ == "Transformer" else c.vocab_size
    padded = getattr(task, "is_text", False) and vocab > task.vocab_size   # rows past its tokenizer
    if vocab != task.vocab_size and not padded:              # (a GPT-2 folder's padded vocabulary)
        specials = task.vocab_size - task.num_symbols
        raise CliError(f"checkpoint {path}: the model's vocabulary has {vocab} tokens, the task "
                       f"needs {task.vocab_size} ({task.num_symbols} symbols, which --num-symbols "
                       f"sets, and {specials} special tokens)")
    if c.max_len < max(task.max_src_tokens, task.max_tgt_tokens):
        raise CliError(f"checkpoint {path}: the model's max_len={c.max_len} is shorter than the "
                       f"task's rows of up to {max(task.max_src_tokens, task.max_tgt_tokens)} "
                       f"tokens (set by the task's options: --max-len, or --max-number for --task lm)")
