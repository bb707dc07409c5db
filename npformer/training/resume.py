"""A training run's whole state as one object, saved and resumed generically by either twin.

    TrainState(model, optimizer, schedule, stream, config, task, step)

    model      npformer or torchformer model (its dropout generator's state is saved too)
    optimizer  npformer Adam / torch.optim.Adam;  schedule: either twin's WarmupSchedule
    stream     BatchStream: the training batches, whose position is its generator's state
    config     TrainConfig;  task: the data Task;  step: optimizer steps taken so far
    segments   one record per training call of the run (first and last step, target tokens, seconds)
    history    the run's per-step losses, learning rates, gradient norms and evaluations (RunHistory,
               bounded as npformer.training.history says)

    save_training_state(path, state, metadata=None, backend=None)       one checkpoint file
    load_training_state(path, backend="numpy", device=None)             -> TrainState
    state.record(result)          count a training call in (step, segment, history)
    state.whole_result(result)    after record: a TrainResult of the whole run (plots, summaries)

`backend` is a ResumeBackend: the twin's checkpoint functions and optimizer factory. npformer's is
NUMPY; torchformer supplies its own (torchformer.save_training_state / load_training_state call
these functions with it), so this file never imports torch.

A checkpoint holding a training state is an ordinary checkpoint (model, optimizer, schedule, step)
whose metadata has "task" (the Task's fields), "train" (TrainConfig, its "steps" the whole run's), "run"
(the whole run: steps, target tokens, one segment per training call, resumed ones included),
"history" (its per-step curves and evaluations, RunHistory.to_dict) and "resume" (the stream's
and the dropout generator's states). So N steps, a save, a load and M more steps give the same
weights as N + M steps in one run: bit for bit in npformer, and in torchformer on a CPU.

A new task gets resume for free when its Task has `sample(rng, n, split=)` and a `to_metadata()`-like
field dict accepted by `Task(**fields)`; a stream with other state only needs state_dict() and
load_state_dict().
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from npformer.guards.rules import check_positive_int, check_seed
from npformer.training.history import RunHistory

__all__ = ["BatchStream", "TrainState", "ResumeBackend", "numpy_backend", "save_training_state", "load_training_state",
           "dropout_rng_state", "set_dropout_rng_state", "task_metadata"]

_STREAM_SEED_TAG = 0xBA7C          # npformer.data.tasks.batch_iterator's generator: default_rng([seed, tag])


class BatchStream:
    """The endless training batches of `batch_iterator(task, batch_size, seed)`, with a position that
    can be saved (`state_dict()`: the generator's state) and restored."""

    def __init__(self, task, batch_size: int, seed: int = 0, split: str = "train"):
        if not callable(getattr(task, "sample", None)):
            raise TypeError(f"task: expected a task with sample(rng, n, split=) (npformer.data.tasks."
                            f"Task, a text or language-model task), got {type(task).__name__}")
        if not isinstance(split, str):
            raise TypeError(f"split: expected 'train' or 'heldout', got {split!r}")
        self.task, self.split = task, split
        self.batch_size = check_positive_int("batch_size", batch_size)   # 2.7 was cut to 2
        self.seed = check_seed(seed)                                     # 3.5 was cut to 3
        self.rng = np.random.default_rng([self.seed, _STREAM_SEED_TAG])

    def __iter__(self) -> "BatchStream":
        return self

    def __next__(self):
        from npformer.data.tasks import collate
        return collate(self.task.sample(self.rng, self.batch_size, split=self.split))

    def state_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "seed": self.seed, "split": self.split,
                "bit_generator": self.rng.bit_generator.state}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        if not isinstance(sd, dict) or not isinstance(sd.get("bit_generator"), dict):
            raise ValueError(f"stream state: expected a dict with 'bit_generator', got {sd!r:.80}")
        for key in ("batch_size", "seed", "split"):
            if sd.get(key) != getattr(self, key):
                raise ValueError(f"stream state: {key} {sd.get(key)!r} does not match this stream's "
                                 f"{getattr(self, key)!r}")
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = sd["bit_generator"]
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"stream state: bad generator state: {e}") from None
        self.rng = rng


# -- dropout generators --------------------------------------------------------------------------------
def _generators(model) -> list:
    """The distinct dropout generators of `model`, in module order."""
    seen, out = set(), []
    for _, m in model.named_modules():
        if type(m).__name__ == "Dropout" and getattr(m, "rng", None) is not None \
                and id(m.rng) not in seen:
            seen.add(id(m.rng))
            out.append(m.rng)
    return out


def _is_numpy(model) -> bool:
    from npformer.layers.module import Module
    return isinstance(model, Module)


def dropout_rng_state(model) -> list:
    """JSON-able states of the model's dropout generators (numpy bit-generator dicts or the
    base64 bytes of a torch.Generator's state)."""
    out = []
    for g in _generators(model):
        if isinstance(g, np.random.Generator):
            out.append({"numpy": g.bit_generator.state})
        else:
            out.append({"torch": base64.b64encode(g.get_state().numpy().tobytes()).decode()})
    return out


def set_dropout_rng_state(model, states: list) -> None:
    """Restore what dropout_rng_state returned (checked against the model before anything is set)."""
    gens = _generators(model)
    if not isinstance(states, list) or len(states) != len(gens):
        raise ValueError(f"dropout generator states: expected {len(gens)}, got "
                         f"{len(states) if isinstance(states, list) else type(states).__name__}")
    staged = []
    for g, st in zip(gens, states):
        if isinstance(g, np.random.Generator):
            if not isinstance(st, dict) or "numpy" not in st:
                raise ValueError("dropout generator state: expected a numpy generator's state")
            fresh = np.random.default_rng()
            try:
                fresh.bit_generator.state = st["numpy"]
            except (TypeError, ValueError, KeyError) as e:
                raise ValueError(f"dropout generator state: {e}") from None
            staged.append((g, fresh.bit_generator.state))
        else:
            import torch
            if not isinstance(st, dict) or not isinstance(st.get("torch"), str):
                raise ValueError("dropout generator state: expected a torch generator's state")
            try:
                raw = np.frombuffer(base64.b64decode(st["torch"], validate=True),
                                    dtype=np.uint8).copy()
            except ValueError:                          # binascii.Error: not base64
                raise ValueError("dropout generator state: expected a torch generator's state "
                                 "in base64, got text that is not base64") from None
            fresh = torch.Generator(device=g.device)
            try:                                        # tried on a scratch generator first
                fresh.set_state(torch.from_numpy(raw))
            except RuntimeError as e:
                raise ValueError(f"dropout generator state: expected a torch generator's state "
                                 f"({fresh.get_state().numel()} bytes), got {raw.size} bytes "
                                 f"({str(e).splitlines()[0]})") from None
            staged.append((g, torch.from_numpy(raw)))
    for g, st in staged:
        if isinstance(g, np.random.Generator):
            g.bit_generator.state = st
        else:
            g.set_state(st)


# -- the state ---------------------------------------------------------------------------------------
@dataclass
class TrainState:
    """Everything a training run needs to continue exactly where it stopped."""

    model: Any
    optimizer: Any
    schedule: Any
    stream: Any
    config: Any                          # npformer.training.train.TrainConfig
    task: Any                            # npformer.data.tasks.Task
    step: int = 0
    segments: list = field(default_factory=list)   # one dict per training call (record)
    history: RunHistory = field(default_factory=RunHistory)   # per-step curves of the whole run

    def record(self, result) -> None:
        """Count a finished training call (its TrainResult, which started at self.step) into the
        run: the step it ended at, and a segment with its steps, target tokens and seconds. A
        result of another start (another run's, or one counted already) is refused."""
        from npformer.training.metrics import TrainResult
        if not isinstance(result, TrainResult):
            raise TypeError(f"result: expected the TrainResult train() returned, got "
                            f"{type(result).__name__}")
        if result.steps - len(result.losses) != self.step:
            raise ValueError(f"result: expected a training call that started at this state's step "
                             f"{self.step} (train(..., start_step=state.step)), got one that ran "
                             f"steps {result.steps - len(result.losses) + 1}..{result.steps}")
        first, last = self.step + 1, int(result.steps)
        if last >= first:
            self.segments.append({"first_step": first, "last_step": last,
                                  "tokens": int(result.tokens), "seconds": float(result.seconds)})
        self.history.add(result, first)
        self.step = last

    def whole_result(self, result):
        """A TrainResult of the whole run after record(result): every call's kept losses, learning
        rates and gradient norms at their steps (`loss_steps`), the evaluations, tokens and seconds."""
        run = self.run_record()
        return self.history.whole_result(result, run["tokens"],
                                         sum(s["seconds"] for s in self.segments))

    def run_record(self) -> dict:
        """The whole run so far: steps, target tokens (None when the segments do not account for
        every step, as for a state whose steps were not recorded) and the segments."""
        check_segments("state.segments", self.segments)
        counted = sum(s["last_step"] - s["first_step"] + 1 for s in self.segments)
        tokens = sum(s["tokens"] for s in self.segments) if counted == self.step else None
        return {"steps": int(self.step), "tokens": tokens, "segments": list(self.segments)}


def task_metadata(task) -> dict:
    """The Task's constructor fields (what `Task(**fields)` rebuilds it from)."""
    if hasattr(task, "metadata"):                       # language-model tasks (npformer.data.lm_data)
        return task.metadata()
    return dict(name=task.name, num_symbols=task.num_symbols, min_len=task.min_len,
                max_len=task.max_len, seed=task.seed, heldout_fraction=task.heldout_fraction,
                num_pairs=task.num_pairs)


@dataclass(frozen=True)
class ResumeBackend:
    """What saving and resuming a run needs from one twin."""
    name: str                     # "numpy" or "torch": written into the file, checked on resume
    save_checkpoint: Callable     # (path, model, optimizer, schedule, step=, metadata=) -> path
    load_model: Callable          # (ckpt) or (ckpt, device=) -> model
    restore: Callable             # (ckpt, model, optimizer, schedule)
    make_optimizer: Callable      # (model, TrainConfig) -> (optimizer, schedule)


def numpy_backend() -> ResumeBackend:
    from npformer.io import checkpoint as ck
    from npformer.training.train import make_optimizer
    return ResumeBackend("numpy", ck.save_checkpoint, ck.load_model, ck.restore, make_optimizer)


def _backend(backend) -> ResumeBackend:
    if isinstance(backend, ResumeBackend):
        return backend
    if backend == "numpy":
        return numpy_backend()
    if backend == "torch":
        raise ValueError("backend: 'torch' states are saved and loaded by torchformer "
                         "(torchformer.save_training_state / torchformer.load_training_state); "
                         "npformer never imports torch")
    raise ValueError(f"backend: expected 'numpy' or a ResumeBackend, got {backend!r}")


def save_training_state(path, state: TrainState, metadata: dict | None = None,
                        backend: str | None = None, overwrite: bool = True):
    """Write `state` (model, optimizer, schedule, stream and dropout positions, step, TrainConfig,
    task) as one checkpoint, atomically. `metadata` adds JSON fields (e.g. metrics). `overwrite=False`
    keeps a file already at `path` (FileExistsError), as save_checkpoint does."""
    if not isinstance(state, TrainState):
        raise TypeError(f"save_training_state: state: expected a TrainState (load_training_state "
                        f"returns one; TrainState(model, optimizer, schedule, stream, config, task, "
                        f"step) builds one), got {type(state).__name__}")
    if backend is None and not _is_numpy(state.model):
        raise ValueError(f"state.model: a {type(state.model).__name__} that is not an npformer "
                         f"Module; save a torchformer run with torchformer.save_training_state")
    be = _backend(backend or "numpy")
    if metadata is not None and not isinstance(metadata, dict):
        from npformer.io.checkpoint import CheckpointError
        raise CheckpointError(path, f"metadata: expected a dict of JSON values, got "
                                    f"{type(metadata).__name__}")
    meta = dict(metadata or {})
    train = {**state.config.to_dict(), "steps": int(state.step)}    # the whole run's, not the last call's
    if not isinstance(state.history, RunHistory):
        raise TypeError(f"state.history: expected a RunHistory, got {type(state.history).__name__}")
    meta.update(task=task_metadata(state.task), train=train, run=state.run_record(), backend=be.name,
                history=state.history.to_dict(),
                resume={"stream": state.stream.state_dict(),
                        "dropout_rng": dropout_rng_state(state.model)})
    return be.save_checkpoint(path, state.model, state.optimizer, state.schedule, step=state.step,
                              metadata=meta, overwrite=overwrite)


def load_training_state(path, backend: str = "numpy", device=None) -> TrainState:
    """A TrainState rebuilt from a file `save_training_state` (or `npformer train --save`) wrote.

    Its config's `steps` is the steps the whole run has taken (state.step): give the steps to run
    next with `state.config.replace(steps=N)` and `start_step=state.step`, as `train --resume` does.
    Raises CheckpointError when the file holds no training state (no optimizer, schedule, task or
    resume data) or when any part does not fit; nothing is half-restored.
    """
    from npformer.data.registry import check_task_fits_model, make_any_task
    from npformer.io.checkpoint import CheckpointError, load_checkpoint
    from npformer.training.train import TrainConfig
    be = _backend(backend)
    ckpt = load_checkpoint(path)
    meta = ckpt.metadata
    missing = [k for k in ("task", "train", "resume") if not isinstance(meta.get(k), dict)]
    missing += ["optimizer"] if ckpt.optimizer_state is None else []
    missing += ["schedule"] if ckpt.schedule_state is None else []
    if missing:
        raise CheckpointError(path, f"holds no training state to resume (missing {missing}): only "
                                    f"`npformer train --save` (or save_training_state) writes the task "
                                    f"and data position a run needs; load_model(path) reads its weights")
    saved = meta.get("backend")
    if saved in ("numpy", "torch") and saved != be.name:
        raise CheckpointError(path, f"the run was saved by the {saved} backend; resume it with the "
                                    f"same backend (--backend {saved}): its dropout generator and "
                                    f"arithmetic are that twin's")
    try:
        task = make_any_task(**meta["task"])                # a data.Task or a language-model task
        if ckpt.config is not None:                          # its ids fit the saved model
            check_task_fits_model(task, ckpt.config, ckpt.model_class)
        tc = meta["train"]
        config = TrainConfig(**{**tc, "betas": tuple(tc["betas"])})
        segments = _segments(meta.get("run"))
        history = RunHistory.from_dict(meta.get("history"))      # absent in files written before
    except (TypeError, ValueError, KeyError) as e:
        raise CheckpointError(path, f"training state: {e}") from None
    model = be.load_model(ckpt) if device is None else be.load_model(ckpt, device=device)
    optimizer, schedule = be.make_optimizer(model, config)
    be.restore(ckpt, model, optimizer, schedule)
    stream = BatchStream(task, config.batch_size, config.seed)
    try:
        stream.load_state_dict(meta["resume"].get("stream"))
        set_dropout_rng_state(model, meta["resume"].get("dropout_rng", []))
    except ValueError as e:
        raise CheckpointError(path, f"training state: {e}") from None
    return TrainState(model=model, optimizer=optimizer, schedule=schedule, stream=stream,
                      config=config, task=task, step=ckpt.step, segments=segments, history=history)


def _segments(run) -> list:
    """The run record's segments, checked (absent in a file written before runs were recorded)."""
    if run is None:
        return []
    if not isinstance(run, dict):
        raise ValueError(f"run: expected a dict with 'segments', got {run!r:.120}")
    return check_segments("run: segments", run.get("segments"))


SEGMENT_KEYS = ("first_step", "last_step", "tokens", "seconds")


def check_segments(name: str, segments) -> list:
    """A list of segment dicts (SEGMENT_KEYS: ints, and seconds a number), else a ValueError."""
    ok = isinstance(segments, list) and all(
        isinstance(x, dict) and set(x) == set(SEGMENT_KEYS)
        and all(isinstance(x[k], int) and not isinstance(x[k], bool) for k in SEGMENT_KEYS[:3])
        and isinstance(x["seconds"], (int, float)) for x in segments)
    if not ok:
        raise ValueError(f"{name}: expected a list of dicts with int {', '.join(SEGMENT_KEYS[:3])} "
                         f"and seconds (TrainState.record makes them), got {segments!r:.120}")
    return segments
