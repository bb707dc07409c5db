"""The checks both twins' `train(model, task, config, ...)` run on their arguments before anything
is drawn or built: a model of this twin, of the kind the task trains, a task, an optimizer of this
twin, a callable callback and a step count. Each refusal is one line naming the argument, what was
expected and what came (before, a wrong value was an AttributeError from deep inside the loop, or a
TypeError after the first step had already changed the weights)."""
from __future__ import annotations

from npformer.guards.rules import check_count, check_flag, check_positive_int

__all__ = ["task_kind", "check_model_and_task", "check_train_arguments", "check_evaluate_arguments"]

# the kinds of model each kind of task trains (build_model builds the first of each)
TRAINS = {"mlm": ("BertForMaskedLM",), "lm": ("CausalLM",),
          "classification": ("EncoderClassifier", "BertForSequenceClassification"),
          "seq2seq": ("Transformer",)}
TASK_ATTRIBUTES = ("max_src_tokens", "max_tgt_tokens", "is_classification", "vocab_size")


def task_kind(task) -> str:
    if getattr(task, "is_mlm", False):
        return "mlm"
    if getattr(task, "is_lm", False):
        return "lm"
    return "classification" if task.is_classification else "seq2seq"


def _kind(obj) -> str:
    package = type(obj).__module__.split(".")[0]
    return type(obj).__name__ if package == "builtins" else f"{package} {type(obj).__name__}"


def check_model_and_task(model, task, *, twin: str, module_type: type) -> None:
    """A model of `twin` (its models' base class `module_type`) of the kind `task` trains, holding
    the task's ids and rows: what train() and evaluate() of both twins check first."""
    a_twin = f"{'an' if twin == 'npformer' else 'a'} {twin}"
    if not isinstance(model, module_type) or not hasattr(model, "config"):
        other = "torchformer" if twin == "npformer" else "npformer"
        hint = (f"; train {'an' if other == 'npformer' else 'a'} {other} model with {other}.training.train.train"
                if type(model).__module__.split(".")[0] == other else "")
        raise TypeError(f"model: expected {a_twin} model (Transformer, EncoderClassifier, CausalLM or "
                        f"a BERT model), got {_kind(model)}{hint}")
    if not all(hasattr(task, a) for a in TASK_ATTRIBUTES):
        raise TypeError(f"task: expected a training task (npformer.data.registry.make_any_task(name=...) "
                        f"builds one), got {_kind(task)}")
    kind = task_kind(task)
    name = type(getattr(model, "_orig_mod", model)).__name__      # torch.compile's wrapper: its model
    if name not in TRAINS[kind]:
        raise ValueError(f"model: the {getattr(task, 'name', kind)} task ({kind}) trains a "
                         f"{' or '.join(TRAINS[kind])}, got a {name} "
                         f"(build_model(config, task) builds the right one)")
    _check_model_holds_task(model.config, task, name)


def check_train_arguments(model, task, *, twin: str, module_type: type, optimizer_type: type,
                          optimizer, callback, start_step, batches=None, eval_examples=None) -> None:
    """`twin` ("npformer" / "torchformer") is the package whose train() was called; `module_type`
    its models' base class and `optimizer_type` its optimizers' (an optimizer given must be one).
    `batches` None or an iterable (a string was read batch by batch, failing on its first
    character), `eval_examples` as evaluate's `examples`."""
    check_model_and_task(model, task, twin=twin, module_type=module_type)
    if batches is not None and (isinstance(batches, (str, bytes, dict))
                                or not hasattr(batches, "__iter__")):
        raise TypeError(f"batches: expected None or an iterable of training batches (BatchStream("
                        f"task, batch_size, seed), a list of collate(task.sample(rng, n))), got "
                        f"{_kind(batches)}")
    check_examples("eval_examples", task, eval_examples)
    a_twin = f"{'an' if twin == 'npformer' else 'a'} {twin}"
    if optimizer is not None and not isinstance(optimizer, optimizer_type):
        raise TypeError(f"optimizer: expected None or {a_twin} optimizer, got {_kind(optimizer)}")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback: expected None or a function callback(step, loss), got "
                        f"{_kind(callback)}")
    check_count("start_step", start_step)


def check_evaluate_arguments(model, task, examples, *, twin: str, module_type: type, batch_size,
                             greedy, num_shown, max_new_tokens) -> None:
    """evaluate()'s arguments in both twins: the model and task as train() checks them, sizes as
    ints, `greedy` a bool ("no" decoded anyway), `max_new_tokens` None or >= 1 (0 meant the
    default), and `examples` None or a non-empty set (an empty one divided by zero; a list of
    tuples for a synthetic task failed on a missing method). A stand-in that is no module of either
    twin but has a `config` (a test's hand-made logits) is taken as it is."""
    if isinstance(model, module_type) or not hasattr(model, "config") or \
            type(model).__module__.split(".")[0] in ("npformer", "torchformer", "torch"):
        check_model_and_task(model, task, twin=twin, module_type=module_type)
    check_positive_int("batch_size", batch_size)
    check_flag("greedy", greedy)
    check_count("num_shown", num_shown)
    if max_new_tokens is not None:
        check_positive_int("max_new_tokens", max_new_tokens)
    check_examples("examples", task, examples)


def check_examples(name: str, task, examples) -> None:
    """None (the task's held-out set) or a non-empty set of the task's examples."""
    from npformer.data.tasks import Examples
    if examples is None:
        return
    plain = not (getattr(task, "is_lm", False) or getattr(task, "is_text", False))
    if (plain and not isinstance(examples, Examples)) or not hasattr(examples, "__len__"):
        raise TypeError(f"{name}: expected None (the task's held-out set) or examples from "
                        f"task.heldout(n) or task.sample(rng, n), got {_kind(examples)}")
    if len(examples) == 0:
        raise ValueError(f"{name}: expected at least one example, got an empty set (it has no loss "
                         f"or accuracy to report)")


def _check_model_holds_task(c, task, model_class: str) -> None:
    """The task's ids have rows in the model's embedding and its rows fit the model's positions
    (else the first batch failed naming `src` or `ids`, arguments the user never gave)."""
    rows = c.src_vocab if model_class == "Transformer" else c.vocab_size
    if task.vocab_size > rows:
        raise ValueError(f"model: its embedding has {rows} rows, but the {getattr(task, 'name', '')} "
                         f"task's ids reach {task.vocab_size - 1} (task.vocab_size="
                         f"{task.vocab_size}); build the model with vocab_size >= {task.vocab_size}")
    longest = max(task.max_src_tokens, task.max_tgt_tokens)
    if longest > c.max_len:
        raise ValueError(f"model: its max_len={c.max_len} is shorter than the "
                         f"{getattr(task, 'name', '')} task's rows of up to {longest} tokens; build "
                         f"the model with max_len >= {longest}")

