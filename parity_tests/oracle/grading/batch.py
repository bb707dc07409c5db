"""Grade a class: every submission of a folder against an assignment spec (spec.py).

    npformer-oracle grade SUBMISSIONS/ --spec assignment.toml --jobs 4 --out grades/

SUBMISSIONS/ holds one folder per student (the spec's entry_file inside) or one .py file per student.
Each (student, check) runs `check()` in a grading process of this package's own (a pool of `--jobs`
spawned processes); each check runs the submission in a fresh worker process of its own
(sandbox/), so no submission shares a process with another or with the grader. Grades depend only
on the spec and the submission (fixed seeds for the sizes; the values are a secret of each check),
never on the order or on other submissions.

Every submission is read into memory before grading starts (MAX_BYTES each); each check runs on a
fresh copy written to a private temporary folder just before it, fingerprinted (SHA-256) before
and after. A copy that changed while it was graded (another submission writing into it: same user,
no container) is graded again at the end, alone, from the bytes in memory, so no submission can
change another's grade; the report says `regraded`. Files are written at the end, once, after
every worker is gone, atomically:

    OUT/<student>/results.json   Gradescope-format results (score, one test per check)
    OUT/<student>/report.json    the full JSON report of every check
    OUT/gradebook.csv            student, score, max_score, status, then each check's verdict (the spec's columns)
    OUT/summary.json             score distribution, verdict counts, most common failing quantity
"""
from __future__ import annotations

import collections
import csv
import hashlib
import io
import os
import stat
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from .out_folder import OutFolder, check_out_dir, submission_key
from .pool_stop import RecordingContext, stop_workers, the_stop
from .progress import Progress
from .run_files import RunFiles
from .spec import Assignment, check_options, load_spec
from .submissions import (  # noqa: F401
    MAX_BYTES,
    RESERVED,
    SubmissionError,
    csv_cell,
    find_submissions,
    ignored_entries,
    materialize,
    missing_file,
    read_submission,
)


def fingerprint(root: str) -> str:
    """SHA-256 over a submission's files (its folder, or its single file). Never follows a link
    nor opens what is not a regular file (a link to /dev/zero or a pipe left in the copy would
    have read forever or blocked the grading process); names are hashed as bytes (a name that is
    not UTF-8 used to raise, and the student got `oracle_error`)."""
    h = hashlib.sha256()
    if os.path.isfile(root) and not os.path.islink(root):
        files, base = [root], os.path.dirname(root)
    else:
        files, base = [], root
        for dp, dns, fns in os.walk(root):
            dns[:] = sorted(d for d in dns if d != "__pycache__")
            files += [os.path.join(dp, f) for f in sorted(fns + [d for d in dns if os.path.islink(
                os.path.join(dp, d))])]
    for f in files:
        h.update(os.fsencode(os.path.relpath(f, base)) + b"\0")
        h.update(_file_digest(f))
    return h.hexdigest()


def _file_digest(path: str) -> bytes:
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return b"link:" + os.fsencode(os.readlink(path))
        if not stat.S_ISREG(st.st_mode):
            return b"special:%o" % stat.S_IFMT(st.st_mode)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):   # swapped after the lstat
                return b"special"
            d = hashlib.sha256()
            while chunk := fh.read(1 << 20):
                d.update(chunk)
            return d.digest()
    except OSError:
        return b"<unreadable>"


def _entry_spec(path: str, entry: str) -> str:
    if ":" in entry:
        fname, _, name = entry.rpartition(":")
        return f"{os.path.join(os.path.dirname(path), fname)}:{name}"
    return f"{path}:{entry}"


def grade_copy(spec: Assignment, student: str, files: dict[str, bytes],
               folder: str | None = None, secret: bytes | None = None,
               copy_at: tuple[str | None, str] = (None, "oracle-sub-")) -> dict:
    """Grade a fresh private copy of the submission; `intact` says whether the copy was left
    unchanged while it was graded (runs in a grading process; plain data back). Its worker may not
    read the class's folder nor the other copies (where Landlock is available; copies made later
    are unreadable to it anyway: Landlock allows only what existed when it was applied).
    copy_at: (the folder, the name prefix) of the copy (run_files.RunFiles)."""
    import glob
    import shutil

    root = materialize(files, prefix=copy_at[1], folder=copy_at[0])
    try:
        before = fingerprint(root)
        others = [p for p in glob.glob(os.path.join(glob.escape(os.path.dirname(root)), "oracle-sub-*"))
                  if os.path.realpath(p) != os.path.realpath(root)]
        out = grade_one(spec, student, os.path.join(root, spec.entry_file),
                        deny_read=tuple(([folder] if folder else []) + others),
                        secret=secret, digest=before)
        out["intact"] = fingerprint(root) == before
        own_paths(out, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out["path"] = student
    return out


def own_paths(graded: dict, root: str) -> None:
    """Messages name the student's own files (`model.py`), not the private copy's random path."""
    for row in graded["checks"]:
        row["message"] = str(row["message"]).replace(root + os.sep, "")


def grade_one(spec: Assignment, student: str, path: str, deny_read: tuple = (),
              secret: bytes | None = None, digest: str = "") -> dict:
    """All checks of one submission; plain data back. deny_read: folders its worker may not read;
    secret: the course's (--secret-file), with `digest` (the submission's fingerprint) fixing each
    check's drawn values (secret.py); None: new values at every run."""
    from ..core.entry import check
    from ..core.report import json_report
    from ..sandbox.limits import Limits
    from .secret import check_salt

    limits = Limits(memory_mb=spec.memory_mb, deny_read=tuple(deny_read))
    out = {"student": student, "path": path, "checks": []}
    for c in spec.checks:
        cand = _entry_spec(path, c.entry)
        kw = dict(forbid_import=spec.forbid_import, allow_import=spec.allow_import,
                  runs=spec.runs, limits=limits, threads=1,
                  require=tuple(spec.require))
        if not os.path.isfile(cand.rpartition(":")[0]):
            row = {"name": c.name, "verdict": "load_error", "exit_code": 2, "points": 0.0,
                   "max_points": c.points,
                   "message": missing_file(os.path.dirname(path), os.path.relpath(
                       cand.rpartition(":")[0], os.path.dirname(path))),
                   "quantity": None, "report": None}
            out["checks"].append(row)
            if c.hidden:
                out["checks"].append({**row, "name": c.name + " (hidden)",
                                      "max_points": float(c.hidden.get("points", 0))})
            continue
        def salt(hidden: bool, name=c.name):
            return None if secret is None else check_salt(secret, name, hidden, digest)
        pub = check(c.component, cand, check_options(spec, c), salt=salt(False), **kw)
        hid = check(c.component, cand, check_options(spec, c, hidden=True), salt=salt(True),
                    **kw) if c.hidden else None
        rep = json_report(pub, hid)
        out["checks"].append({"name": c.name, "verdict": pub.verdict, "exit_code": pub.exit_code,
                              "points": c.points if pub.exit_code == 0 else 0.0,
                              "max_points": c.points, "message": pub.message,
                              "quantity": pub.quantity_label, "report": rep})
        if hid is not None:
            hp = float(c.hidden.get("points", 0))
            out["checks"].append({"name": c.name + " (hidden)", "verdict": hid.verdict,
                                  "exit_code": hid.exit_code,
                                  "points": hp if hid.exit_code == 0 else 0.0, "max_points": hp,
                                  "message": "hidden check " + ("passed" if hid.exit_code == 0
                                                                else f"failed ({hid.verdict})"),
                                  "quantity": hid.quantity_label, "report": None, "hidden": True})
    out["score"] = sum(r["points"] for r in out["checks"])
    return out


def load_error_row(spec: Assignment, student: str, why: str) -> dict:
    """A student whose submission was refused before grading: 0 on every check, the reason."""
    checks = []
    for c in spec.checks:
        row = {"name": c.name, "verdict": "load_error", "exit_code": 2, "points": 0.0,
               "max_points": c.points, "message": why, "quantity": None, "report": None}
        checks.append(row)
        if c.hidden:
            checks.append({**row, "name": c.name + " (hidden)",
                           "max_points": float(c.hidden.get("points", 0)), "hidden": True})
    return {"student": student, "path": student, "score": 0.0, "intact": True, "checks": checks}


def indented(text: str) -> str:
    """A test's output whose first line is the oracle's: every later line (the submission's
    exception text or output, which may hold line breaks) is indented under it, so none can pass
    for a line of the oracle's own (a forged `match: ...` in Gradescope's test output)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + ["    " + line for line in rest])


def results_json(graded: dict, spec: Assignment) -> dict:
    """Gradescope's results.json for one student. Every output is plain text (`output_format`):
    Markdown or HTML in a submission's message (a fake score table) is shown as written."""
    tests = []
    for r in graded["checks"]:
        tests.append({"name": r["name"], "score": r["points"], "max_score": r["max_points"],
                      "status": "passed" if r["exit_code"] == 0 else "failed",
                      "output": indented(f"{r['verdict']}: {r['message']}"),
                      "visibility": "after_due_date" if r.get("hidden") else "visible"})
    return {"score": graded["score"], "tests": tests, "output_format": "text",
            "output": f"{spec.name}: {graded['score']:g} / {spec.max_score:g}"}


def summary(spec: Assignment, graded: list[dict]) -> dict:
    scores = [g["score"] for g in graded if g.get("status") == "graded"]
    verdicts = collections.Counter(r["verdict"] for g in graded for r in g["checks"])
    failing = collections.Counter(f"{r['name']}: {r['quantity'] or r['verdict']}"
                                  for g in graded for r in g["checks"] if r["exit_code"] != 0)
    dist = collections.Counter(scores)
    return {"assignment": spec.name, "students": len(graded), "max_score": spec.max_score,
            "score_distribution": {f"{k:g}": dist[k] for k in sorted(dist)},
            "mean_score": sum(scores) / len(scores) if scores else None,
            "verdicts": dict(verdicts.most_common()),
            "most_common_failure": failing.most_common(1)[0][0] if failing else None,
            "failures": dict(failing.most_common(10)),
            "tampered": [g["student"] for g in graded if g.get("status") == "tampered"],
            "regraded": [g["student"] for g in graded if g.get("regraded")],
            "load_error_everywhere": [c.name for c in spec.checks] if len(graded) > 1 and all(
                r["verdict"] == "load_error" for g in graded for r in g["checks"]) else []}


def gradebook_csv(spec: Assignment, rows: list[dict]) -> str:
    """student, score, max_score, status, then one verdict per check of the spec (hidden ones too).
    The columns come from the spec, never from a student's row: a student whose grading failed has
    one row "grading", and sorted first it used to name every column of the class."""
    names = [n for c in spec.checks for n in [c.name] + ([c.name + " (hidden)"] if c.hidden else [])]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["student", "score", "max_score", "status"] + names)
    for g in rows:
        got = {r["name"]: r["verdict"] for r in g["checks"]}
        whole = got.get("grading")                    # the whole grading failed: every check
        w.writerow([csv_cell(g["student"]), f"{g['score']:g}", f"{spec.max_score:g}", g["status"]]
                   + [got.get(n, whole or "") for n in names])
    return buf.getvalue()


def grade(folder: str, spec_path: str, out_dir: str, jobs: int = 1, quiet: bool = False,
          secret_file: str | None = None, overwrite: bool = False, resume: bool = False) -> dict:
    """Grade every submission of `folder`; secret_file: the course's secret (secret.py), the same
    drawn values at every run for the same files. An out_dir already holding a gradebook.csv, a
    summary.json or a graded student's results.json / report.json (an earlier run's, perhaps
    edited since) is refused unless overwrite; one holding an interrupted run's finished
    submissions unless resume (grade only the others) or overwrite (start again). One run at a
    time per out_dir (out_folder.py)."""
    from .secret import read_secret

    spec = load_spec(spec_path)
    secret = None if secret_file is None else read_secret(secret_file)
    subs, refused = find_submissions(folder)
    ignored = ignored_entries(folder)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs: expected an integer >= 1, got {jobs!r}")
    a, b = os.path.realpath(out_dir), os.path.realpath(folder)
    if a == b or a.startswith(b + os.sep) or b.startswith(a + os.sep):
        raise ValueError(f"--out {out_dir!r}: it overlaps the submissions folder {folder!r} (the "
                         f"students' own files would be overwritten, or graded as a student next "
                         f"time); write the grades elsewhere")
    check_out_dir(out_dir)
    outf = OutFolder(out_dir, secret)
    outf.lock()
    try:
        return _grade_locked(folder, spec_path, spec, secret, subs, refused, ignored, outf, jobs,
                             quiet, overwrite, resume)
    finally:
        outf.unlock()


def _grade_locked(folder, spec_path, spec, secret, subs, refused, ignored, outf, jobs, quiet,
                  overwrite, resume) -> dict:
    from ..core.report import write_json, write_text_atomic

    out_dir = outf.out_dir
    earlier = outf.earlier({*subs, *refused})   # a student's files too, perhaps edited by hand
    if earlier and not overwrite:
        more = f" and {len(earlier) - 3} more" if len(earlier) > 3 else ""
        raise ValueError(f"--out {out_dir!r}: it already holds {', '.join(earlier[:3])}{more} of "
                         f"an earlier run (pass --overwrite to replace its files, or choose "
                         f"another folder)")
    if outf.partial_count() and not (resume or overwrite):
        raise ValueError(f"--out {out_dir!r}: it holds {outf.partial_count()} submission(s) "
                         f"graded by an interrupted run (pass --resume to grade only the others, "
                         f"--overwrite to grade everyone again, or choose another folder)")
    if not resume:
        outf.clear_partial()
    files: dict[str, dict] = {}
    for s, p in list(subs.items()):       # one student's odd files fail that student only
        try:
            files[s] = read_submission(p, spec.entry_file)
        except (SubmissionError, OSError) as exc:
            refused[s] = str(exc) if isinstance(exc, SubmissionError) else \
                f"the submission cannot be read ({exc.strerror})"
            del subs[s]
    t0 = time.perf_counter()
    graded: dict[str, dict] = {s: load_error_row(spec, s, why) for s, why in refused.items()}
    with open(spec_path, "rb") as fh:
        spec_bytes = fh.read()
    keys = {s: submission_key(spec_bytes, files[s], secret) for s in files}
    if resume:
        graded.update(done := outf.kept(keys))
        if not quiet and done:
            print(f"resuming: {len(done)} submission(s) graded by the interrupted run are kept; "
                  f"grading the other {len(subs) - len(done)}", file=sys.stderr)
    bar = Progress(len([s for s in subs if s not in graded]), quiet)
    import multiprocessing as mp

    run_files = RunFiles()

    def run(pool_jobs: int, students) -> None:
        context = RecordingContext(mp.get_context("spawn"))
        pool = ProcessPoolExecutor(max_workers=pool_jobs, mp_context=context, **run_files.pool_options())
        try:
            futs = {pool.submit(grade_copy, spec, s, files[s], os.path.abspath(folder), secret,
                                (run_files.temp_root, run_files.copy_prefix)): s
                    for s in students}
            for f in as_completed(futs):
                s = futs[f]
                try:
                    graded[s] = f.result()
                    if graded[s].get("intact", True):
                        outf.keep(keys[s], graded[s])      # kept for --resume after a stop
                except Exception as exc:  # noqa: BLE001 - the grader must answer for everyone
                    graded[s] = {"student": s, "path": s, "score": 0.0, "intact": True, "checks": [
                        {"name": "grading", "verdict": "oracle_error", "exit_code": 3,
                         "points": 0.0, "max_points": spec.max_score,
                         "message": f"grading failed: {exc!r}", "quantity": None,
                         "report": None}]}
                bar.step(s)
        except BaseException as exc:        # Ctrl-C, SIGTERM: end the workers, never wait on them
            stop_workers(pool, context.processes)
            if (stop := the_stop(exc)) is not exc:
                raise stop from None
            raise
        pool.shutdown(wait=True)

    try:                                    # every way out removes the run's copies (run_files.py)
        run(jobs, [s for s in subs if s not in graded])
        redo = [s for s in subs if not graded[s].get("intact", True)]
        if redo:                            # alone, one at a time: nobody else is running
            bar.more(len(redo))
            run(1, redo)
            for s in redo:
                graded[s]["regraded"] = True
    finally:
        run_files.remove()
        bar.close()                         # a stop's message then starts a line of its own
    for s in graded:
        graded[s]["status"] = "graded" if graded[s].get("intact", True) else "tampered"
        if graded[s]["status"] == "tampered":
            graded[s]["score"] = 0.0
    rows = [graded[s] for s in sorted(graded)]
    for g in rows:
        d = os.path.join(out_dir, g["student"])
        write_json(os.path.join(d, "results.json"), results_json(g, spec))
        write_json(os.path.join(d, "report.json"), {"student": g["student"], "status": g["status"],
                                                    "score": g["score"],
                                                    "max_score": spec.max_score,
                                                    "checks": g["checks"]})
    write_text_atomic(os.path.join(out_dir, "gradebook.csv"), gradebook_csv(spec, rows))
    summ = summary(spec, rows)
    summ["elapsed_s"] = round(time.perf_counter() - t0, 2)
    summ["jobs"] = jobs
    summ["ignored"] = ignored
    write_json(os.path.join(out_dir, "summary.json"), summ)
    outf.clear_partial()
    return {"summary": summ, "graded": rows}


def render_summary(s: dict) -> str:
    lines = [f"{s['assignment']}: {s['students']} submission(s), max score {s['max_score']:g}"]
    if s["mean_score"] is not None:
        lines.append(f"mean score {s['mean_score']:.3g}; distribution: "
                     + ", ".join(f"{k}: {v}" for k, v in s["score_distribution"].items()))
    lines.append("verdicts: " + ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()))
    if s["most_common_failure"]:
        lines.append(f"most common failure: {s['most_common_failure']}")
    if s["regraded"]:
        lines.append(f"changed by someone while graded, graded again alone: {', '.join(s['regraded'])}")
    if s["tampered"]:
        lines.append(f"changed even when graded alone (score 0): {', '.join(s['tampered'])}")
    if s.get("load_error_everywhere"):
        lines.append("no submission loaded: is the spec's entry_file or entry what the students "
                     "were asked to submit? (see a student's results.json)")
    if s.get("ignored"):
        lines.append(f"not graded, neither a folder nor a .py file: {', '.join(s['ignored'])}")
    return "\n".join(lines)
