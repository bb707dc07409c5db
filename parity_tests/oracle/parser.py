"""The command line of `npformer-oracle`: every subcommand's options (`build_parser`); the commands
themselves are in cli.py."""
from __future__ import annotations

import argparse
import json

from npformer.cli.argtypes import float_in, int_at_least
from npformer.cli.errors import OneLineParser

from . import __version__

COMPONENT_HELP = ("sdpa, mha, positional, ffn, layernorm, encoder_layer, decoder_layer, model "
                  "(`npformer-oracle list` says what each expects)")


SECRET_HELP = ("a file holding the course's grading secret (16 to 4096 bytes; docs/ORACLE.md, "
               "'Batch grading'): the same values drawn at every run for the same files; never "
               "printed nor written")


def _kv(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    k, _, v = text.partition("=")
    return k.strip(), v.strip()


def _json_arg(text: str):
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                return json.load(f)
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"the file {text[1:]!r} cannot be read "
                                             f"({exc.strerror or exc})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise argparse.ArgumentTypeError(f"the file {text[1:]!r} is not JSON: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"expected JSON (or @file.json): {exc}") from None


def _json_object(text: str) -> dict:
    value = _json_arg(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object of name: value (or "
                                         f"@file.json), got {type(value).__name__} {text!r}")
    return value


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("how inputs are drawn and handed over")
    g.add_argument("--mask-convention", choices=("keep", "drop", "additive"), default=None,
                   help="keep: nonzero/True = may attend (the paper, tutorials' 'mask == 0 means "
                        "hidden'); drop: nonzero/True = hidden (nn.MultiheadAttention); additive: "
                        "float 0 / -inf added to the scores (default keep)")
    g.add_argument("--mask-dtype", choices=("bool", "int", "float"), default=None,
                   help="dtype of keep/drop masks (default bool)")
    g.add_argument("--also-mask-dtype", action="append", choices=("bool", "int", "float"), default=[],
                   dest="mask_dtypes_also", help="another mask dtype the assignment accepts: each "
                   "masked example also runs with its masks in it (repeatable)")
    g.add_argument("--mask-rank", type=int, choices=(3, 4), default=None,
                   help="4: masks shaped (B, 1, Tq, Tk) (default); 3: (B, Tq, Tk)")
    g.add_argument("--strict", action="store_true",
                   help="also draw masks that hide every key from some query and expect zeros "
                        "there (never NaN); by default such rows are never drawn")
    g.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="precision of the candidate's inputs and weights (default float64; the "
                        "reference always computes in float64)")
    g.add_argument("--set", dest="settings", action="append", type=_kv, default=[],
                   metavar="KEY=VALUE",
                   help="fix a hyperparameter or bound (d_model, num_heads, d_ff, eps, activation, "
                        "norm_first, max_len, ...); repeatable")


def _add_sandbox(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("isolation and policy (the submission runs in a worker process of "
                             "its own)")
    g.add_argument("--forbid-import", action="append", default=[], metavar="MODULE",
                   help="a module the submission may not import (repeatable); npformer, "
                        "torchformer and parity_tests are always forbidden unless allowed")
    g.add_argument("--allow-import", action="append", default=[], metavar="MODULE",
                   help="lift the default ban on MODULE (e.g. --allow-import torchformer)")
    g.add_argument("--runs", type=int_at_least(1), default=2,
                   help="calls per example, each with fresh global RNG states (default 2: "
                        "catches nondeterminism)")
    g.add_argument("--memory-mb", type=int_at_least(64), default=4096,
                   help="the worker's memory limit, RLIMIT_DATA (default 4096)")
    g.add_argument("--require-gradients", action="store_true",
                   help="fail (missing_gradient) when an input or parameter gradient could not be "
                        "compared (a forward-only submission, a detached output)")
    g.add_argument("--require", action="append", default=[], metavar="WHAT",
                   choices=("all", "masks", "cross_attention", "gradients", "parameters", "eps", "batch", "sizes",
                            "table", "mask_convention", "norm_order"),
                   help="fail (incomplete / missing_gradient) when WHAT was not compared "
                        "(repeatable; 'all' for grading: every mask kind, cross-attention, "
                        "gradients, every parameter, the assignment's eps, batches, sizes, a "
                        "computed positional table, the assignment's mask convention and norm order)")


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(prog="npformer-oracle",
                                 description="Check a Transformer component against the npformer "
                                             "reference (exit 0 match, 1 mismatch, 2 cannot "
                                             "load/call, crashed, timed out or forbidden import, "
                                             "3 oracle error). Each submission runs in a worker "
                                             "process of its own; the oracle alone decides. "
                                             "Grade a class with `grade`, build a Gradescope "
                                             "autograder with `gradescope-bundle`.")
    ap.add_argument("--version", action="version", version=f"npformer-oracle {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="search for an input on which the candidate differs")
    c.add_argument("component", help=COMPONENT_HELP)
    c.add_argument("candidate", help="path/to/file.py:Name, package.module:Name, or "
                                     "file.py:forward,backward for a NumPy pair")
    _add_common(c)
    g = c.add_argument_group("the search")
    g.add_argument("--examples", type=int_at_least(1), default=25, help="examples to try (default 25)")
    g.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    g.add_argument("--timeout", type=float, default=20.0,
                   help="seconds allowed per candidate call (default 20)")
    g.add_argument("--time-budget", type=float, default=300.0, metavar="SECONDS",
                   help="seconds for the whole search (default 300): a submission slow on "
                        "purpose gets 'timeout', not hours of grading")
    g.add_argument("--replay", type=_json_arg, default=None, metavar="JSON",
                   help="run exactly this example (as printed in a failure's replay command)")
    g = c.add_argument_group("how the candidate is called")
    g.add_argument("--backward", default=None, metavar="NAME",
                   help="name of the backward function of a NumPy forward/backward pair")
    g.add_argument("--framework", choices=("auto", "torch", "numpy"), default="auto")
    g.add_argument("--weight-layout", choices=("out_in", "in_out"), default="out_in",
                   help="layout of square bare weight matrices: out_in (torch.nn.Linear, "
                        "y = x @ W.T) or in_out (y = x @ W); non-square ones are detected")
    g.add_argument("--map", dest="name_map", action="append", type=_kv, default=[],
                   metavar="REF=CAND",
                   help="where the candidate keeps a reference parameter (append .T when stored "
                        "transposed, '-' when it has none) or a block (self_attn=attention); "
                        "repeatable")
    g.add_argument("--map-file", default=None, help="a JSON object of REF: CAND entries")
    g.add_argument("--init-kwargs", type=_json_object, default=None, metavar="JSON",
                   help="constructor keyword arguments: extra ones, or required ones the oracle "
                        "cannot derive, e.g. '{\"bias\": false, \"vocab\": 100}'")
    g.add_argument("--package-root", default=None, metavar="DIR",
                   help="the submission is a package reaching above the named file's folder "
                        "(`from ..layers import x`): the folder its relative imports may reach; "
                        "the worker then sees all of DIR (default: only the file's own folder)")
    g.add_argument("--adapter", default=None, metavar="adapter.py",
                   help="a file of hooks (build, call, weights, backward, grads) for code the "
                        "oracle cannot call on its own; it runs only in the submission's worker "
                        "(docs/ORACLE_STYLES.md)")
    g.add_argument("--allow-unmapped", action="store_true",
                   help="leave candidate parameters the reference has no counterpart for as built")
    g.add_argument("--no-dtype-check", dest="check_dtype", action="store_false",
                   help="do not require the output dtype to equal the input dtype")
    g = c.add_argument_group("reports")
    g.add_argument("--report", default=None, metavar="out.json", help="write the JSON report")
    g.add_argument("--results", default=None, metavar="results.json",
                   help="write Gradescope-style results")
    g.add_argument("--hidden-seed", type=int, default=None,
                   help="also run a hidden search with this seed (redacted in --results)")
    g.add_argument("--hidden-examples", type=int_at_least(1), default=None,
                   help="examples of the hidden search (default: --examples)")
    g.add_argument("--hidden-strict", action="store_true", help="hidden search in strict mode")
    g.add_argument("--hidden-visibility", default="after_due_date",
                   choices=("hidden", "after_due_date", "after_published", "visible"))
    g.add_argument("--points", type=float_in(0.0, 1e6, hi_open=False), default=1.0, help="points per Gradescope test")
    g.add_argument("--overwrite", action="store_true",
                   help="let --report / --results replace an existing file (refused otherwise, "
                        "before the search)")
    g.add_argument("--quiet", action="store_true", help="print only the verdict line")
    g.add_argument("--secret-file", default=None, help=SECRET_HELP)
    _add_sandbox(c)

    gr = sub.add_parser("grade", help="grade a folder of submissions against an assignment spec "
                                      "(TOML): per-student results.json + report.json, a "
                                      "gradebook.csv and a summary")
    gr.add_argument("submissions", help="folder: one sub-folder (holding the spec's entry_file) "
                                        "or one .py file per student")
    gr.add_argument("--spec", required=True, help="assignment.toml (docs/ORACLE.md, 'Batch grading')")
    gr.add_argument("--out", required=True, help="folder for the results (created)")
    gr.add_argument("--overwrite", action="store_true",
                    help="re-grade into an --out that already holds a gradebook (its files are "
                         "replaced; refused otherwise, before grading) or an interrupted run's "
                         "finished submissions (discarded: everyone is graded again)")
    gr.add_argument("--resume", action="store_true",
                    help="after a stop (Ctrl-C, SIGTERM): keep the submissions the stopped run into "
                         "the same --out finished (same spec, files and secret) and grade the others")
    gr.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (default 1)")
    gr.add_argument("--quiet", action="store_true", help="no progress bar")
    gr.add_argument("--secret-file", default=None, help=SECRET_HELP)

    b = sub.add_parser("gradescope-bundle", help="build a Gradescope autograder zip (setup.sh, "
                                                 "run_autograder, the spec, this project pinned)")
    b.add_argument("spec", help="assignment.toml")
    b.add_argument("-o", "--output", required=True, help="the zip to write")
    b.add_argument("--force", action="store_true", help="replace an existing zip")
    b.add_argument("--secret-file", default=None, help=SECRET_HELP)

    r = sub.add_parser("gradescope-run", help="(inside the autograder) grade one submission folder")
    r.add_argument("spec", help="assignment.toml")
    r.add_argument("--submission", required=True, help="the submission folder")
    r.add_argument("--results", required=True, help="results.json to write")
    r.add_argument("--secret-file", default=None, help=SECRET_HELP)

    e = sub.add_parser("export", help="write a fixture bundle (inputs, weights, expected outputs "
                                      "and gradients) for graders in other languages")
    e.add_argument("component", help=COMPONENT_HELP)
    e.add_argument("--out", required=True, help="folder to write (created)")
    e.add_argument("--overwrite", action="store_true",
                   help="replace a bundle already in --out (refused otherwise, before drawing)")
    e.add_argument("--examples", type=int_at_least(1), default=10)
    e.add_argument("--seed", type=int, default=0)
    _add_common(e)

    v = sub.add_parser("verify", help="check a candidate's saved outputs against a bundle")
    v.add_argument("bundle", help="folder written by `export`")
    v.add_argument("outputs", help="folder of case_NNN.npz files, or one .npz with keys "
                                   "'case_NNN/QUANTITY'")
    v.add_argument("--require-all", action="store_true",
                   help="fail when a quantity of the bundle is missing from the outputs")
    v.add_argument("--report", default=None, metavar="out.json")
    v.add_argument("--overwrite", action="store_true",
                   help="let --report replace an existing file (refused otherwise)")

    sub.add_parser("list", help="the components and what each expects")
    return ap
