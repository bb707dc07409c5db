"""The worker process of one submission: `python -I -B -c BOOT ROOT` (parent.py), nothing else.

At start it moves the protocol onto private file descriptors and points fds 0/1/2 at /dev/null
(stdin) and the parent's log (stdout/stderr), so nothing the submission prints can break a message.
Then it answers requests until the pipe closes:

    {"op": "prepare", "component", "options", "spec", "search_path", "forbidden"}
        -> {"status": "ok", "caps", "notes", "kind", "framework"} | {"status": "failed", "verdict", ...}
    {"op": "run", "case", "runs"} + the case's arrays
        -> {"op": "tick"} after each stage (construct, each call), then
           {"status": "ok", "mapping", "absent", "dtypes", "missing", ...} + "value:KEY" /
           "againN:KEY" float64 arrays | {"status": "failed", ...}
    every reply also carries "imports" (top-level modules new since the harness loaded) and
    "violations" (forbidden imports the audit hook refused).

Global RNG states are reseeded unpredictably before every call (session._fresh_rng). This process
decides nothing: the parent validates every field and array of every reply.
"""
from __future__ import annotations

import os
import sys


def main() -> None:
    proto_in, proto_out = os.dup(0), os.dup(1)          # non-inheritable copies
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)                                        # prints go to the parent's log
    os.close(null)

    from . import policy
    from .protocol import Reader, encode, write_all
    from .session import Session, _jsonable

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))      # .../parity_tests/oracle
    root = os.path.dirname(os.path.dirname(here))
    baseline = set(sys.modules)
    reader = Reader(proto_in)
    session = None

    def reply(header: dict, arrays: dict | None = None) -> None:
        new = sorted({m.split(".", 1)[0] for m in set(sys.modules) - baseline
                      if not m.startswith("_oracle_candidate_")} - {"__main__"})
        header = dict(header, imports=new[:200], violations=list(policy.STATE["violations"])[:50])
        write_all(proto_out, encode(_jsonable(header), arrays))

    while True:
        try:
            header, arrays = reader.read()
        except Exception:  # noqa: BLE001 - the parent closed the pipe (or sent garbage): stop
            os._exit(0)
        op = header.get("op")
        if op == "prepare":
            for p in header.get("search_path", []):
                if isinstance(p, str) and p not in sys.path:
                    sys.path.append(p)
            policy.install(header.get("forbidden", ()),
                           harness_dirs=(here + os.sep,),
                           package_dirs=tuple(os.path.join(root, d) + os.sep for d in
                                              ("npformer", "torchformer",
                                               os.path.join("parity_tests", "harness"))))
            baseline = set(sys.modules)
            session = Session(header["component"], header["options"], spec=header["spec"])
            reply(session.prepare())
        elif op == "run" and session is not None and session.adapter is not None:
            h, out = session.run(header, arrays, runs=int(header.get("runs", 2)),
                                 tick=lambda: write_all(proto_out, encode({"op": "tick"})))
            reply(h, out)
        else:
            reply({"status": "failed", "verdict": "oracle_error",
                   "message": f"worker: unexpected request {str(op)[:40]!r}"})
            os._exit(0)


if __name__ == "__main__":
    main()
