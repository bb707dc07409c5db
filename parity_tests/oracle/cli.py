"""`npformer-oracle` (also `python -m parity_tests.oracle`): check, export, verify, list.

Exit status: 0 the candidate matches, 1 it computes something else, 2 it cannot be loaded or called
as the component requires (also: bad command line), 3 the oracle itself failed.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

from .parser import build_parser

if TYPE_CHECKING:
    from .reading.adapters import Options


MASK_DEFAULTS = {"mask_convention": "keep", "mask_dtype": "bool", "mask_rank": 4}


def mask_defaults(args) -> None:
    """The mask flags given on the command line become `args.declared` (fixed: the oracle never
    adapts them to the submission); the others take their defaults."""
    args.declared = tuple(k for k in MASK_DEFAULTS if getattr(args, k, None) is not None)
    for k, v in MASK_DEFAULTS.items():
        if hasattr(args, k) and getattr(args, k) is None:
            setattr(args, k, v)


def _options(args) -> "Options":
    from .reading.adapters import Options

    name_map = dict(args.name_map)
    if getattr(args, "map_file", None):
        try:
            with open(args.map_file, encoding="utf-8") as f:
                loaded = json.load(f)
        except OSError as exc:
            raise ValueError(f"--map-file {args.map_file!r}: cannot be read "
                             f"({exc.strerror or exc})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"--map-file {args.map_file!r}: not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise ValueError("--map-file: expected a JSON object of REF: CAND entries")
        name_map = {**loaded, **name_map}
    return Options(mask_convention=args.mask_convention, mask_dtype=args.mask_dtype,
                   mask_rank=args.mask_rank, declared=getattr(args, "declared", ()),
                   mask_dtypes_also=tuple(getattr(args, "mask_dtypes_also", ())),
                   strict=args.strict, examples=args.examples,
                   seed=args.seed, dtype=args.dtype, timeout=args.timeout,
                   time_budget=getattr(args, "time_budget", 300.0),
                   framework=args.framework, weight_layout=args.weight_layout, name_map=name_map,
                   init_kwargs=dict(args.init_kwargs or {}), settings=dict(args.settings),
                   allow_unmapped=args.allow_unmapped, check_dtype=args.check_dtype,
                   adapter_path=(os.path.abspath(args.adapter)
                                 if getattr(args, "adapter", None) else None),
                   package_root=(os.path.abspath(args.package_root)
                                 if getattr(args, "package_root", None) else None))


def _required(names: list) -> tuple:
    """Writing Gradescope results is grading: everything is required unless the command names
    what is (--require WHAT, --require-gradients)."""
    from .core.completeness import REQUIREMENTS
    return REQUIREMENTS if "all" in names else tuple(names)


def _spec_file(spec: str) -> str | None:
    """The file of a `path/to/file.py:Name` candidate, None for a module name."""
    path = spec.split(":", 1)[0] if ":" in spec else spec
    return path if os.path.isfile(path) else None


def _refuse_reports_over_inputs(outputs, inputs) -> None:
    """Refuse, before any work, a report path that is one of the run's input files, a file inside
    an input folder, or the path of another report of the same run (a report written over the
    submission replaced the code being graded)."""
    done = []
    for path, flag in outputs:
        if not path:
            continue
        real = os.path.realpath(path)
        for given, what in inputs:
            if not given or not os.path.exists(given):
                continue
            where = os.path.realpath(given)
            inside = os.path.isdir(where) and os.path.exists(real) and \
                os.path.commonpath([where, real]) == where
            if real == where or inside:
                raise ValueError(f"{flag} {path!r}: would replace {'a file of ' if inside else ''}"
                                 f"{what} ({given}), an input of this run; choose another path")
        for other, other_flag in done:
            if os.path.realpath(other) == real:
                raise ValueError(f"{flag} {path!r}: the same path as {other_flag}; give each "
                                 f"report its own path")
        done.append((path, flag))


def _check_salts(args):
    """salt(hidden) for `check --secret-file` (grading/secret.py's semantics: the component names
    the check, the submission's own files fix the values); None for each without the flag."""
    if args.secret_file is None:
        return lambda hidden: None
    from .grading.batch import fingerprint
    from .grading.secret import check_salt, read_secret

    secret = read_secret(args.secret_file)
    path = _spec_file(args.candidate)
    digest = fingerprint(path) if path else args.candidate      # a module spec: its name
    # args.component is already the canonical name (main() maps common spellings)
    return lambda hidden: check_salt(secret, args.component, hidden, digest)


def cmd_check(args) -> int:
    from dataclasses import replace

    from .core.entry import check
    from .core.report import check_output_path, combined_exit, gradescope_results, json_report, render_text, write_json
    from .sandbox.limits import Limits
    from .sandbox.policy import DEFAULT_FORBIDDEN

    _refuse_reports_over_inputs(((args.report, "--report"), (args.results, "--results")),
                                ((_spec_file(args.candidate), "the submission"),
                                 (args.adapter, "--adapter"), (args.map_file, "--map-file")))
    replace_flag = None if args.overwrite else "--overwrite"
    for path, flag in ((args.report, "--report"), (args.results, "--results")):
        if path:
            check_output_path(path, flag, replace_flag)     # before the search, not after it
    opts = _options(args)
    spec = args.candidate
    if args.backward:
        spec = f"{spec},{args.backward}"
    salt = _check_salts(args)                       # read before the search, never shown
    kw = dict(forbid_import=list(DEFAULT_FORBIDDEN) + list(args.forbid_import),
              allow_import=args.allow_import, runs=args.runs,
              limits=Limits(memory_mb=args.memory_mb), require_gradients=args.require_gradients,
              score_groups=bool(args.results),
              require=_required(args.require or ([] if args.require_gradients or not args.results
                                                 else ["all"])))
    public = check(args.component, spec, opts, replay=args.replay, salt=salt(False), **kw)
    hidden = None
    if args.hidden_seed is not None and args.replay is None and public.exit_code < 2:
        hopts = replace(_options(args), seed=args.hidden_seed,
                        examples=args.hidden_examples or args.examples,
                        strict=args.strict or args.hidden_strict)
        hidden = check(args.component, spec, hopts, salt=salt(True), **kw)
    if args.quiet:
        print(f"{public.verdict} (exit {public.exit_code})"
              + (f": {public.quantity_label}" if public.quantity_label else ""))
    else:
        print(render_text(public))
        if hidden is not None:
            print(f"hidden search (seed {args.hidden_seed}): {hidden.verdict} (exit "
                  f"{hidden.exit_code})" + (f": {hidden.quantity_label}" if hidden.quantity_label
                                            else ""))
    if args.report:
        write_json(args.report, json_report(public, hidden))
    if args.results:
        write_json(args.results, gradescope_results(public, hidden, points=args.points,
                                                    hidden_visibility=args.hidden_visibility))
    return combined_exit(public, hidden)


def cmd_export(args) -> int:
    import re

    from npformer.io.files import check_output_dir

    from .components import get
    from .components.base import parse_settings
    from .grading.fixtures import export

    parse_settings(get(args.component), dict(args.settings))   # a bad --set: before any folder
    names = sorted(os.listdir(args.out)) if os.path.isdir(args.out) else []
    check_output_dir(args.out, "--out", overwrite=args.overwrite,      # a bundle there: refused
                     writes=[n for n in names if re.fullmatch(r"manifest\.json|case_\d+\.npz", n)])
    manifest = export(args.component, args.out, examples=args.examples, seed=args.seed,
                      dtype=args.dtype, mask_convention=args.mask_convention,
                      mask_dtype=args.mask_dtype, mask_rank=args.mask_rank, strict=args.strict,
                      settings=dict(args.settings))
    print(f"wrote {len(manifest['cases'])} case(s) of {args.component} to {args.out} "
          f"(manifest.json + case_NNN.npz)")
    return 0


def cmd_verify(args) -> int:
    from .core.report import check_output_path, write_json
    from .grading.fixtures import render_verify, verify

    _refuse_reports_over_inputs(((args.report, "--report"),),
                                ((args.outputs, "the outputs"), (args.bundle, "the bundle")))
    if args.report:
        check_output_path(args.report, "--report", None if args.overwrite else "--overwrite")
    result = verify(args.bundle, args.outputs, require_all=args.require_all)
    print(render_verify(result))
    if args.report:
        write_json(args.report, result)
    return int(result["exit_code"])


def cmd_grade(args) -> int:
    from .grading.batch import grade, render_summary

    try:
        res = grade(args.submissions, args.spec, args.out, jobs=args.jobs, quiet=args.quiet,
                    secret_file=args.secret_file, overwrite=args.overwrite, resume=args.resume)
    except KeyboardInterrupt:
        from .grading.out_folder import OutFolder
        if kept := OutFolder(args.out).partial_count():
            print(f"npformer-oracle: {kept} submission(s) finished before the stop are kept in "
                  f"{os.path.join(args.out, '.partial')} (no gradebook was written): the same "
                  f"command with --resume grades only the others", file=sys.stderr)
        raise
    print(render_summary(res["summary"]))
    print(f"wrote {os.path.join(args.out, 'gradebook.csv')}, summary.json and one folder per student")
    return 0


def cmd_bundle(args) -> int:
    from .grading.gradescope import build_bundle

    info = build_bundle(args.spec, args.output, force=args.force,
                        secret_file=args.secret_file)
    print(f"wrote {info['zip']} ({info['files']} files; pins: {info['pins']})")
    return 0


def cmd_gradescope_run(args) -> int:
    from .grading.gradescope import run_one

    res = run_one(args.spec, args.submission, args.results, secret_file=args.secret_file)
    print(res["output"])
    return 0


def cmd_list(args) -> int:
    from .components import COMPONENTS

    for name, comp in COMPONENTS.items():
        ins = ", ".join(f"{i.name}" + (" (ids)" if i.kind == "ids" else "") for i in comp.inputs)
        masks = ", ".join(m.name for m in comp.masks) or "none"
        print(f"{name:14s} {comp.title}")
        print(f"{'':14s}   inputs: {ins}; masks: {masks}; constructor hyperparameters: "
              f"{', '.join(comp.hypers) or 'none'}")
        print(f"{'':14s}   --set keys: {', '.join(sorted(comp.settable)) or 'none'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    mask_defaults(args)
    try:
        handler = {"check": cmd_check, "export": cmd_export, "verify": cmd_verify,
                   "list": cmd_list, "grade": cmd_grade, "gradescope-bundle": cmd_bundle,
                   "gradescope-run": cmd_gradescope_run}[args.command]
        if getattr(args, "component", None) is not None:   # a common spelling -> the canonical name
            from .components import get
            args.component = get(args.component).name
        from npformer.cli.option_rules import sigterm_as_interrupt

        from .interrupts import interrupts_kept
        with sigterm_as_interrupt(), interrupts_kept():   # SIGTERM stops it as Ctrl-C does
            return handler(args)
    except KeyboardInterrupt as exc:                      # one line, never a traceback
        print(f"npformer-oracle: {stopped_line(exc)}", file=sys.stderr)
        return 143 if type(exc).__name__ == "Terminated" else 130
    except ModuleNotFoundError as exc:
        hint = {"hypothesis": "pip install hypothesis (or, in the repository: pip install -e '.[oracle]')",
                "torch": "pip install torch (needed only for PyTorch submissions)",
                "tomli": "use Python 3.11+ or pip install tomli"}.get(exc.name or "",
                                                                     "pip install -e '.[oracle]' in the repository")
        print(f"npformer-oracle: error: the module {exc.name!r} is not installed: {hint}",
              file=sys.stderr)
        return 2
    except (ValueError, KeyError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"npformer-oracle: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError as exc:
        from npformer.cli.pipes import quiet_exit_after_closed_stdout, stdout_reader_gone
        if stdout_reader_gone():                          # `npformer-oracle list | head`
            return quiet_exit_after_closed_stdout()
        print(f"npformer-oracle: error: cannot read or write: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except OSError as exc:                                # a full disk, a vanished folder
        where = f" {exc.filename}" if exc.filename else ""
        print(f"npformer-oracle: error: cannot read or write{where}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2


def stopped_line(exc: BaseException) -> str:
    what = "terminated (SIGTERM)" if type(exc).__name__ == "Terminated" else "interrupted (Ctrl-C)"
    return (f"{what}: stopped before the end; no verdict was given, and only files written "
            f"whole before the stop were kept")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
