"""Workers forked by the fork server (sandbox/zygote.py) are as separate and as confined as fresh
ones: no state of one submission reaches the next, each gets fresh RNG states, its own namespaces
and cgroups; it is killed with everything it started; the server dying, or not starting, costs
only a fresh interpreter. The submissions here report what they saw by raising it (the message
comes back in the verdict), so nothing but the oracle's own channel is used.
"""
from __future__ import annotations

import os
import re
import signal
import time

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.backend import SandboxBackend
from parity_tests.oracle.core.options import Options
from parity_tests.oracle.sandbox import forkserver, parent
from parity_tests.test_oracle_sandbox import groups_gone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = '''
import builtins, os, random, sys
import numpy as np
{extra}
SEEN = (getattr(builtins, "_probe_mark", None), getattr(np, "_probe_mark", None))
SERVERS = "socket" in sys.modules        # the fork server's own import, never a fresh worker's
builtins._probe_mark = np._probe_mark = "set by an earlier submission"
NS = ",".join(os.readlink("/proc/self/ns/" + n) for n in ("user", "pid", "net", "mnt"))
with open("/proc/self/cgroup") as f:
    CG = ",".join(sorted(ln.strip().split(":", 2)[2] for ln in f
                         if re.search(":(pids|memory):", ln)))

def report():
    return (f"SEEN={{SEEN}} SOCKET={{SERVERS}} NS={{NS}} CG={{CG}} RNG={{random.random()}},"
            f"{{np.random.random()}}{{TORCH}} END")

def attention(Q, K, V, mask=None):
    raise RuntimeError(report())
{at_import}
'''
TORCH = '''
import re
import torch
torch._probe_mark = "set"
TORCH = f",{torch.rand(1).item()}"
'''


def probe(tmp_path, torch: bool = False, name: str = "probe", at_import: bool = False) -> str:
    """A submission raising what it saw, when called (or, `at_import`, when loaded)."""
    path = tmp_path / f"{name}.py"
    path.write_text(PROBE.format(extra=TORCH if torch else "import re\nTORCH = ''",
                                 at_import="raise RuntimeError(report())" if at_import else ""))
    return f"{path}:attention"


def seen(res) -> dict:
    """What the probe raised: its fields by name."""
    assert res.verdict in ("raised", "load_error"), (res.verdict, res.message)
    m = re.search(r"SEEN=(.*) SOCKET=(.*) NS=(.*) CG=(.*) RNG=(.*) END", res.message)
    assert m, res.message
    return dict(zip(("seen", "socket", "ns", "cg", "rng"), m.groups()))


@pytest.fixture()
def fresh_servers(monkeypatch):
    """This test's own fork servers, stopped at its end."""
    monkeypatch.setattr(forkserver, "_SERVERS", {})
    monkeypatch.setattr(forkserver, "_FAILED", {})
    yield forkserver._SERVERS
    forkserver.shutdown()


@pytest.mark.parametrize("torch", [False, True], ids=["numpy", "torch"])
def test_forked_workers_share_no_state_and_get_fresh_rng(tmp_path, fresh_servers, torch):
    spec = probe(tmp_path, torch)
    a, b = (check("sdpa", spec, examples=1) for _ in range(2))
    for res in (a, b):
        conf = res.policy["confinement"]
        assert conf.get("fork_server") == ("torch" if torch else "numpy"), conf
    sa, sb = seen(a), seen(b)
    assert sa["seen"] == sb["seen"] == "(None, None)"      # the first one's marks are not in the second
    assert sa["rng"] != sb["rng"]                           # random, numpy and torch: all fresh
    assert len(sa["rng"].split(",")) == (3 if torch else 2)
    if not torch:                       # the server's own modules are not the worker's
        assert sa["socket"] == "False", sa
    # torch preloaded by the server still counts as the submission's import, and only there
    assert ("torch" in a.policy["imports_seen"]) == torch, a.policy["imports_seen"]


def test_two_live_forked_workers_have_their_own_namespaces_and_cgroups(tmp_path, fresh_servers):
    """Compared while both live (a namespace's number is reused once it is gone)."""
    spec = probe(tmp_path, at_import=True)
    backends = [SandboxBackend(spec, get("sdpa"), Options()) for _ in range(2)]
    try:
        got = [be.prepare() for be in backends]
        for be in backends:
            assert be.worker.alive and be.worker.confinement.get("fork_server") == "numpy", \
                be.worker.confinement
        sa, sb = (seen(o) for o in got)
        conf = backends[0].worker.confinement
    finally:
        for be in backends:
            be.close()
    if conf.get("namespaces"):
        own = [os.readlink(f"/proc/self/ns/{n}") for n in ("user", "pid", "net", "mnt")]
        mine, theirs = sa["ns"].split(","), sb["ns"].split(",")
        assert all(len({x, y, z}) == 3 for x, y, z in zip(mine, theirs, own)), (mine, theirs, own)
    if conf.get("pids_max"):
        assert "npformer-oracle-" in sa["cg"] and sa["cg"] != sb["cg"], (sa["cg"], sb["cg"])


def test_a_forked_worker_is_killed_with_everything_it_started(tmp_path, fresh_servers):
    before = len(parent.STARTED)
    res = check("sdpa", os.path.join(ROOT, "parity_tests", "oracle_hostile", "fork_atexit.py")
                + ":attention", examples=2)
    assert res.policy["confinement"].get("fork_server") == "numpy", res.policy["confinement"]
    assert res.verdict == "mismatch", res.message
    assert not parent.LIVE
    assert groups_gone(parent.STARTED[before:]) == []


def test_a_dead_fork_server_is_replaced_and_its_worker_still_ends_cleanly(tmp_path, fresh_servers):
    w = parent.Worker()
    w.start()
    (server,) = fresh_servers.values()
    os.killpg(server.proc.pid, signal.SIGKILL)             # the server dies under a live worker
    server.proc.wait()
    h, _ = w.reader.read(time.monotonic() + 60)            # which was forked and still answers
    assert h["op"] == "hello"
    pid = w.proc.pid
    w.close()
    assert groups_gone([pid]) == []
    res = check("sdpa", probe(tmp_path), examples=1)        # the next check: a new server
    assert res.policy["confinement"].get("fork_server") == "numpy", res.policy["confinement"]
    assert [s.proc.pid for s in fresh_servers.values()] != [server.proc.pid]
    seen(res)


def test_a_worker_whose_server_died_is_reported_without_its_status(fresh_servers):
    w = parent.Worker()
    w.start()
    (server,) = fresh_servers.values()
    os.killpg(server.proc.pid, signal.SIGKILL)
    os.killpg(w.proc.pid, signal.SIGKILL)
    assert w.proc.wait(10) is not None and w.proc.lost
    assert "fork server" in w._death()
    w.close()


def test_without_a_fork_server_a_fresh_interpreter_is_started_and_says_why(tmp_path, monkeypatch,
                                                                        fresh_servers):
    monkeypatch.setattr(forkserver, "ZBOOT", "raise SystemExit('no preload here')")
    res = check("sdpa", probe(tmp_path), examples=1)
    conf = res.policy["confinement"]
    assert conf["fork_server"] is False and "did not start" in conf["fork_server_reason"], conf
    assert seen(res)["seen"] == "(None, None)"
    monkeypatch.setenv("NPFORMER_ORACLE_NO_FORK_SERVER", "1")
    conf = check("sdpa", probe(tmp_path), examples=1).policy["confinement"]
    assert conf["fork_server"] is False and "turned off" in conf["fork_server_reason"], conf


def test_only_a_submission_that_imports_torch_gets_the_torch_server(tmp_path):
    (tmp_path / "t.py").write_text("import numpy\nimport torch.nn as nn\n")
    (tmp_path / "n.py").write_text("import numpy\n# import torch\nx = 'import torch'\n")
    (tmp_path / "a.py").write_text("from torch import nn\n")
    ask = {"op": "prepare", "search_path": [], "import_path": [], "forbidden": []}
    assert forkserver.wants_torch({**ask, "spec": f"{tmp_path}/t.py:f"})
    assert not forkserver.wants_torch({**ask, "spec": f"{tmp_path}/n.py:f"})
    assert forkserver.wants_torch({**ask, "spec": f"{tmp_path}/n.py:f",
                                   "options": {"adapter_path": str(tmp_path / "a.py")}})
    assert not forkserver.wants_torch({**ask, "spec": f"{tmp_path}/t.py:f", "forbidden": ["torch"]})
    assert not forkserver.wants_torch({**ask, "op": "run", "spec": f"{tmp_path}/t.py:f"})
    assert forkserver.wants_torch({**ask, "spec": "torchformer.layers.attention:MultiHeadAttention"})


def _proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of process `pid`, None when the number is free."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def test_an_ended_worker_keeps_its_number_until_the_oracle_has_killed_its_group(fresh_servers):
    """The oracle kills a worker's process group by number (`killpg`) after the worker ended: the
    server says how it ended but reaps it only once the oracle has let go (closed its status
    socket), so no other process group (another student's worker) can have taken the number."""
    w = parent.Worker()
    w.start()
    assert w.confinement.get("fork_server") == "numpy", w.confinement
    (server,) = fresh_servers.values()
    pid = w.proc.pid
    os.killpg(pid, signal.SIGKILL)
    end = time.monotonic() + 30
    while w.proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert w.proc.returncode == -signal.SIGKILL
    time.sleep(0.3)                                     # time for the server to reap, if it would
    assert _proc_state(pid) == ("Z", server.proc.pid)   # ended, said, and its number still held
    assert "SIGKILL" in w._death()                      # how it died, asked as a crash asks it
    time.sleep(0.3)
    assert _proc_state(pid) == ("Z", server.proc.pid)
    w.close()
    end = time.monotonic() + 10
    while _proc_state(pid) == ("Z", server.proc.pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert _proc_state(pid) != ("Z", server.proc.pid)   # let go: reaped


def hostile(name: str) -> str:
    return os.path.join(ROOT, "parity_tests", "oracle_hostile", f"{name}.py") + ":attention"


def test_a_submission_cannot_stop_the_fork_server_for_the_next_one(fresh_servers):
    """stops_fork_server sends SIGSTOP to its parent and to every process naming the server."""
    res = check("sdpa", hostile("stops_fork_server"), examples=1)
    conf = res.policy["confinement"]
    assert conf.get("fork_server") == "numpy", conf
    if not (conf.get("signals_scoped") or conf.get("namespaces")):
        pytest.skip(f"this machine offers no signal confinement: {conf}")
    (server,) = fresh_servers.values()
    assert _proc_state(server.proc.pid)[0] not in "Tt", _proc_state(server.proc.pid)
    start = time.monotonic()
    nxt = check("sdpa", hostile("right"), examples=1)
    assert nxt.policy["confinement"].get("fork_server") == "numpy", nxt.policy["confinement"]
    assert nxt.verdict == "match", nxt.message
    assert time.monotonic() - start < forkserver.FORK_S        # forked at once, no fallback wait
    assert [s.proc.pid for s in fresh_servers.values()] == [server.proc.pid]


def test_a_forked_worker_reaches_none_of_the_servers_sockets(fresh_servers):
    """forges_fork_request hunts sockets in the memory it inherited and on every fd and raises
    what it could write to (a forged fork request, exit status, "ok"); it finds none."""
    check("sdpa", hostile("right"), examples=1)       # the server has forked before: old sockets
    res = check("sdpa", hostile("forges_fork_request"), examples=1)
    assert res.policy["confinement"].get("fork_server") == "numpy", res.policy["confinement"]
    assert res.verdict == "match", res.message


def test_a_forked_worker_keeps_nothing_of_the_servers_other_workers(tmp_path, fresh_servers):
    """Worker A has ended and is held for the oracle; worker B, forked meanwhile, finds no trace of
    A in the server's bookkeeping it inherited (garbage collector)."""
    a = parent.Worker()
    a.start()
    os.killpg(a.proc.pid, signal.SIGKILL)
    end = time.monotonic() + 30
    while a.proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    (tmp_path / "books.py").write_text(
        "import gc\n"
        "SEEN = sorted(str(p) for o in gc.get_objects() if type(o).__name__ == '_Children'\n"
        "              for p in [*o, *o.ended, *o.released])\n"
        "raise RuntimeError('SEEN=' + ','.join(SEEN) + ' END')\n")
    be = SandboxBackend(f"{tmp_path}/books.py:attention", get("sdpa"), Options())
    try:
        got = be.prepare()
        assert be.worker.confinement.get("fork_server") == "numpy", be.worker.confinement
    finally:
        be.close()
        a.close()
    m = re.search(r"SEEN=(.*) END", got.message)
    assert m and m.group(1) == "", got.message
