"""Start one untrusted Python process inside bubblewrap, in cgroups of its own, and end
it whole.

Each wall is here because code that shares the grader's interpreter, or only its
filesystem view, got out:

- `--unshare-all --unshare-user`: its own user, PID, network, IPC, UTS and mount
  namespaces. It sees no other process, so it cannot signal, trace or read one (no
  `/proc/<ppid>/environ`); its network is a loopback of its own.
- `--cap-drop ALL` and `--disable-userns`: root in a user namespace keeps its capabilities
  there (with them a remount made a read-only bind writable), and a nested user namespace
  would hand them back.
- Its filesystem is the interpreter binary, its standard library (with the prefix's
  site-packages and ensurepip's bundled wheels covered by empty folders), libpython and
  the folders of the shared libraries `ldd` names, all read-only, a fresh `/dev`
  (read-only) and a size-capped tmpfs at `/tmp`, the only place it can write. No `/etc`,
  no `/proc`, no home, no installed packages (`docs/sandbox.md` lists what it can read).
- `--die-with-parent` and the PID namespace: killing the launcher kills the namespace's
  pid 1, and the kernel then kills everything in it, `setsid()` children included.
- A pids and a memory cgroup (see `cgroup`): RLIMIT_NPROC does not bind root, and
  RLIMIT_AS bounds one process, not all it forks nor the tmpfs it fills. Where no cgroup
  is writable the run says so instead of pretending.
- A seccomp filter (bubblewrap's `--seccomp`) refuses signals, tracing, sockets, io_uring
  and namespace calls, and kills the process on a call through any other entry than the
  native x86-64 one (`int 0x80`, x32): a second wall that stands if the first has a hole.
- rlimits (CPU, address space, file size, open files) are set by the runner itself before
  it reads anything untrusted; without capabilities they cannot be raised again.

`--sandbox none` runs the same runner as a plain child process (its own session, the
same rlimits, the cgroup where there is one): for code you trust, and said so in every
row's `judge_meta`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import marshal
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import SandboxUnavailable
from .cgroup import RunGroups

INSTALL_HINT = (
    "code-exec needs bubblewrap to contain untrusted code: install the 'bubblewrap' package "
    "(apt-get install -y bubblewrap), or pass --sandbox none for code you trust"
)
_NO_NAMESPACES = (
    "code-exec: bubblewrap cannot start a sandbox here ({why}): it needs user namespaces "
    "(package 'bubblewrap'); --sandbox none runs code you trust without one"
)
_ENV = {"LANG": "C.UTF-8", "HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONHASHSEED": "0"}


@dataclass(frozen=True)
class Limits:
    cpu_s: int
    memory_mb: int
    file_mb: int
    max_procs: int

    def cgroup_limits(self) -> dict[str, int]:
        """The whole sandbox's: its processes (and pid 1, and the runner), and its memory
        (the runner's address space, its tmpfs, and room for what it forks)."""
        tmpfs = 4 * self.file_mb
        return {"pids": self.max_procs + 2, "memory": (self.memory_mb + tmpfs + 64) << 20}

    def rlimits(self, *, nproc: bool) -> dict[str, int]:
        out = {"cpu": self.cpu_s, "as": self.memory_mb << 20, "fsize": self.file_mb << 20,
               "nofile": 64, "core": 0}  # fmt: skip
        if nproc:  # only where no cgroup counts processes: it binds nobody running as root
            out["nproc"] = self.max_procs
        return out


# -- the interpreter and what it needs of the host ------------------------------------------


@functools.lru_cache(maxsize=1)
def interpreter() -> tuple[str, str]:
    """(the real interpreter binary, its resolved prefix): a venv's python is a link to it."""
    exe = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    return exe, os.path.realpath(sys.base_prefix)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# Asked of the interpreter itself, started as the sandbox starts it (no site, a clean
# environment): where it imports the standard library from, and where its own installs go.
_LAYOUT = (
    "import json, sys, sysconfig\n"
    "paths = sysconfig.get_paths()\n"
    "print(json.dumps([sys.path, [paths['purelib'], paths['platlib']]]))\n"
)


@functools.lru_cache(maxsize=1)
def stdlib_layout() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the folders and archives the sandboxed interpreter imports from: the standard
    library; the folders inside them that hold other code, hidden in the sandbox).

    Binding the whole prefix gave the candidate the interpreter's own site-packages (every
    package installed there, importable by adding it to `sys.path`), its scripts and
    headers. The standard library's folder holds two kinds of third-party code: the
    prefix's site-packages (pyenv, python.org and standalone builds put it there), and
    ensurepip's bundled pip and setuptools wheels (importable from the zip).
    """
    exe, _ = interpreter()
    try:
        done = subprocess.run([exe, "-B", "-S", "-s", "-c", _LAYOUT], capture_output=True,
                              env=_ENV, timeout=30, check=True)  # fmt: skip
        path, installs = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise SandboxUnavailable(f"code-exec: cannot ask {exe} where its standard library "
                                 f"is ({exc})") from None  # fmt: skip
    roots: list[str] = []
    for entry in path:
        if isinstance(entry, str) and os.path.isabs(entry) and os.path.exists(entry):
            real = os.path.realpath(entry)
            if not any(_inside(real, r) for r in roots):
                roots = [r for r in roots if not _inside(r, real)] + [real]
    hidden: set[str] = set()
    for root in roots:
        if not os.path.isdir(root):
            continue
        candidates = [*installs, os.path.join(root, "ensurepip", "_bundled")]
        candidates += [os.path.join(root, name) for name in ("site-packages", "dist-packages")]
        for folder in candidates:
            real = os.path.realpath(folder) if isinstance(folder, str) else ""
            if real and real != root and _inside(real, root) and os.path.isdir(real):
                hidden.add(real)
    return tuple(roots), tuple(sorted(hidden))


@functools.lru_cache(maxsize=1)
def runtime_binds() -> tuple[str, ...]:
    """bwrap arguments that mount, read-only, the interpreter, its standard library (and
    nothing else of its prefix) and the shared libraries it loads."""
    exe, prefix = interpreter()
    roots, hidden = stdlib_layout()
    binds: list[tuple[str, str]] = [(exe, exe), *((root, root) for root in roots)]
    libraries = _shared_libraries(exe)
    out: list[str] = []
    if libraries is None:  # no ldd: the usual system folders, as the host lays them out
        for d in ("/lib", "/lib64", "/usr/lib", "/usr/lib64"):
            if os.path.islink(d):
                out += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                out += ["--ro-bind", d, d]
        libraries = []
    for shown in libraries:
        real = os.path.realpath(shown)
        if _inside(real, prefix):
            # libpython and its kin: the file alone, not the folder (which holds the
            # standard library's parent, and more).
            binds += [(real, real)] + ([(real, shown)] if shown != real else [])
            continue
        # The library's folder (the loader finds an extension module's libraries there),
        # and the path the binary names when it is elsewhere (the ELF interpreter).
        folder = os.path.dirname(real)
        if (folder, folder) not in binds:
            binds.append((folder, folder))
        if os.path.dirname(shown) != folder:
            binds.append((real, shown))
    masks = []
    for folder in hidden:  # an empty, read-only folder over each
        masks += ["--tmpfs", folder, "--remount-ro", folder]
    return (*_flat(binds), *out, *masks)


def _flat(binds: list[tuple[str, str]]) -> list[str]:
    seen: set[tuple[str, str]] = set()
    out: list[str] = []
    for bind in binds:
        if bind not in seen:
            seen.add(bind)
            out += ["--ro-bind", bind[0], bind[1]]
    return out


def _shared_libraries(exe: str) -> list[str] | None:
    """The libraries `exe` loads, as the binary names them; None where ldd cannot tell."""
    ldd = shutil.which("ldd")
    if not ldd:
        return None
    try:
        out = subprocess.run([ldd, exe], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.findall(r"^\s*(?:\S+ => )?(/\S+) \(0x", out, re.MULTILINE)
    if found or "not a dynamic executable" in out or "statically linked" in out:
        return found
    return None


# The runner arrives on stdin ahead of the candidate's source, compiled once per grader:
# compiling it in every sandbox cost more than starting the sandbox.
_BOOT = (
    "import marshal,sys;"
    "[exec(c,globals()) for c in marshal.loads(sys.stdin.buffer.read(int(sys.argv[1])))]"
)


def runner_command(role: str, fds: list[int], limits: dict[str, int]) -> list[str]:
    exe, _ = interpreter()
    size = str(len(runner_code()))
    wanted = ",".join(f"{key}={value}" for key, value in limits.items())
    return [exe, "-B", "-S", "-s", "-c", _BOOT, size, role, *map(str, fds), wanted]


@functools.lru_cache(maxsize=1)
def runner_code() -> bytes:
    """The wire's code, then the runner's, marshalled: run in order in one namespace."""
    from . import runner, wire

    codes = []
    for module in (wire, runner):
        path = module.__file__
        assert path is not None
        codes.append(compile(Path(path).read_text(encoding="utf-8"), path, "exec"))
    return marshal.dumps(tuple(codes))


# -- seccomp: the second wall -----------------------------------------------------------------

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
# x86-64 numbers. rlimits are lowered by the runner after the filter is in (bubblewrap
# installs it at exec), so setrlimit stays allowed: without capabilities it cannot raise.
_BLOCKED_SYSCALLS = (
    62, 200, 234, 129, 297,  # kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo
    424, 434, 438,  # pidfd_send_signal, pidfd_open, pidfd_getfd
    101, 310, 311,  # ptrace, process_vm_readv, process_vm_writev
    41, 53, 42, 49, 50,  # socket, socketpair, connect, bind, listen
    425, 426, 427,  # io_uring_setup, io_uring_enter, io_uring_register (no seccomp inside)
    165, 166, 155, 272, 308,  # mount, umount2, pivot_root, unshare, setns
    248, 249, 250, 321, 323, 298,  # add_key, request_key, keyctl, bpf, userfaultfd, perf
    175, 313, 176, 246, 320,  # init_module, finit_module, delete_module, kexec_load/_file
    303, 304,  # name_to_handle_at, open_by_handle_at
)  # fmt: skip


def seccomp_program() -> bytes | None:
    """A classic-BPF filter for x86-64: EPERM for `_BLOCKED_SYSCALLS`; the process killed
    for any call through another entry. None off x86-64, where the namespaces stand alone.

    A call's number means nothing without its ABI: through `int 0x80` (the i386 entry,
    AUDIT_ARCH_I386) 37 is kill and 359 socket, and through the x32 entry (the native arch
    with `__X32_SYSCALL_BIT` set) every number is another call again. A filter that only
    compares numbers lets each of them through, so it checks the architecture first and
    kills on anything but native x86-64 calls: no Python program makes the others.
    """
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return None
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    n = len(_BLOCKED_SYSCALLS)
    first = 5  # index of the first blocked-number test; jumps count from the next one
    allow, deny, kill = first + n, first + n + 1, first + n + 2
    body = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, _AUDIT_ARCH_X86_64),
        (ret, 0, 0, _RET_KILL_PROCESS),  # `int 0x80` (i386), or any other arch
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, kill - 5, 0, _X32_SYSCALL_BIT),  # the x32 ABI
    ]
    body += [(jeq, deny - (first + i) - 1, 0, nr) for i, nr in enumerate(_BLOCKED_SYSCALLS)]
    body += [(ret, 0, 0, _RET_ALLOW), (ret, 0, 0, _RET_ERRNO | 1), (ret, 0, 0, _RET_KILL_PROCESS)]
    assert len(body) == kill + 1 and body[allow][3] == _RET_ALLOW
    return b"".join(struct.pack("=HBBI", *ins) for ins in body)


# -- one jailed process ---------------------------------------------------------------------------


def bwrap_prefix(bwrap: str, limits: Limits) -> list[str]:
    argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--clearenv"]  # fmt: skip
    for key, value in _ENV.items():
        argv += ["--setenv", key, value]
    argv += runtime_binds()
    argv += ["--dev", "/dev", "--remount-ro", "/dev"]
    argv += ["--size", str(4 * limits.file_mb << 20), "--tmpfs", "/tmp", "--chdir", "/tmp"]
    return [*argv, "--remount-ro", "/"]


class Jail:
    """One runner process, in a bubblewrap sandbox or (trusted) outside one.

    `stdin` is all it will read on fd 0; `pass_fds` are the pipes it talks over."""

    def __init__(
        self,
        role: str,
        fds: list[int],
        *,
        stdin: bytes,
        limits: Limits,
        bwrap: str | None,
        seccomp: bool,
    ) -> None:
        self.bwrap, self.limits = bwrap, limits
        self.groups = RunGroups(limits.cgroup_limits())
        nproc = "pids" not in self.groups.paths
        command = runner_command(role, fds, limits.rlimits(nproc=nproc))
        self._stderr = os.memfd_create("whileai-sandbox", os.MFD_CLOEXEC)
        self._workdir: str | None = None
        try:
            if bwrap is not None:
                self.proc = self._start_bwrap(bwrap, command, fds, seccomp)
            else:
                self._workdir = work = tempfile.mkdtemp(prefix="whileai-exec-")
                self.proc = subprocess.Popen(
                    command,
                    cwd=work,
                    env={**_ENV, "HOME": work, "TMPDIR": work},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=self._stderr,
                    pass_fds=fds,
                    start_new_session=True,
                )
                self.groups.add(self.proc.pid)  # the runner is still reading its stdin
        except BaseException:
            self.close()
            self.release()
            raise
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(runner_code() + stdin)
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def _start_bwrap(
        self, bwrap: str, command: list[str], fds: list[int], seccomp: bool
    ) -> subprocess.Popen[bytes]:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        extra = [info_w, block_r]
        argv = [*bwrap_prefix(bwrap, self.limits), "--info-fd", str(info_w)]
        argv += ["--block-fd", str(block_r)]
        program = seccomp_program() if seccomp else None
        if program is not None:
            filter_r, filter_w = os.pipe()
            os.write(filter_w, program)  # a few hundred bytes: the pipe holds them
            os.close(filter_w)
            extra.append(filter_r)
            argv += ["--seccomp", str(filter_r)]
        try:
            proc = subprocess.Popen(
                [*argv, *command], env={"LANG": "C.UTF-8"}, stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=self._stderr, pass_fds=[*fds, *extra],
            )  # fmt: skip
        finally:
            for fd in extra:
                os.close(fd)
        self.proc = proc
        try:
            # bwrap names its child (pid 1 of the namespace), which waits on block-fd before
            # it forks the runner: it goes in the cgroup first, and all it forks with it.
            # (bwrap itself only waits; moving a process costs a few ms in cgroup v1.)
            try:
                child = json.loads(_read_all(info_r, deadline=time.monotonic() + 10))["child-pid"]
            except (ValueError, KeyError, TypeError):
                child = None
            if not isinstance(child, int):
                proc.wait(timeout=10)
                raise SandboxUnavailable(f"bubblewrap did not start: {self.stderr_tail(300)}")
            self.groups.add(child)
            os.write(block_w, b"1")
        finally:
            os.close(info_r)
            os.close(block_w)
        return proc

    def kill(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(OSError):
                if self.bwrap is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()  # pid 1 of the namespace dies with it, and all it holds
        self.groups.kill()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> int | None:
        """Kill whatever is left, reap it, remove the cgroup; the exit status."""
        self.kill()
        code = None
        proc = getattr(self, "proc", None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=10)
        self.groups.remove()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
        return code

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            size = os.fstat(self._stderr).st_size
            data = os.pread(self._stderr, n, max(0, size - n))
        except OSError:
            return ""
        lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:n] if lines else "no message"

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._stderr)

    def exit_note(self, code: int | None) -> str | None:
        """What an exit status says about the run, in words."""
        if code is None or code == 0:
            return None
        sig = -code if code < 0 else code - 128 if self.bwrap and code > 128 else 0
        if sig == signal.SIGXCPU:
            return f"CPU limit of {self.limits.cpu_s}s exceeded"
        if sig == signal.SIGXFSZ:
            return f"file size limit of {self.limits.file_mb} MB exceeded"
        if sig == signal.SIGKILL:
            return "killed (SIGKILL: the hard CPU limit, or out of memory)"
        if sig == signal.SIGSYS and self.bwrap is not None:
            return "killed by the seccomp filter: SIGSYS, a system call through a non-native entry"
        if sig:
            try:
                return f"ended by {signal.Signals(sig).name}"
            except ValueError:
                return f"ended by signal {sig}"
        return f"exited with status {code}"


def _read_all(fd: int, *, deadline: float) -> bytes:
    chunks = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


# -- can this machine sandbox at all? ---------------------------------------------------------

_PROBE_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> tuple[str | None, bool]:
    """(why bubblewrap cannot run the interpreter here, or None; whether seccomp installs)."""
    limits = Limits(cpu_s=10, memory_mb=512, file_mb=1, max_procs=8)
    exe, _ = interpreter()
    base = bwrap_prefix(bwrap, limits)
    check = [exe, "-B", "-S", "-s", "-c", "import json, resource"]
    program = seccomp_program()
    attempts = [True, False] if program is not None else [False]
    last = ""
    for with_filter in attempts:
        argv, fds = list(base), []
        if with_filter:
            assert program is not None
            r, w = os.pipe()
            os.write(w, program)
            os.close(w)
            argv += ["--seccomp", str(r)]
            fds.append(r)
        try:
            done = subprocess.run([*argv, *check], capture_output=True, pass_fds=fds,
                                  env={"LANG": "C.UTF-8"}, timeout=30)  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            return _NO_NAMESPACES.format(why=exc), False
        finally:
            for fd in fds:
                os.close(fd)
        if done.returncode == 0:
            return None, with_filter
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = lines[-1][:200] if lines else f"exit status {done.returncode}"
    return _NO_NAMESPACES.format(why=last), False


def check_bubblewrap() -> tuple[str, bool]:
    """(the bwrap binary, whether the seccomp filter installs); SandboxUnavailable when
    the package is missing or cannot make namespaces here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(INSTALL_HINT)
    with _PROBE_LOCK:
        problem, seccomp = _probe(bwrap)
    if problem is not None:
        raise SandboxUnavailable(problem)
    return bwrap, seccomp
