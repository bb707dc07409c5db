"""`npformer train`: train a model on a synthetic task (or continue a saved run), evaluate it on
held-out data, print decoded examples, and optionally save a checkpoint and draw plots."""
from __future__ import annotations

import os
import time

from npformer.cli import backends
from npformer.cli.common import check_backend, describe, heldout_set, task_from, torch_and_device
from npformer.cli.defaults import DEFAULTS, fill_task_defaults
from npformer.cli.errors import CliError, where_it_was_looked_for
from npformer.cli.figures import to_numpy_model, train_plots
from npformer.cli.finetune import check_init_args, finetune_state, save_pretrained_folder
from npformer.cli.option_rules import (
    check_distinct_outputs,
    check_nproc,
    refuse_fixed_on_resume,
    refuse_ignored_options,
    refuse_outputs_over_inputs,
)
from npformer.cli.printing import print_eval, print_examples
from npformer.cli.text import check_text_args, refuse_text_on_resume, text_task_from
from npformer.cli.train_memory import check_fits_memory
from npformer.io.checkpoint_file import CheckpointError

__all__ = ["cmd_train"]


def _check_outputs(args) -> None:
    """Every output path of `train` checked before any work (one-line errors naming the option)."""
    from npformer.io.files import check_output_dir, check_output_file
    check_distinct_outputs(args)
    if args.save:
        check_output_file(args.save, "--save", overwrite=args.overwrite)
        if not args.resume:                         # on --resume: once its inputs are known
            refuse_replacing_a_non_checkpoint(args.save)
    if args.plot:
        from npformer.training import plots
        plots.pyplot()                               # fail now, not after training
        check_output_dir(args.plot, "--plot", writes=plots.plots_in(args.plot),
                         overwrite=args.overwrite)


def refuse_replacing_a_non_checkpoint(path) -> None:
    """--overwrite replaces an earlier checkpoint, never another kind of file (a text, a notebook,
    a typo'd name of the user's): a file that is not empty and is not a zip archive (an .npz) is
    refused, before any work."""
    import os
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:                                    # missing (the usual case) or unreadable
        return
    if head and head != b"PK\x03\x04" and os.path.isfile(path):
        raise CliError(f"--save {path}: exists and is not a checkpoint (not an .npz archive: "
                       f"first bytes {head!r}); --overwrite replaces an earlier checkpoint only: "
                       f"choose another path, or remove that file yourself")


def _fresh_state(args):
    """A new TrainState from the command line's task, model and optimisation options."""
    if args.init:                                         # a pretrained folder (cli.finetune)
        return finetune_state(args)
    from npformer.training.resume import BatchStream, TrainState
    from npformer.training.train import TrainConfig, model_config_for
    task = text_task_from(args) if getattr(args, "data", None) else task_from(args)
    enc = args.encoder_layers or args.layers
    dec = args.decoder_layers or args.layers
    if args.d_model % args.heads:
        raise CliError(f"--heads {args.heads}: must divide --d-model {args.d_model}")
    config = model_config_for(task, d_model=args.d_model, num_heads=args.heads, d_ff=args.d_ff,
                              num_encoder_layers=enc, num_decoder_layers=dec, dropout=args.dropout,
                              activation=args.activation, norm_first=args.norm_first,
                              final_norm=args.norm_first, positional=args.positional,
                              dtype=args.dtype)
    tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, warmup=args.warmup,
                     label_smoothing=args.label_smoothing, clip_norm=args.clip_norm, seed=args.seed,
                     eval_every=args.eval_every, eval_size=args.eval_size,
                     progress=not args.no_progress)
    if args.backend == "torch":
        _, dev = torch_and_device(args)
        T = backends.module("torch", "train")
        model = T.build_model(config, task, seed=args.seed, device=dev)
    else:
        import npformer.training.train as T
        model = T.build_model(config, task, seed=args.seed)
    optimizer, schedule = T.make_optimizer(model, tc)
    stream = BatchStream(task, tc.batch_size, tc.seed)
    return TrainState(model=model, optimizer=optimizer, schedule=schedule, stream=stream,
                      config=tc, task=task, step=0)


def _resumed_state(args):
    """The TrainState saved in --resume's file, to run --steps more steps."""
    dev = torch_and_device(args)[1] if args.backend == "torch" else None
    try:
        state = backends.module(args.backend, "resume").load_training_state(args.resume, device=dev)
    except CheckpointError as exc:                      # named by the option that gave the file
        raise CliError(f"--resume {args.resume}: {exc.problem}{where_it_was_looked_for(exc)}") \
            from None
    state.config = state.config.replace(steps=args.steps, eval_every=args.eval_every,
                                        eval_size=args.eval_size, progress=not args.no_progress)
    return state


def _save(args, state, ev, train_s: float) -> None:
    """Write --save (atomic; a failed write names the option and says what is left there)."""
    from npformer.io.files import OutputPathError
    save_training_state = backends.module(args.backend, "resume").save_training_state
    metadata = {"metrics": {"loss": ev.loss, "token_accuracy": ev.token_accuracy,
                            "sequence_accuracy": ev.sequence_accuracy,
                            "train_seconds": train_s}}
    if hasattr(ev, "bits_per_char"):                      # a text corpus (npformer.data.text_lm)
        metadata["metrics"].update(perplexity=ev.perplexity, bits_per_char=ev.bits_per_char)
    if hasattr(ev, "metrics"):                            # BLEU/chrF, or accuracy and macro F1
        metadata["metrics"].update(ev.metrics())
    try:
        path = save_training_state(args.save, state, metadata=metadata, overwrite=args.overwrite)
    except FileExistsError:                               # written there since the checks
        path = _save_beside(args, save_training_state, state, metadata)
        raise OutputPathError("--save", args.save, f"was written by another program while this run "
                                                  f"trained (another run saving there?) and is left "
                                                  f"as it is; this run's checkpoint (step "
                                                  f"{state.step}) is saved as {path} (with "
                                                  f"--overwrite a run replaces the file)") from None
    except OSError as e:
        kept = "the earlier file there is unchanged" if os.path.exists(args.save) else \
            "nothing was written"
        raise OutputPathError("--save", args.save, f"write failed: {e.strerror or e} "
                                                  f"({kept})") from None
    args.saved = str(path)                                # an interruption now: say it is saved
    print(f"saved checkpoint {path} (step {state.step})")


def _save_beside(args, save_training_state, state, metadata) -> str:
    """Save under the first free name `<stem>-<k><suffix>` beside --save (never replacing a file);
    the path written, also recorded as args.saved for an interruption's message."""
    from npformer.io.files import OutputPathError, save_beside
    try:
        path = save_beside(args.save, lambda p: save_training_state(p, state, metadata=metadata,
                                                                    overwrite=False))
    except OSError as e:
        raise OutputPathError("--save", args.save, f"was written by another program while this "
                                                  f"run trained, and saving beside it failed: "
                                                  f"{e.strerror or e}; nothing was saved") from None
    args.saved = str(path)
    return str(path)


def cmd_train(args) -> int:
    check_init_args(args)                                 # --init: before the scratch defaults
    fill_task_defaults(args, DEFAULTS)                   # --steps/--lr/--warmup: per-task defaults
    check_backend(args)
    if args.resume:
        refuse_fixed_on_resume(args)                      # never silently ignore --task etc.
        refuse_text_on_resume(args)                       # nor --data, --tokenizer, --context
    check_text_args(args)
    refuse_ignored_options(args, None if args.resume else args.task)
    _check_outputs(args)                                  # before any work, --nproc runs included
    if not args.resume and not args.init:                 # --init: the folder's sizes
        check_fits_memory(args)                           # before minutes of allocation or a launch
    if args.nproc > 1:                                    # N workers of torchformer.training.distributed
        if args.backend != "torch":
            raise CliError(f"--nproc {args.nproc}: needs --backend torch (the numpy backend uses "
                           f"threads: --threads N)")
        check_nproc(args)
        if getattr(args, "data", None):                   # bad files: one line, before any worker
            text_task_from(args)
        return backends.module("torch", "distributed").launch_from_cli(args)
    state = _resumed_state(args) if args.resume else _fresh_state(args)
    if args.resume:                                       # the files the checkpoint's run reads
        refuse_outputs_over_inputs(args, data=getattr(state.task, "files", None))
        if args.save:
            refuse_replacing_a_non_checkpoint(args.save)
    model, task, tc = state.model, state.task, state.config
    if args.backend == "numpy" and hasattr(state.optimizer, "threads"):
        state.optimizer.threads = args.threads            # the fused Adam's worker threads
    T = backends.module(args.backend, "train")
    where = f"torchformer on {model.device}" if args.backend == "torch" else "npformer (NumPy)"
    heldout = heldout_set(task, tc.eval_size)
    print(f"{task.describe()}  seed={tc.seed}")
    print(f"{describe(model)}  [{where}, {args.threads} thread(s)]")
    if args.resume:
        print(f"resuming {args.resume} at step {state.step}: {tc.steps} more steps")
    end = (state.step if args.resume else 0) + tc.steps     # the warm-up rises linearly to the peak
    short = f" (not reached: the run ends at step {end}, lr {tc.lr * end / tc.warmup:.3g})" \
        if end < tc.warmup else ""
    print(f"{tc.steps} steps x {tc.batch_size} sequences, Adam(0.9, 0.98, 1e-9), peak lr {tc.lr} "
          f"after {tc.warmup} warm-up steps{short}, clip {tc.clip_norm}, label smoothing "
          f"{tc.label_smoothing}", flush=True)
    t0 = time.perf_counter()
    extra = {}
    if args.backend == "numpy":                           # threads: data parallelism when it pays
        from npformer.training.parallel import MIN_ELEMENTS_PER_REPLICA, choose_replicas
        extra["replicas"] = choose_replicas(args.threads, tc.batch_size, args.data_parallel,
                                            tokens_per_row=task.max_tgt_tokens,
                                            d_model=model.config.d_model)
        if extra["replicas"] > 1:
            print(f"data parallelism: {extra['replicas']} replicas, one thread each", flush=True)
        elif args.threads > 1:                            # say where the threads went
            why = "--data-parallel off" if args.data_parallel == "off" else \
                (f"each replica's activations would be below {MIN_ELEMENTS_PER_REPLICA} "
                 f"elements, where one model is faster; --data-parallel on forces it")
            print(f"data parallelism off ({why}): one model, its matrix products on "
                  f"{args.threads} BLAS threads", flush=True)
        extra["fast_threads"] = 0 if getattr(args, "no_fast_elementwise", False) else args.threads
        if extra["fast_threads"] and args.threads > 1:
            print(f"elementwise passes: npformer.fast on {1 if extra['replicas'] > 1 else args.threads}"
                  f" thread(s) per model (--no-fast-elementwise: the plain layers)", flush=True)
    from npformer.training.loop import evaluate_after_step
    try:
        result = T.train(model, task, tc, batches=state.stream, optimizer=state.optimizer,
                         schedule=state.schedule, eval_examples=heldout, start_step=state.step,
                         **extra)
        train_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        ev = evaluate_after_step(lambda: T.evaluate(model, task, heldout, num_shown=args.examples),
                                 result.steps, tc.lr)
    except FloatingPointError as e:
        kept = ("" if not args.save else f"; nothing was saved ({args.save} unchanged)"
                if os.path.exists(args.save) else f"; nothing was saved ({args.save} not written)")
        raise CliError(f"training stopped: {e}{kept}") from None
    eval_s = time.perf_counter() - t1
    result.eval_history.append((result.steps, ev))                # the final held-out point
    state.record(result)                                  # steps, tokens, history: the whole run's
    whole = state.whole_result(result)                    # plots and summary: every call of the run
    tail = whole.losses[-min(50, len(whole.losses)):] if whole.losses else [float("nan")]
    if result.losses:
        print(f"trained {len(result.losses)} steps in {train_s:.1f} s "
              f"({result.tokens_per_second:,.0f} target tokens/s), final train loss "
              f"{sum(tail) / len(tail):.4f} (mean of the run's last {len(tail)} steps"
              f"{'' if state.history.stride == 1 else f' kept, one in {state.history.stride}'})")
    else:
        print("trained 0 steps (--steps 0): the held-out figures are the untrained model's")
    print_eval(ev, task)
    print(f"evaluation took {eval_s:.1f} s; total {train_s + eval_s:.1f} s")
    print_examples(ev.examples, task.is_classification)
    if args.save:
        _save(args, state, ev, train_s)
    elif not (args.init and args.save_pretrained):
        print("not saved: no --save PATH was given (a checkpoint is what generate, evaluate, plot "
              "and --resume read)")
    if args.init and args.save_pretrained:
        save_pretrained_folder(args, model)
    if args.plot:
        np_model = model if args.backend == "numpy" else to_numpy_model(model)
        from npformer.cli.plot_outputs import new_plots_removed_on_failure
        with new_plots_removed_on_failure(args.plot, "--plot", overwrite=args.overwrite):
            paths = train_plots(np_model, task, heldout, whole, args.plot,
                                label_smoothing=tc.label_smoothing)
        print(f"wrote {len(paths)} plots to {args.plot}")
    return 0
