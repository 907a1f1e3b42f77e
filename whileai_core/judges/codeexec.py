"""Run a candidate program against hidden tests, contained.

The candidate (the reply's last ```python block, else the whole reply) and the tests (the
row's gold: `privileged.reference`, or `privileged.tests`, or `--field`) run in a fresh
`python -I` in a new session, in a temporary working directory, under rlimits: CPU seconds,
address space, file size, open files and processes. A small bootstrap installs an audit
hook before any candidate code runs; it ends the process at once (no `except` can swallow
it) on an `open` outside the temp dir and the interpreter's own library, any socket, any
fork/exec/spawn, ctypes or a change to files outside the temp dir. RLIMIT_NPROC does
nothing for root, so the process group is killed at the wall deadline whatever it spawned.

The tests file is deleted before the candidate runs, but the tests execute in the
candidate's process: code that walks interpreter frames can still find what they assert.
Hidden tests stop accidents and casual peeking, not a policy trained to search frames.

Path calls are checked where they will resolve (a dir_fd is followed, a relative os.open
may only read). A pass is a per-run token the bootstrap prints after the tests ran, so a
candidate that exits 0 early scores 0. On Linux x86-64 a seccomp filter also refuses the
syscalls no audit event covers on every road (pidfd signals, kill, ptrace, sockets,
setrlimit); elsewhere only the audit hook stands.

A contained violation, a crash, a failing test, an exhausted limit: reward 0 with the
reason. Passing tests: reward 1. The judge itself failing to start the sandbox is an error.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..row import reply_text
from .contract import Judge
from .verifiers import NoGold, gold_of

_FENCE = re.compile(r"```(?:python|py)?[^\n]*\n(.*?)```", re.DOTALL)
_VIOLATION = 86  # exit status the audit hook uses, so a violation is told from a crash

# Runs in the sandboxed interpreter. argv: workdir; stdin: the pass token. The candidate,
# the tests and the token are read before the hook is installed and live only in `_run`'s
# frame (not in `__main__`, where `sys.modules` would hand them to the candidate). A pass
# is the token on stdout after the tests ran: exit status 0 alone is not one, or a
# candidate ending in `sys.exit(0)` / `os._exit(0)`, or emptying `builtins.exec`, passes.
_BOOTSTRAP = r"""
import os, sys
def _run(_exec=exec, _compile=compile, _write=os.write, _exit=os._exit):
    token = os.read(0, 64).strip()
    os.close(0)
    work = os.path.realpath(sys.argv[1])
    src = open(os.path.join(work, "candidate.py"), encoding="utf-8").read()
    tests = open(os.path.join(work, "tests.py"), encoding="utf-8").read()
    os.remove(os.path.join(work, "tests.py"))  # the candidate must not read its answer key
    sys.addaudithook(_make_hook(work))
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    _exec(_compile(src, "candidate.py", "exec"), namespace)
    _exec(_compile(tests, "tests.py", "exec"), namespace)
    _write(1, b"\nWHILEAI_PASSED " + token + b"\n")
    _exit(0)
def _make_hook(work):
    import posixpath
    realpath, fsdecode, isabs, join, dirname = (os.path.realpath, os.fsdecode,
        posixpath.isabs, posixpath.join, posixpath.dirname)
    allowed_read = tuple(
        realpath(p) for p in sys.path if p and isabs(p)
    ) + (realpath(sys.prefix), realpath(sys.base_prefix))
    _PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                    "os.truncate", "os.utime", "os.link", "os.symlink", "shutil.rmtree",
                    "os.chdir", "shutil.copyfile", "os.unlink", "os.setxattr",
                    "os.removexattr", "os.mkfifo", "os.mknod"}
    # For each path an event names (one, or source and destination), the index of the
    # dir_fd it is relative to: the check resolves it against that directory, as the call will.
    _DIR_FD_OF = {"os.remove": (1,), "os.unlink": (1,), "os.rmdir": (1,), "os.mkdir": (2,),
                  "os.chmod": (2,), "os.chown": (3,), "os.utime": (3,), "shutil.rmtree": (1,),
                  "os.rename": (2, 3), "os.link": (2, 3), "os.symlink": (None, 2),
                  "shutil.copyfile": (None, None)}
    readlink = os.readlink
    def _absolute(path, fd):
        path = fsdecode(path)
        if isabs(path) or fd is None or fd == -1:
            return path
        return join(readlink("/proc/self/fd/%d" % fd), path)
    _LIST_EVENTS = {"os.listdir", "os.scandir"}
    _DENY = ("socket.", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
             "os.system", "subprocess.", "ctypes.", "os.kill", "os.killpg", "pty.",
             "_posixsubprocess", "resource.setrlimit", "resource.prlimit")
    _DENY_IMPORTS = {"_posixsubprocess", "_ctypes", "ctypes", "_socket", "socket",
                     "_multiprocessing"}
    exit_now, write = os._exit, os.write
    def _stop(why):
        write(2, ("\nWHILEAI_SANDBOX: " + why + "\n").encode("utf-8", "replace"))
        exit_now(86)
    def _inside(path, roots):
        try:
            real = realpath(fsdecode(path))
        except Exception:
            return False
        return any(real == r or real.startswith(r + os.sep) for r in roots)
    def _hook(event, args):
        if event.startswith(_DENY):
            _stop("refused " + event)
        if event == "import" and args and args[0] in _DENY_IMPORTS:
            # These reach fork/exec or raw sockets without passing an audited call.
            _stop("refused import " + str(args[0]))
        if event == "open":
            path, mode = args[0], args[1]
            if isinstance(path, int) or path is None:
                return
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = writing or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            name = fsdecode(path)
            if mode is None and not isabs(name) and (writing or ".." in name.split("/")):
                # os.open's dir_fd is not in the event, so a relative path is checked against
                # the current folder though it may resolve from any directory: only a plain
                # read stays where the check can follow it (the builtin open has no dir_fd).
                _stop("refused os.open(" + repr(name)[:80] + ") relative to a dir_fd")
            if _inside(path, (work,)):
                return
            if not writing and (_inside(path, allowed_read) or fsdecode(path) in
                                ("/dev/null", "/dev/urandom")):
                return
            _stop("refused open(" + repr(fsdecode(path))[:80] + ") outside the sandbox")
        elif event in _LIST_EVENTS:
            path = args[0] if args and args[0] is not None else "."
            if not _inside(path, (work,) + allowed_read):
                _stop("refused " + event + "(" + repr(fsdecode(path))[:80] + ")")
        elif event in _PATH_EVENTS:
            fds = _DIR_FD_OF.get(event, (None,))
            for i, fd_at in enumerate(fds):
                path = args[i] if i < len(args) else None
                fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
                if isinstance(path, int) and event == "os.truncate":
                    continue  # ftruncate: the descriptor was opened for writing, so checked
                if not isinstance(path, (str, bytes, os.PathLike)):
                    _stop("refused " + event + "(" + repr(path)[:80] + ")")
                try:
                    full = _absolute(path, fd)
                    if event == "os.symlink" and i == 0 and not isabs(full):
                        # A link's target is read from the link's folder, not the current one.
                        full = join(dirname(realpath(_absolute(args[1], args[2]))), full)
                except Exception:
                    full = None
                if full is None or not _inside(full, (work,)):
                    _stop("refused " + event + "(" + repr(fsdecode(path))[:80] + ")")
    return _hook
_run()
"""


def extract_code(text: str) -> str:
    """The reply's last fenced python block, else the reply itself."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


# Syscalls the candidate never needs and the audit hook cannot see every road to
# (`os.pidfd_open` + `signal.pidfd_send_signal` raise no audit event; `_imp` can rebuild a
# module the bootstrap pruned): signals to other processes, tracing, raw sockets, rlimits.
# x86-64 numbers; on another architecture the filter lets everything through.
_AUDIT_ARCH_X86_64 = 0xC000003E
_BLOCKED_SYSCALLS = (
    62,  # kill
    200,  # tkill
    234,  # tgkill
    129,  # rt_sigqueueinfo
    297,  # rt_tgsigqueueinfo
    424,  # pidfd_send_signal
    434,  # pidfd_open
    101,  # ptrace
    310,  # process_vm_readv
    311,  # process_vm_writev
    41,  # socket
    53,  # socketpair
    42,  # connect
    160,  # setrlimit
    302,  # prlimit64
)


def _seccomp_program() -> bytes:
    """A classic-BPF seccomp filter: EPERM for `_BLOCKED_SYSCALLS` (and the x32 ABI)."""
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    body = [(ld, 0, 0, 4)]  # architecture
    n = len(_BLOCKED_SYSCALLS)
    # after the arch test: ld nr, jge x32, n x jeq, allow, deny
    body.append((jeq, 0, n + 2, _AUDIT_ARCH_X86_64))  # other arch: jump to allow
    body.append((ld, 0, 0, 0))  # syscall number
    body.append((jge, n + 1, 0, 0x40000000))  # x32 calls: deny
    for i, nr in enumerate(_BLOCKED_SYSCALLS):
        body.append((jeq, n - i, 0, nr))
    body.append((ret, 0, 0, 0x7FFF0000))  # allow
    body.append((ret, 0, 0, 0x00050000 | 1))  # errno EPERM
    return b"".join(struct.pack("=HBBI", *ins) for ins in body)


def _seccomp_installer() -> Any:
    """A no-argument callable that installs the filter in the current (forked) process, or
    None where it cannot (not Linux x86-64, no libc): prepared before the fork so the child
    only calls."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    program = _seccomp_program()
    filters = ctypes.create_string_buffer(program, len(program))

    class _Prog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    prog = _Prog(len(program) // 8, ctypes.addressof(filters))
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                      ctypes.c_ulong)  # fmt: skip

    def install() -> None:
        keep = filters  # the buffer must outlive the call
        if prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if prctl(22, 2, ctypes.addressof(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
            raise OSError(ctypes.get_errno(), "seccomp filter refused")
        del keep

    return install


def _limits(cpu: int, memory: int, fsize: int, nproc: int) -> Any:
    seccomp = _seccomp_installer()

    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if seccomp is not None:  # last: it forbids setrlimit
            seccomp()

    return apply


def _tail(path: Path, n: int = 4000) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - n))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "no output"


def run_sandboxed(
    code: str,
    tests: str,
    *,
    timeout: float = 10.0,
    memory_mb: int = 512,
    file_mb: int = 16,
    max_procs: int = 32,
) -> tuple[bool, str]:
    """(passed, reason) for `code` followed by `tests` in a contained interpreter."""
    token = secrets.token_hex(16).encode()
    with tempfile.TemporaryDirectory(prefix="whileai-exec-") as work:
        root = Path(work)
        (root / "candidate.py").write_text(code, encoding="utf-8")
        (root / "tests.py").write_text(tests, encoding="utf-8")
        out_path, err_path = root / ".stdout", root / ".stderr"
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "HOME": work,
            "TMPDIR": work,
        }
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOTSTRAP, work],
                cwd=work,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=_limits(
                    max(1, int(timeout) + 1), memory_mb << 20, file_mb << 20, max_procs
                ),
            )
            started = time.monotonic()
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(token + b"\n")
            proc.stdin.close()
            try:
                code_rc = proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
                code_rc = -9
            finally:
                # The whole session goes: a fork bomb's children die with their parent.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        elapsed = time.monotonic() - started
        stderr = _tail(err_path)
        stdout = _tail(out_path)
    if timed_out:
        return False, f"stopped at the {timeout:g}s wall limit (hung, busy or forking)"
    marker = re.findall(r"WHILEAI_SANDBOX: ([^\n]+)", stderr)
    if code_rc == _VIOLATION and marker:
        return False, f"sandbox: {marker[-1]}"
    if code_rc == 0 and f"WHILEAI_PASSED {token.decode()}" in stdout:
        return True, f"tests passed in {elapsed:.2f}s"
    if code_rc == 0:
        return False, "exited before its tests finished (exit status 0 is not a pass)"
    if code_rc == -signal.SIGXCPU:
        return False, f"CPU limit of {timeout:g}s exceeded"
    if code_rc == -signal.SIGXFSZ:
        return False, f"file size limit of {file_mb} MB exceeded"
    last = _last_error(stderr)
    if "File too large" in last:
        return False, f"file size limit of {file_mb} MB exceeded"
    if "MemoryError" in last:
        return False, f"memory limit of {memory_mb} MB exceeded (MemoryError)"
    if code_rc < 0:
        return False, f"killed by signal {-code_rc}: {last}"
    return False, f"tests failed: {last}"


def code_exec(
    *,
    field: str | None = None,
    timeout: float = 10.0,
    memory_mb: int = 512,
    file_mb: int = 16,
) -> Judge:
    """A judge that runs the reply's code against the row's hidden tests."""

    def judge(row: dict[str, Any]) -> dict[str, Any]:
        tests: Any = None
        privileged = row.get("privileged")
        if field is None and isinstance(privileged, dict) and privileged.get("tests"):
            tests = privileged["tests"]
        if tests is None:
            tests = gold_of(row, field)
        if isinstance(tests, list):
            tests = "\n".join(str(t) for t in tests)
        if not isinstance(tests, str) or not tests.strip():
            raise NoGold("the row's hidden tests are empty")
        passed, reason = run_sandboxed(
            extract_code(reply_text(row)),
            tests,
            timeout=timeout,
            memory_mb=memory_mb,
            file_mb=file_mb,
        )
        return {"reward": 1.0 if passed else 0.0, "reason": reason}

    return Judge(
        name="code-exec",
        fn=judge,
        meta={"version": "code-exec@1", "timeout": timeout, "memory_mb": memory_mb},
        own_timeout=True,  # a candidate past its wall limit scores 0; the judge did not hang
    )
