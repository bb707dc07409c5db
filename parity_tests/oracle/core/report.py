"""Reports: the human text, the JSON report and a Gradescope-style results.json.

JSON report (`--report out.json`): everything the oracle knows about the check, for people and
scripts: verdict, exit code, the differing quantity, the minimal counterexample (example, shapes,
masks, worst index, both values, abs/rel error against the tolerance), the replay command, the
parameter mapping, what was and was not compared, versions. With a hidden run, its full result sits
under "hidden" (the report is for graders, not students).

Gradescope (`--results results.json`): one test per quantity group (output, attention weights, input
gradients, parameter gradients), in dependency order. Public tests show the full failure; hidden tests
(a second search with another seed) say only which component and which property failed, never the
data, shapes or the replay command. Each test is worth `points`; a group is passed when every one of
its quantities matched on every example, failed when it holds the first differing quantity; after a
failure every other group is judged by a search comparing it alone (groups.py, `score_groups`) and
gets 0 ("not reached") without one.
"""
from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import numpy as np

from .groups import COMPLETE_SEARCH, GROUP_ORDER
from .groups import group_of as _group_of
from .policy_text import policy_lines
from .verdicts import VERDICTS, CheckResult


def _json_default(o: Any):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)


def check_output_path(path: str, what: str = "output", replace_flag: str | None = None) -> str:
    """Fail early (before any search) when `path` cannot be written: a folder, or a parent that is
    a file or not writable; with replace_flag (the option that allows it, e.g. "--overwrite"), also
    an existing file, so a user's earlier report is never silently replaced. Returns the absolute
    path."""
    ap = os.path.abspath(path)
    if os.path.isdir(ap):
        raise ValueError(f"{what} {path!r}: expected a file path, got a folder")
    if replace_flag is not None and os.path.lexists(ap):
        raise ValueError(f"{what} {path!r}: the file exists (pass {replace_flag} to replace it)")
    folder = os.path.dirname(ap)
    probe = folder
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise ValueError(f"{what} {path!r}: {probe!r} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {path!r}: folder {probe!r} is not writable")
    return ap


def write_text_atomic(path: str, text: str) -> None:
    """Write via a temporary file in the same folder, fsync, rename: readers see the old file or
    the whole new one, never a part."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename:
            exc.filename = path           # a full disk names the file it could not write
        raise


def json_text(data: dict) -> str:
    """`data` as the oracle's JSON files hold it (numpy values as plain ones, NaN and inf kept)."""
    return json.dumps(data, indent=2, default=_json_default, allow_nan=True) + "\n"


def write_json(path: str, data: dict) -> None:
    write_text_atomic(path, json_text(data))


def json_report(public: CheckResult, hidden: CheckResult | None = None) -> dict:
    d = {"report": "npformer-oracle check", "report_version": 1, **public.to_dict()}
    if hidden is not None:
        d["hidden"] = hidden.to_dict()
        d["combined_exit_code"] = combined_exit(public, hidden)
    return d


def combined_exit(*results: CheckResult | None) -> int:
    codes = [r.exit_code for r in results if r is not None]
    # 3 (oracle error) > 2 (cannot load/call) > 1 (mismatch) > 0
    return max(codes) if codes else 0


# ------------------------------------------------------------------------------------------------
# Gradescope
# ------------------------------------------------------------------------------------------------
def _groups(res: CheckResult) -> list[str]:
    keys = list(res.quantities) + list(res.checked) + ([res.quantity] if res.quantity else [])
    seen = {_group_of(k) for k in keys}
    if not seen:  # nothing ran (load / interface error): the component's usual groups
        seen = {"output"}
        if res.component in ("sdpa", "mha"):
            seen.add("attention weights")
        if res.component not in ("model",):
            seen.add("input gradients")
        if res.component not in ("sdpa", "positional"):
            seen.add("parameter gradients")
    if res.verdict in ("mutates_input", "nondeterministic", "wrong_dtype"):
        seen.add("output")
    return [g for g in GROUP_ORDER if g in seen]


def _public_text(res: CheckResult, group: str, status: str) -> str:
    alone = (res.group_searches or {}).get(group)
    if status == "passed":
        keys = [k for k in dict.fromkeys(list(res.quantities) + list(res.checked))
                if _group_of(k) == group]
        n = alone["examples"] if alone else res.examples_run
        return (f"{res.component}: {group} matched the reference on all {n} examples"
                + (" of a search comparing it alone" if alone else "")
                + f" ({len(keys)} quantit{'y' if len(keys) == 1 else 'ies'}).")
    if status == "not reached":
        return (f"{res.component}: {group} not checked: the search stopped at an earlier "
                f"difference ({res.quantity_label or res.verdict}).")
    if group in _partial(res) or (alone or {}).get("partial"):
        return (f"{res.component}: {group} returned on some examples only (a group scores "
                f"when it is compared on every example).")
    if res.quantity and _group_of(res.quantity) != group:
        why = (f"a search comparing it alone ended in {alone['verdict']}" if alone else
               f"the search stopped at {res.quantity_label or res.verdict}")
        return (f"{res.component}: {group} failed too: {why}. Fix the first difference "
                f"({res.quantity_label or res.verdict}) first; see the "
                f"'{_group_of(res.quantity)}' test for the full report.")
    return render_text(res)


def _hidden_text(res: CheckResult, group: str, status: str) -> str:
    if status == "passed":
        return f"{res.component}: {group} matched the reference on the hidden examples."
    if status == "not reached":
        return f"{res.component}: {group} not checked on the hidden examples (an earlier check failed)."
    if group in _partial(res) or (res.group_searches or {}).get(group, {}).get("partial"):
        return f"{res.component}: {group} returned on some hidden examples only."
    what = res.quantity_label or group
    if res.quantity and _group_of(res.quantity) != group:
        return (f"{res.component}: hidden check failed: {group} did not match when compared "
                f"alone, and {what} differs first. The hidden inputs are not shown.")
    return (f"{res.component}: hidden check failed: {what} - {VERDICTS[res.verdict][1]} "
            f"(verdict {res.verdict}). The hidden inputs are not shown.")


def _statuses(res: CheckResult) -> dict[str, str]:
    """passed / failed / not reached per group. After a value failure the search stopped and
    shrank: every other group passes only by a search of its own (groups.follow_up, in
    `res.group_searches`), never by the shrunk counterexample alone. A gap that concerns every
    group (masks, cross-attention, batch, eps never compared) fails them all."""
    out = _group_statuses(res)
    for g in _partial(res):      # returned on some examples only: never passed
        if out.get(g) == "passed":
            out[g] = "failed"
    return out


def _partial(res: CheckResult) -> set[str]:
    """Groups with a quantity compared on some examples and not returned on others (attention
    weights given only where they are right): their pass would cover the examples they chose."""
    return {_group_of(k) for k in res.checked if k in res.not_checked}


def _group_statuses(res: CheckResult) -> dict[str, str]:
    groups = _groups(res)
    if res.exit_code >= 2:
        return {g: "failed" for g in groups}
    if res.exit_code == 0:
        return {g: "passed" for g in groups}
    failing = _group_of(res.quantity) if res.quantity else "output"
    if res.verdict in COMPLETE_SEARCH and res.example is None:     # the search ran to its end
        if res.verdict == "incomplete" and failing == "output":
            return {g: "failed" for g in groups}
        keys = list(dict.fromkeys(list(res.quantities) + list(res.checked)))
        return {g: "failed" if g == failing else (
            "passed" if all(k in res.checked for k in keys if _group_of(k) == g) else "failed")
            for g in groups}
    searched = res.group_searches or {}
    return {g: "failed" if g == failing else searched.get(g, {}).get("status", "not reached")
            for g in groups}


def gradescope_tests(res: CheckResult, *, hidden: bool = False, points: float = 1.0,
                     visibility: str = "visible") -> list[dict]:
    tests = []
    for group, status in _statuses(res).items():
        name = f"{res.component}: {group}" + (" (hidden)" if hidden else "")
        text = _hidden_text(res, group, status) if hidden else _public_text(res, group, status)
        tests.append({"name": name, "score": points if status == "passed" else 0.0,
                      "max_score": points, "output": text, "visibility": visibility,
                      "status": "passed" if status == "passed" else "failed"})
    return tests


def gradescope_results(public: CheckResult, hidden: CheckResult | None = None, *,
                       points: float = 1.0, hidden_visibility: str = "after_due_date") -> dict:
    tests = gradescope_tests(public, points=points)
    if hidden is not None:
        tests += gradescope_tests(hidden, hidden=True, points=points, visibility=hidden_visibility)
    # a hidden gap is named, never explained: its reasons may quote the worker (hidden inputs)
    gaps = {**{g: f"{g}: not compared on the hidden examples"
               for g in (hidden.gaps if hidden is not None else {})}, **public.gaps}
    if gaps and not public.required:   # a quick check's partial comparison is never full marks
        tests.append({"name": f"{public.component}: everything compared", "score": 0.0,
                      "max_score": points, "visibility": "visible", "status": "failed",
                      "output": "\n".join(f"{public.component}: {why}" for why in gaps.values())})
    score = sum(t["score"] for t in tests)
    verdict = public.verdict if hidden is None or public.exit_code else hidden.verdict
    return {"score": score, "max_score": sum(t["max_score"] for t in tests),
            "output": f"npformer-oracle: {public.component} {verdict}", "visibility": "visible",
            "output_format": "text",   # a submission's Markdown/HTML in a message is not rendered
            "stdout_visibility": "hidden", "tests": tests}


# ------------------------------------------------------------------------------------------------
# text
# ------------------------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _mask_lines(name: str, m: dict) -> list[str]:
    conv = {"keep": "1 = may attend", "drop": "1 = hidden", "additive": "0 / -inf added to scores"}
    shape = tuple(m["shape_given"])
    lines = [f"    {name}: {m.get('kind', '')} mask, given as shape {shape} "
             f"({m['convention']}: {conv[m['convention']]})"]
    arr = np.asarray(m["as_given"] if m["convention"] != "additive" else m["keep"])
    if arr.size <= 200:
        lines.append("      (one [row] per query, one digit per key; [b,h] = batch, head)"
                     if arr.ndim == 4 else "      (one [row] per query, one digit per key; [b] = batch)")
        flat = arr.reshape(-1, arr.shape[-2], arr.shape[-1])
        lead = list(np.ndindex(*arr.shape[:-2])) or [()]
        for idx, block in zip(lead, flat):
            rows = " ".join("[" + " ".join(str(int(x)) for x in r) + "]" for r in block)
            where = ",".join(str(i) for i in idx)
            lines.append(f"      [{where}] {rows}" if where else f"      {rows}")
    return lines


def _lines(entries: list[str]) -> str:
    """The report's lines; an entry holding a newline (a message or note written by the
    submission) continues indented under its own first line, so no text from a submission starts
    a line of its own (a forged `verdict: MATCH` line)."""
    out = []
    for e in entries:
        first, *rest = e.split("\n")
        pad = " " * (len(first) - len(first.lstrip(" ")) + 4)
        out.append(first)
        out.extend(pad + r for r in rest)
    return "\n".join(out)


def render_text(res: CheckResult, *, verbose: bool = True) -> str:
    L = [f"npformer-oracle check {res.component} {res.candidate}" + (f"  ({res.kind})" if res.kind else "")]
    L.append(f"verdict: {res.verdict.upper()} (exit {res.exit_code}) - {VERDICTS[res.verdict][1]}"
             f"; {res.examples_run} example(s), {res.elapsed_s:.1f} s")
    for g, why in res.gaps.items():
        L.append(f"  NOT COMPARED ({g}): {why}")
    if verbose:
        L.extend(policy_lines(res))
    if res.exit_code == 0:
        if res.checked:
            L.append("  compared: " + ", ".join(
                k + (f" ({res.compared_as[k]})" if k in res.compared_as else "") for k in res.checked))
        for k, why in res.not_checked.items():
            L.append(f"  not compared: {k}: {why}")
        for n in res.notes:
            L.append(f"  note: {n}")
        return _lines(L)
    if res.quantity:
        L.append(f"  first differing quantity: {res.quantity_label}  [{res.quantity}]")
    L.append(f"  {res.message}")
    d = res.detail
    if res.example is not None:
        L.append("  minimal counterexample (shrunk by Hypothesis):")
        ex = {k: v for k, v in res.example.items() if not isinstance(v, dict) and k != "seed"}
        L.append("    sizes: " + " ".join(f"{k}={v}" for k, v in ex.items())
                 + f"; seed {res.example.get('seed')}")
        c = res.case or {}
        if c.get("inputs"):
            L.append("    inputs: " + ", ".join(f"{k} {tuple(v)}" for k, v in c["inputs"].items()))
        for name, m in (c.get("masks") or {}).items():
            if m is None:
                L.append(f"    {name}: none")
            else:
                L.extend(_mask_lines(name, m))
        if c.get("absent_parameters"):
            L.append("    parameters the candidate does not have (held at 0 / 1): "
                     + ", ".join(c["absent_parameters"]))
    if "worst_index" in d:
        at = ", ".join(f"{k} {v}" for k, v in d.get("worst_at", {}).items())
        L.append(f"    worst element: {res.quantity}[{at}]")
        L.append(f"      got       {_fmt(d['got'])}")
        L.append(f"      expected  {_fmt(d['expected'])}")
        if "tolerance" in d:
            t = d["tolerance"]
            allowed = t.get("allowed_at_worst")
            L.append(f"      abs err {d['abs_err']:.3e}, rel err {d['rel_err']:.3e}; allowed there "
                     + (f"{allowed:.3e}" if allowed is not None else "n/a")
                     + f" (atol {t['atol']:.0e} x max(1, max|expected|) + rtol {t['rtol']:.0e} x "
                       f"|expected|): {d['ratio_to_tolerance']:.3g} x tolerance")
            L.append(f"      {d['elements_over']} of {d['elements']} elements over tolerance; "
                     f"largest abs err {d['max_abs_err']:.3e}")
    if d.get("problem") and "worst_index" not in d:
        L.append(f"    {d['problem']}")
    if d.get("note"):
        L.append(f"    note: {d['note']}")
    after = d.get("after_first_difference") or {}
    if after:
        same = [k for k, v in after.items() if v == "match"]
        diff = [k for k, v in after.items() if v == "differs"]
        if diff:
            L.append("  on this counterexample these differ too: " + ", ".join(diff))
        if same:
            L.append("  on this counterexample these still match: " + ", ".join(same))
    if res.traceback:
        L.append("  candidate traceback (last lines):")
        L.extend("    " + line for line in res.traceback.rstrip().splitlines()[-8:])
    if res.printed.strip() and verbose:
        L.append("  candidate printed (last lines):")
        L.extend("    " + line for line in res.printed.rstrip().splitlines()[-5:])
    if res.mapping and verbose:
        L.append("  parameter mapping (reference <- candidate):")
        L.extend("    " + m for m in res.mapping)
    for n in res.notes:
        L.append(f"  note: {n}")
    if res.replay:
        L.append("  replay exactly this case:")
        L.append(f"    {res.replay}")
    return _lines(L)
