"""The trusted prelude: the first Python the sandboxed interpreter runs, before the code."""

from __future__ import annotations

import itertools
import os

from wikigym.sandbox.limits import SandboxLimits, cpu_limit

RUN_NUMBERS = itertools.count()


# The trusted prelude: runs before the user code, inside the sandbox. It forks: the parent
# stays behind as a supervisor that waits for the child (the user code) with wait4 and writes
# "<wait status> <CPU seconds>" to the status pipe, the only way to tell a kill by RLIMIT_CPU
# from any other SIGKILL (bwrap reports an exit status, not the CPU time); then it exits with
# the child's status (128+N for signal N). Run as root, the supervisor keeps its uid, so the
# code (a fresh uid) cannot signal or trace it; otherwise it makes itself non-dumpable.
# argv: code_path seed uid cpu_s memory_bytes nproc fsize_bytes site_dir status_fd run_tag
_PRELUDE = r"""
import os, sys, resource, random
code_path, seed, uid, cpu, mem, nproc, fsize, site, status_fd = sys.argv[1:10]
seed, uid, cpu, mem, nproc, fsize = int(seed), int(uid), int(cpu), int(mem), int(nproc), int(fsize)
status_fd = int(status_fd)
if uid < 0:  # same uid as the code: /proc/<pid>/mem and ptrace must refuse the supervisor
    import ctypes
    prctl = ctypes.CDLL(None).prctl
    prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, before the fork: no window for the code
child = os.fork()
if child:
    _, status, usage = os.wait4(child, 0)
    os.write(status_fd, b"%d %.3f\n" % (status, usage.ru_utime + usage.ru_stime))
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)
os.close(status_fd)
if uid < 0:
    prctl(4, 1, 0, 0, 0)  # the code's own process stays an ordinary, dumpable one
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if uid >= 0:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
with open(code_path, encoding="utf-8") as f:
    source = f.read()
random.seed(seed)
if site:
    sys.path.append(site)
    class _SeedNumpy:
        def find_spec(self, name, path=None, target=None, _seed=seed):
            if name != "numpy.random":
                return None
            sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            run = spec.loader.exec_module
            def exec_module(module):
                run(module)
                module.seed(_seed)
            spec.loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, _SeedNumpy())
sys.argv = [code_path]
exec(compile(source, code_path, "exec"), {"__name__": "__main__", "__file__": code_path,
     "__builtins__": __builtins__})
"""


def prelude_args(
    limits: SandboxLimits,
    code_path: str,
    seed: int,
    uid: int,
    nproc: int,
    memory_mb: int,
    site: str,
    status_fd: int,
) -> list[str]:
    """The interpreter arguments that run the prelude, then the code at ``code_path``."""
    lim = limits
    tag = f"wgsb-{os.getpid()}-{next(RUN_NUMBERS)}"
    return [
        "-S",  # no site: site-packages are not on sys.path
        "-s",
        "-B",
        "-c",
        _PRELUDE,
        code_path,
        str(int(seed)),
        str(uid),
        str(cpu_limit(lim)),
        str(memory_mb * 1024 * 1024),
        str(nproc),
        str(lim.max_file_bytes),
        site,
        str(status_fd),
        tag,
    ]
