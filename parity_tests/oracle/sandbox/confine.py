"""Kernel confinement of a worker, where the kernel offers it (Linux; every step has a fallback).

Parent side, before the worker starts:

    prefix, why = namespace_prefix()   # ["unshare", "--user", "--pid", "--net", "--fork",
                                       #  "--kill-child", "--mount-proc"] or ([], the reason)

  A user + PID + network namespace per worker: the worker's init (child.main, PID 1 there) dies
  with the process group the parent kills, and the kernel then kills every process left in the
  namespace - a grandchild that called setsid() and double-forked included. The network namespace
  has no interface but a down loopback: no connection of any kind leaves it. The per-namespace
  process count also makes RLIMIT_NPROC count this worker's processes only (cap_processes; root is
  exempt from it, hence PidsCgroup below), and the mount namespace lets the worker put a size-capped
  tmpfs over its scratch folder (private_scratch).

Worker side, before a line of the submission runs (child.py):

    info = landlock(write_dirs=[scratch])      # writes only there (and /dev/null); no TCP
                                               # bind/connect; no signals or abstract unix sockets
                                               # outside the worker; ptrace (/proc/PID/mem,
                                               # environ, cwd) of other processes refused
    landlock(deny_read=[".../npformer"])       # second layer: the reference's source unreadable

Landlock (kernel >= 5.13, unprivileged) cannot be undone by the process or its children. The
returned dict says what was applied ({"landlock": ABI or 0, "reason": ..., ...}); the parent puts
it in every report (policy.confinement).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446     # the same number on every architecture
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_WRITES_V1 = sum(1 << i for i in range(4, 13))           # remove dir/file, make char/dir/reg/...
REFER, TRUNCATE = 1 << 13, 1 << 14                       # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1           # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1       # ABI 6

_NS_CACHE: list = []


def namespace_prefix() -> tuple[list[str], str]:
    """The command prefix that puts a worker in its own user, PID and network namespaces, if this
    machine allows it to an unprivileged user (probed once per process)."""
    if _NS_CACHE:
        return _NS_CACHE[0]
    exe = shutil.which("unshare")
    prefix = [exe, "--user", "--map-root-user", "--mount", "--pid", "--net", "--fork",
              "--kill-child", "--mount-proc"] if exe else []
    why = "" if exe else "the 'unshare' command (util-linux) is not installed"
    if os.environ.get("NPFORMER_ORACLE_NO_NAMESPACES") == "1":    # tests of the fallback
        prefix, why = [], "turned off (NPFORMER_ORACLE_NO_NAMESPACES=1)"
    if prefix:
        try:
            p = subprocess.run(prefix + ["true"], capture_output=True, timeout=20)
            if p.returncode != 0:
                why = ("unprivileged user namespaces are not allowed here: "
                       + p.stderr.decode(errors="replace").strip()[:200])
        except (OSError, subprocess.SubprocessError) as exc:
            why = f"'unshare' failed: {exc}"[:200]
    _NS_CACHE.append((prefix if not why else [], why))
    return _NS_CACHE[0]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The Landlock ABI version the kernel offers (0: none)."""
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        v = libc.syscall(ctypes.c_long(_SYS_CREATE), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
        return max(int(v), 0)
    except (OSError, AttributeError):
        return 0


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _readable_siblings(deny: list[str]) -> list[str]:
    """Every path that stays readable when the folders in `deny` must not be: the entries of each
    ancestor of a denied folder, except the ones on the way to a denied folder."""
    blocked = set()
    for d in deny:
        p = d
        while True:
            blocked.add(p)
            if p == os.sep:
                break
            p = os.path.dirname(p)
    out = []
    for anc in sorted(blocked):
        if anc in deny or not os.path.isdir(anc):
            continue
        try:
            names = os.listdir(anc)
        except OSError:
            continue
        for n in names:
            full = os.path.join(anc, n)
            real = os.path.realpath(full)
            # a link into (or above) a denied folder would reopen it: left out
            if full in blocked or any(real == d or real.startswith(d + os.sep)
                                      or d.startswith(real.rstrip(os.sep) + os.sep) for d in deny):
                continue
            out.append(full)
    return out


def landlock(write_dirs=(), deny_read=(), network=True, scope=True, read_only=()) -> dict:
    """Confine this process (and everything it starts) for good. write_dirs: the only folders it may
    write in (plus /dev/null); deny_read: folders it may not read; read_only: when given, the only
    paths it may read at all (an allow-list, where no private view could be built). Returns what
    was applied."""
    version = abi()
    if version <= 0:
        return {"landlock": 0, "reason": "Landlock is not available in this kernel"}
    if read_only:
        return _read_allow_list(version, [p for p in read_only if os.path.lexists(p)])
    deny_read = sorted({os.path.realpath(d) for d in deny_read if os.path.isdir(d)})
    writes = bool(write_dirs)
    fs = 0
    if writes:
        fs |= WRITE_FILE | _WRITES_V1 | (REFER if version >= 2 else 0) | \
            (TRUNCATE if version >= 3 else 0)
    if deny_read:
        fs |= READ_FILE | READ_DIR
    net = NET_BIND_TCP | NET_CONNECT_TCP if network and version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if scope and version >= 6 else 0
    if not (fs or net or scoped):
        return {"landlock": version, "reason": "nothing to restrict"}
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 8 * (3 if version >= 6 else 2 if version >= 4 else 1)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    rs = libc.syscall(ctypes.c_long(_SYS_CREATE), ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if rs < 0:
        return {"landlock": 0, "reason": f"landlock_create_ruleset failed: "
                f"{os.strerror(ctypes.get_errno())}"}
    try:
        rules: list[tuple[str, int]] = []
        file_rights = fs & (WRITE_FILE | READ_FILE | TRUNCATE)
        if writes:
            rules += [(d, fs) for d in write_dirs]
            rules.append((os.devnull, fs & (WRITE_FILE | TRUNCATE | READ_FILE)))
        if deny_read:
            rules += [(p, READ_FILE | READ_DIR) for p in _readable_siblings(deny_read)]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= file_rights
                if rights:
                    rule = _PathBeneath(rights, fd)
                    libc.syscall(ctypes.c_long(_SYS_ADD), ctypes.c_int(rs),
                                 ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                 ctypes.c_uint32(0))
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
                libc.syscall(ctypes.c_long(_SYS_RESTRICT), ctypes.c_int(rs), ctypes.c_uint32(0)) != 0:
            return {"landlock": 0, "reason": f"landlock_restrict_self failed: "
                    f"{os.strerror(ctypes.get_errno())}"}
    finally:
        os.close(rs)
    return {"landlock": version, "writes_only_in": list(write_dirs) if writes else None,
            "unreadable": deny_read, "network_tcp_denied": bool(net),
            "signals_scoped": bool(scoped)}


def _read_allow_list(version: int, paths: list[str]) -> dict:
    """A Landlock layer of its own: reading only beneath `paths`."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr = (ctypes.c_uint64 * 3)(READ_FILE | READ_DIR, 0, 0)
    size = 8 * (3 if version >= 6 else 2 if version >= 4 else 1)
    rs = libc.syscall(ctypes.c_long(_SYS_CREATE), ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if rs < 0:
        return {"read_allow_list": False}
    try:
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rights = READ_FILE | READ_DIR if os.path.isdir(path) else READ_FILE
                rule = _PathBeneath(rights, fd)
                libc.syscall(ctypes.c_long(_SYS_ADD), ctypes.c_int(rs),
                             ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                             ctypes.c_uint32(0))
            finally:
                os.close(fd)
        ok = libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and \
            libc.syscall(ctypes.c_long(_SYS_RESTRICT), ctypes.c_int(rs), ctypes.c_uint32(0)) == 0
    finally:
        os.close(rs)
    return {"read_allow_list": bool(ok)}


def cap_processes(n: int) -> bool:
    """RLIMIT_NPROC = n for this process and its children - only inside a user namespace of its
    own, where the kernel counts this worker's processes alone (outside one it counts every process
    of the user, so another submission's fork bomb could starve this one: not set there)."""
    import resource
    if not own_user_namespace() or _outer_uid() == 0:      # root is never bound by it
        return False
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        return True
    except (OSError, ValueError):
        return False


def _outer_uid() -> int | None:
    try:
        with open("/proc/self/uid_map") as f:
            cols = f.read().split()
        return int(cols[1]) if len(cols) >= 3 else None
    except (OSError, ValueError):
        return None


def private_scratch(path: str, mb: int) -> bool:
    """Inside the worker's own mount namespace: a tmpfs of `mb` MiB over its scratch folder, so
    filling it fills neither the disk nor anyone else's space (RLIMIT_FSIZE bounds one file only)."""
    if not own_user_namespace():
        return False
    libc = _libc()
    ms_nosuid, ms_nodev = 2, 4
    rc = libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", ctypes.c_ulong(ms_nosuid | ms_nodev),
                    f"size={int(mb)}m,mode=0700".encode())
    if rc != 0:
        return False
    os.chdir(path)                                   # the tmpfs, not the folder under it
    return True


def own_user_namespace() -> bool:
    """True inside a user namespace that is not the machine's initial one."""
    try:
        with open("/proc/self/uid_map") as f:
            return f.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


class PidsCgroup:
    """A `pids` cgroup of its own for one worker, where this process may make one (root, or a
    delegated cgroup): pids.max caps its processes and threads (RLIMIT_NPROC does not bind root),
    and kill() finds every member, however it left the process group.

        g = PidsCgroup.make(256)      # None where no writable pids hierarchy exists
        Popen(..., preexec_fn=lambda: (g.enter(), ...))
        g.kill(); g.remove()
    """

    _seq = 0

    def __init__(self, path: str):
        self.path = path

    @classmethod
    def make(cls, max_pids: int) -> "PidsCgroup | None":
        return cls._make("pids", {"pids.max": str(max_pids)})

    @classmethod
    def _make(cls, controller: str, settings: dict):
        base = _hierarchy(controller)
        if base is None:
            return None
        PidsCgroup._seq += 1
        path = os.path.join(base, f"npformer-oracle-{os.getpid()}-{PidsCgroup._seq}")
        try:
            os.mkdir(path)
            for name, value in settings.items():
                written = False
                for n in name.split("|"):          # v2 name | v1 name
                    if os.path.exists(os.path.join(path, n)):
                        with open(os.path.join(path, n), "w") as f:
                            f.write(value)
                        written = True
                        break
                if not written:
                    raise OSError(f"no {name} in {path}")
        except OSError:
            try:
                os.rmdir(path)
            except OSError:
                pass
            return None
        return cls(path)

    def enter(self) -> None:
        """In the forked child, before exec: join the group (errors are ignored: no cap then)."""
        self.add(os.getpid())

    def add(self, pid: int) -> None:
        """Move process `pid` (and its threads) into the group; errors ignored, as in enter()."""
        try:
            fd = os.open(os.path.join(self.path, "cgroup.procs"), os.O_WRONLY)
            try:
                os.write(fd, str(pid).encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    def members(self) -> list[int]:
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            return []

    def kill(self, rounds: int = 50) -> None:
        import signal
        import time
        for _ in range(rounds):
            pids = self.members()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        import time
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


class MemoryCgroup(PidsCgroup):
    """A `memory` cgroup of its own for one worker: `--memory-mb` for all its processes together
    (RLIMIT_DATA bounds each process alone; 256 of them could take the machine). Its members are
    killed through the pids group (or the namespace); remove() after."""

    @classmethod
    def make(cls, memory_mb: int) -> "MemoryCgroup | None":
        return cls._make("memory", {"memory.max|memory.limit_in_bytes": str(int(memory_mb) << 20)})


def _hierarchy(controller: str) -> str | None:
    """The folder of this process's own cgroup in a writable hierarchy with `controller`."""
    try:
        with open("/proc/self/cgroup") as f:
            own = [ln.rstrip("\n").split(":", 2) for ln in f if ln.count(":") >= 2]
        with open("/proc/self/mounts") as f:
            mounts = [ln.split()[:4] for ln in f]
    except OSError:
        return None
    for _dev, mnt, fstype, opts in mounts:
        if fstype == "cgroup" and controller in opts.split(","):
            rel = next((p for _, c, p in own if controller in c.split(",")), None)
        elif fstype == "cgroup2":
            rel = next((p for h, c, p in own if h == "0" and c == ""), None)
            try:
                with open(os.path.join(mnt, (rel or "/").lstrip("/"), "cgroup.subtree_control")) as f:
                    if controller not in f.read().split():
                        continue
            except OSError:
                continue
        else:
            continue
        if rel is None:
            continue
        path = os.path.join(mnt, rel.lstrip("/"))
        if os.access(path, os.W_OK):
            return path
    return None
