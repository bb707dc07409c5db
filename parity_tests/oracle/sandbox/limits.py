"""What a submission's worker process gets: a scrubbed environment, resource limits, no secrets.

    env = child_env(scratch)           # PATH, locale, thread counts; HOME/TMPDIR = its scratch dir
    preexec = Limits(memory_mb=4096, cpu_s=900, file_mb=16).apply   # in the child, before exec

Limits (resource.setrlimit, soft = hard so the child cannot raise them again):

| limit         | default   | why |
| RLIMIT_DATA   | 4096 MiB  | heap + private mappings; RLIMIT_AS would count torch's huge reserved address space |
| RLIMIT_CPU    | 900 s     | CPU seconds of the whole worker (wall-clock limits per call are the parent's) |
| RLIMIT_FSIZE  | 16 MiB    | largest file it may write (SIGXFSZ beyond) |
| RLIMIT_CORE   | 0         | no core dumps in the scratch directory |

The number of processes is bounded by the process group the parent kills (start_new_session=True,
os.killpg at every end); RLIMIT_NPROC counts every process and thread of the user, so it cannot be
set safely on a shared account (threads of torch count too): docs/ORACLE.md says what a container adds.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT")
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS")


@dataclass
class Limits:
    memory_mb: int = 4096
    cpu_s: int = 900
    file_mb: int = 16
    deny_read: tuple = ()       # folders the worker may not read (other students' submissions)

    def apply(self) -> None:
        """preexec_fn: runs in the forked child before exec; must not allocate much or raise."""
        import resource

        def cap(which, value):
            try:
                soft, hard = resource.getrlimit(which)
                if hard != resource.RLIM_INFINITY:
                    value = min(value, hard)
                resource.setrlimit(which, (value, value))
            except (ValueError, OSError):
                pass

        cap(resource.RLIMIT_DATA, self.memory_mb << 20)
        cap(resource.RLIMIT_CPU, self.cpu_s)
        cap(resource.RLIMIT_FSIZE, self.file_mb << 20)
        cap(resource.RLIMIT_CORE, 0)


def child_env(scratch: str, threads: int | None = None) -> dict[str, str]:
    """A minimal environment: nothing of the oracle's (no seeds, no result paths, no tokens)."""
    env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    for k in THREAD_ENV:
        env[k] = str(threads) if threads else os.environ.get(k, "1")
    # nothing a plain shell lacks: -B already keeps bytecode out, hash seeds are random by default
    env.update(HOME=scratch, TMPDIR=scratch, MPLBACKEND="Agg")
    return env
