"""Every task by name: the synthetic seq2seq and classification tasks (npformer.data.tasks), the
language-model tasks (npformer.data.lm_data, npformer.data.mlm_data, and npformer.data.text_lm on
a text corpus) and translation and classification on your own rows (npformer.data.text_tasks),
built from a checkpoint's metadata or the command line's fields."""
from __future__ import annotations

import dataclasses

from npformer.data.lm_data import ArithmeticTask
from npformer.data.mlm_data import MirrorTask
from npformer.data.tasks import TASKS, Task
from npformer.data.text_classify import ClassifyTask
from npformer.data.text_lm import TextLMTask
from npformer.data.text_translate import TranslateTask

_LM_FIELDS = {"lm": ("max_number", "seed", "heldout_fraction"),
              "mlm": ("num_symbols", "min_len", "max_len", "seed", "heldout_fraction", "mask_prob")}

_TEXT_FIELDS = ("tokenizer", "context", "sha256", "val_fraction", "seed")
_ROW_TASKS = {"translate": (TranslateTask, _TEXT_FIELDS + ("target_tokenizer",)),
              "classify": (ClassifyTask, _TEXT_FIELDS + ("labels",))}


def is_lm_task(task) -> bool:
    return bool(getattr(task, "is_lm", False))


def make_any_task(**fields):
    """A data.Task or a language-model task from a name and fields (a checkpoint's metadata or the
    command line's). Fields the chosen task does not have are dropped when they are only the
    seq2seq defaults; a language-model field given to a seq2seq task is an error naming it."""
    name = fields.get("name", "reverse")
    known = TASKS + tuple(_LM_FIELDS) + tuple(_ROW_TASKS)
    if not isinstance(name, str) or name not in known:
        raise ValueError(f"task: expected one of {known}, got {name!r}")
    if fields.get("data") is not None:                               # a task on your own text
        if name not in ("lm", "mlm") + tuple(_ROW_TASKS):
            raise ValueError(f"data: the {name} task is synthetic and reads no text, got "
                             f"data={fields['data']!r}")
        if fields.get("tokenizer") is None:
            raise ValueError(f"tokenizer: expected the tokenizer of the --task {name} run on your "
                             f"text (its vocabulary maps text to the model's ids), got none in the "
                             f"saved task")
        for key in ("tokenizer", "target_tokenizer"):
            if fields.get(key) is not None and not isinstance(fields[key], dict):
                raise ValueError(f"{key}: expected a saved tokenizer (an object with its 'type'), "
                                 f"got {fields[key]!r}")
    if name == "mlm" and fields.get("data") is not None:            # BERT on text (text_mlm)
        from npformer.data.text_mlm import TextMLMTask
        keep = {k: v for k, v in fields.items() if k in _TEXT_FIELDS + ("mask_prob",)
                and v is not None}
        return TextMLMTask(files=fields["data"], **keep)
    if name == "lm" and fields.get("data") is not None:             # a text corpus (text_lm)
        keep = {k: v for k, v in fields.items() if k in _TEXT_FIELDS and v is not None}
        return TextLMTask(files=fields["data"], **keep)
    if name in _ROW_TASKS:                                          # your own rows (text_tasks)
        cls, names = _ROW_TASKS[name]
        if fields.get("data") is None:
            raise ValueError(f"--task {name}: trains on your own text; give --data FILE")
        keep = {k: v for k, v in fields.items() if k in names and v is not None}
        return cls(fields["data"], **keep)
    if name in _LM_FIELDS:
        if name == "mlm" and fields.get("max_number") is not None:
            raise ValueError("--max-number: only for --task lm, got it with --task mlm")
        keep = {k: v for k, v in fields.items() if k in _LM_FIELDS[name] and v is not None}
        if name == "mlm":
            return MirrorTask(name=name, **keep)
        return ArithmeticTask(name=name, **keep)
    extra = [k for k in ("max_number",) if fields.get(k) is not None]
    if extra:
        raise ValueError(f"--{extra[0].replace('_', '-')}: only for --task lm, got it with "
                         f"--task {name}")
    fields.pop("max_number", None)
    extra = sorted(set(fields) - {f.name for f in dataclasses.fields(Task)})
    if extra:
        raise ValueError(f"task field {extra[0]!r}: not a field of the {name} task (expected "
                         f"{', '.join(f.name for f in dataclasses.fields(Task))})")
    return Task(**fields)


def build_text_task_from_files(name: str, data, *, tokenizer: str | None = None,
                               vocab_size: int | None = None, context: int | None = None,
                               val_fraction: float | None = None, shared_vocab: bool = False,
                               seed: int = 0):
    """The task of `npformer train --task NAME --data FILES ...` (lm, translate or classify): the
    files read and checked, the tokenizer(s) trained; what the command line and every DDP worker
    build (the same files and options give the same task)."""
    from npformer.data.text_classify import build_classify_task
    from npformer.data.text_lm import DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION, build_text_task
    from npformer.data.text_translate import build_translate_task
    common = dict(tokenizer=tokenizer or "char", vocab_size=vocab_size,
                  context=context or DEFAULT_CONTEXT,
                  val_fraction=val_fraction or DEFAULT_VAL_FRACTION, seed=seed)
    if name == "translate":
        return build_translate_task(data, shared_vocab=bool(shared_vocab), **common)
    if name == "classify":
        return build_classify_task(data, **common)
    if name != "lm":
        raise ValueError(f"--data: your own text trains --task lm, translate or classify; got "
                         f"--task {name}")
    return build_text_task(data, **common)


def check_task_fits_model(task, config, model_class: str) -> None:
    """The task's token ids (its tokenizer's, or its symbols and specials) all have a row in the
    model's embedding (and, for a translation, in its target embedding), and a classification
    task has the classes the model's head outputs, and its longest row fits the model's max_len;
    else a ValueError saying which. A checkpoint
    whose task metadata does not belong to its weights would otherwise index past the embedding
    (an IndexError at the first unseen id) or decode ids the model never learned."""
    two_sided = model_class == "Transformer"
    sides = [("", task.vocab_size, config.src_vocab if two_sided else config.vocab_size)]
    if two_sided and hasattr(task, "config_fields"):              # translate: a target vocabulary
        sides.append(("target ", task.config_fields()["tgt_vocab_size"], config.tgt_vocab))
    for side, needs, rows in sides:
        if needs > rows:
            tok = getattr(task, "target_tokenizer", None) if side else None
            tok = tok or getattr(task, "tokenizer", None)
            what = (f"its saved {side}{tok.kind} tokenizer has {needs} tokens" if tok is not None
                    else f"its {task.num_symbols} symbols and {needs - task.num_symbols} special "
                         f"tokens need {needs} ids")
            raise ValueError(f"task {task.name}: {what}, but the model's {side}embedding has "
                             f"{rows} rows (ids {rows}..{needs - 1} have none): the saved task does "
                             f"not belong to these weights")
    rows = max(getattr(task, "max_src_tokens", 0), getattr(task, "max_tgt_tokens", 0))
    if rows > config.max_len:
        raise ValueError(f"task {task.name}: its rows reach {rows} tokens, but the model's max_len is "
                         f"{config.max_len} (it has no positions past that): the saved task does "
                         f"not belong to these weights")
    if model_class in ("EncoderClassifier", "BertForSequenceClassification") \
            and getattr(task, "is_classification", False) and task.num_classes != config.num_classes:
        raise ValueError(f"task {task.name}: expected the {config.num_classes} classes the "
                         f"model's head outputs, got {task.num_classes} in the saved task")
