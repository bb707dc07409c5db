"""How a check's result is described: the counterexample as plain data and the replay command
(runner.py keeps the search; this keeps the words)."""
from __future__ import annotations

import json
import shlex
from typing import Any

from ..components import Case
from ..reading.adapters import Options
from .verdicts import _json_default


def describe_case(case: Case, opts) -> dict:
    """A counterexample as plain data for the report: sizes, shapes, masks as given, values."""
    d: dict[str, Any] = {"hyperparameters": {k: v for k, v in case.hyper.items()
                                             if not k.startswith("_")},
                         "inputs": {k: list(v.shape) for k, v in case.inputs.items()},
                         "upstream_gradient": list(case.dout.shape)}
    masks = {}
    for name, keep in case.masks.items():
        if keep is None:
            masks[name] = None
            continue
        given_ = keep[:, 0] if opts.mask_rank == 3 else keep
        shown = given_ if opts.mask_convention == "keep" else ~given_
        masks[name] = {"shape_given": list(given_.shape),
                       "convention": opts.mask_convention,
                       "keep": keep.astype(int).tolist(),
                       "as_given": shown.astype(int).tolist()
                       if opts.mask_convention != "additive" else "0 / -inf where keep is 0"}
        kind = (case.example.get(name) or {}).get("kind") if isinstance(case.example.get(name),
                                                                         dict) else None
        if kind:
            masks[name]["kind"] = kind
    if masks:
        d["masks"] = masks
    if case.absent:
        d["absent_parameters"] = sorted(case.absent)
    small = {k: v.tolist() for k, v in case.inputs.items() if v.size <= 24}
    if small:
        d["input_values"] = small
    return d


def replay_command(candidate, comp_name: str, o, example: dict) -> str:
    """The command line that runs exactly `example` again."""
    ex = json.dumps(example, separators=(",", ":"), default=_json_default)
    if not isinstance(candidate, str):
        return (f"oracle.check({comp_name!r}, <candidate object>, "
                f"replay=json.loads({ex!r}), ...same options)")
    d = Options()
    parts = ["npformer-oracle", "check", comp_name, candidate]
    for flag, attr in (("--mask-convention", "mask_convention"), ("--mask-dtype", "mask_dtype"),
                       ("--mask-rank", "mask_rank"), ("--dtype", "dtype"),
                       ("--framework", "framework"), ("--weight-layout", "weight_layout"),
                       ("--timeout", "timeout")):
        if getattr(o, attr) != getattr(d, attr) or attr in o.declared:   # a fixed one: repeated
            parts += [flag, str(getattr(o, attr))]
    if o.strict:
        parts.append("--strict")
    if o.allow_unmapped:
        parts.append("--allow-unmapped")
    if not o.check_dtype:
        parts.append("--no-dtype-check")
    for k, v in o.name_map.items():
        parts += ["--map", f"{k}={v}"]
    for k, v in o.settings.items():
        parts += ["--set", f"{k}={v}"]
    if o.init_kwargs:
        parts += ["--init-kwargs", json.dumps(o.init_kwargs)]
    if o.adapter_path:
        parts += ["--adapter", o.adapter_path]
    parts += ["--replay", ex]
    return " ".join(shlex.quote(p) for p in parts)
