"""A Gradescope autograder bundle: `npformer-oracle gradescope-bundle assignment.toml -o autograder.zip`.

Gradescope runs every submission in a container of its own: `setup.sh` once when the image is
built, `run_autograder` per submission, with the submission in /autograder/submission/ and the
results expected in /autograder/results/results.json. The bundle holds:

    setup.sh             pip install of the pinned dependencies (numpy, hypothesis, torch CPU wheel)
    run_autograder       runs `python -m parity_tests.oracle gradescope-run` on the submission
    assignment.toml      the spec
    project/             this project's npformer + parity_tests (pinned: the exact files graded
                         with here), found through PYTHONPATH; nothing is downloaded for it
Gradescope unpacks the zip into /autograder/source/.

`run_autograder` honours AUTOGRADER_ROOT (default /autograder) and PYTHON (default python3), so
the bundle can be tried on a local /autograder-shaped folder before uploading (the tests do).
"""
from __future__ import annotations

import contextlib
import io
import os
import platform
import stat
import zipfile

from .spec import load_spec

PROJECT_DIRS = ("npformer", os.path.join("parity_tests", "harness"),
                os.path.join("parity_tests", "oracle"))
PROJECT_FILES = (os.path.join("parity_tests", "__init__.py"), "pyproject.toml")

SETUP = """#!/usr/bin/env bash
# Gradescope image setup: the oracle's pinned dependencies (the project itself is in source/project).
set -euo pipefail
apt-get update -y >/dev/null 2>&1 || true
apt-get install -y python3 python3-pip >/dev/null 2>&1 || true
python3 -m pip install --no-cache-dir {pins}
{torch}
"""

RUN = """#!/usr/bin/env bash
# Gradescope entry point: grade /autograder/submission against source/assignment.toml.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PY="${{PYTHON:-python3}}"
mkdir -p "$ROOT/results"
cd "$ROOT/source"
SECRET=()
# the course's secret, when the bundle was built with --secret-file: the same values at every regrade
if [ -f "$ROOT/source/secret" ]; then SECRET=(--secret-file "$ROOT/source/secret"); fi
PYTHONPATH="$ROOT/source/project" "$PY" -m parity_tests.oracle gradescope-run \\
    "$ROOT/source/assignment.toml" --submission "$ROOT/submission" \\
    --results "$ROOT/results/results.json" ${{SECRET[@]+"${{SECRET[@]}}"}}
status=$?
# a grading run that could not even write results still leaves a valid results.json
if [ ! -s "$ROOT/results/results.json" ]; then
  printf '{{"score": 0, "output": "the autograder failed (status %s); please report it"}}\\n' \\
    "$status" > "$ROOT/results/results.json"
fi
exit 0
"""


def _pins() -> tuple[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    pins = []
    for pkg in ("numpy", "hypothesis"):
        try:
            pins.append(f"{pkg}=={version(pkg)}")
        except PackageNotFoundError:
            pins.append(pkg)
    try:
        tv = version("torch").split("+")[0]
        torch = (f"python3 -m pip install --no-cache-dir torch=={tv} "
                 f"--index-url https://download.pytorch.org/whl/cpu")
    except PackageNotFoundError:
        torch = "# torch is not installed where the bundle was built: NumPy submissions only"
    return " ".join(pins), torch


def _project_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def build_bundle(spec_path: str, out_zip: str, force: bool = False,
                 secret_file: str | None = None) -> dict:
    """Write the bundle zip (atomically); returns what it holds. secret_file: the course's
    secret (secret.py), packed as `secret` (mode 0600) for run_autograder to pass on."""
    from ..core.report import check_output_path
    from .secret import read_secret

    spec = load_spec(spec_path, "spec")          # fails early on a bad spec
    secret = None if secret_file is None else read_secret(secret_file)
    out = check_output_path(out_zip, "-o")
    inputs = [spec_path] + [c.adapter_path for c in spec.checks if c.adapter_path] \
        + ([secret_file] if secret_file else [])
    for src in inputs:                    # --force replaces an old bundle, never an input
        if os.path.exists(out) and os.path.samefile(out, src):
            raise ValueError(f"-o {out_zip!r}: that is an input of the bundle ({src}); "
                             f"write the zip elsewhere")
    if os.path.exists(out) and not force:
        raise ValueError(f"-o {out_zip!r}: the file exists (pass --force to replace it)")
    root = _project_root()
    pins, torch = _pins()
    buf = io.BytesIO()
    names = []
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name: str, data: bytes, executable: bool = False, mode: int = 0o644) -> None:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = ((0o755 if executable else mode) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            names.append(name)

        add("setup.sh", SETUP.format(pins=pins, torch=torch).encode(), True)
        add("run_autograder", RUN.format().encode(), True)
        with open(spec_path, "rb") as f:
            add("assignment.toml", f.read())
        if secret is not None:
            add("secret", secret + b"\n", mode=0o600)
        for c in spec.checks:             # adapter files, where the spec says (relative to it)
            if c.adapter and os.path.islink(c.adapter_path):
                raise ValueError(f"{spec_path}: check {c.name!r} adapter {c.adapter!r} is a link; "
                                 f"links are not packed (copy the file itself)")
            if c.adapter and c.adapter.replace(os.sep, "/") not in names:
                with open(c.adapter_path, "rb") as f:
                    add(c.adapter.replace(os.sep, "/"), f.read())
        for d in PROJECT_DIRS:
            for dp, dns, fns in os.walk(os.path.join(root, d)):
                dns[:] = sorted(x for x in dns if x != "__pycache__")
                for fn in sorted(fns):
                    if fn.endswith((".py", ".md")):
                        p = os.path.join(dp, fn)
                        with open(p, "rb") as f:
                            add("project/" + os.path.relpath(p, root).replace(os.sep, "/"),
                                f.read())
        for fn in PROJECT_FILES:
            p = os.path.join(root, fn)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    add("project/" + fn.replace(os.sep, "/"), f.read())
    import tempfile  # a fresh name beside `out`, removed on any failure
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(out),
                               dir=os.path.dirname(os.path.abspath(out)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename:
            exc.filename = out            # a full disk names the bundle it could not write
        raise
    return {"zip": out, "files": len(names), "assignment": spec.name,
            "python": platform.python_version(), "pins": pins, "secret": secret is not None}


def run_one(spec_path: str, submission: str, results: str, secret_file: str | None = None) -> dict:
    """Grade one Gradescope submission folder and write results.json (inside the container). The
    submission is read as `grade` reads a student's (submissions.py: no link followed, no pipe or
    device opened, at most MAX_BYTES and MAX_ENTRIES) and graded on a private copy: a link to the
    instructor's solution or the project, where the container has no Landlock and no private view
    to stop the worker reading it, is refused (load_error) before anything runs."""
    import shutil

    from ..core.report import check_output_path, write_json
    from .batch import fingerprint, grade_one, load_error_row, own_paths, results_json
    from .secret import read_secret
    from .submissions import SubmissionError, materialize, read_submission

    spec = load_spec(spec_path, "spec")
    secret = None if secret_file is None else read_secret(secret_file)
    check_output_path(results, "--results")
    try:
        if not os.path.isdir(submission) or os.path.islink(submission):
            raise SubmissionError(f"the submission {os.path.basename(submission)!r} is not a "
                                  f"folder (a link is not followed)")
        files = read_submission(submission, spec.entry_file)
    except (SubmissionError, OSError) as exc:
        why = str(exc) if isinstance(exc, SubmissionError) else \
            f"the submission cannot be read ({exc.strerror})"
        graded = load_error_row(spec, "submission", why)
    else:
        entry = spec.entry_file
        if entry not in files:
            found = [f for f in files if f.endswith(".py") and os.sep not in f]
            entry = found[0] if len(found) == 1 else entry
        root = materialize(files)
        try:
            graded = grade_one(spec, "submission", os.path.join(root, entry), secret=secret,
                               digest=fingerprint(root))
            own_paths(graded, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    res = results_json(graded, spec)
    write_json(results, res)
    return res
