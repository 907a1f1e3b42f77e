"""The cgroups each sandbox runs in: a pids group and a memory group of its own.

RLIMIT_NPROC counts per user and binds nobody running as root, where a fork bomb is most
at home; the pids controller binds everyone. RLIMIT_AS bounds one process, not the
thirty it may fork, nor the tmpfs pages and inodes it fills; the memory controller bounds
them all together (the kernel kills inside the group when it is full).

A grader makes one child group per run and controller under its own cgroup (cgroup v1's
hierarchies, or v2 where the controller is delegated), sets the limit, moves the
sandbox's first process in before it can fork, and kills whatever is left and removes the
group after. Where a controller has no writable group, the run says so in `judge_meta`
rather than pretend.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import signal
import time
from pathlib import Path

from ...procs import pid_alive

# The limit file of each controller, in cgroup v1 and v2.
_LIMIT_FILES = {"pids": ("pids.max", "pids.max"), "memory": ("memory.limit_in_bytes", "memory.max")}
_PROBE_LIMITS = {"pids": "8", "memory": str(64 << 20)}


@functools.lru_cache(maxsize=4)
def controller_base(controller: str) -> tuple[str | None, bool, str]:
    """(the folder per-run groups are made in, whether it is v2, a note), or (None, False,
    why not)."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError as exc:
        return None, False, f"no cgroups to read ({exc.strerror})"
    for line in mounts:
        fields = line.split()
        if "-" not in fields:
            continue
        tail = fields[fields.index("-") + 1 :]
        root, point, fstype, opts = fields[3], fields[4], tail[0], tail[-1].split(",")
        v2 = fstype == "cgroup2"
        if fstype == "cgroup" and controller in opts:
            own = [
                g.split(":", 2)[2] for g in groups if controller in g.split(":", 2)[1].split(",")
            ]
        elif v2:
            own = [g.split(":", 2)[2] for g in groups if g.startswith("0::")]
        else:
            continue
        if not own or os.path.commonpath([own[0], root]) != root:
            continue
        base = os.path.normpath(point + own[0][len(root.rstrip("/")) :])
        if v2 and not _delegated(base, controller):
            continue
        problem = _try_group(base, controller, v2)
        if problem:
            return None, False, problem
        return base, v2, f"cgroup {base}"
    return None, False, f"no {controller} cgroup controller mounted for this process"


def _delegated(base: str, controller: str) -> bool:
    try:
        return controller in Path(base, "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def _try_group(base: str, controller: str, v2: bool) -> str | None:
    """Why a child group cannot be made and limited under `base`, or None."""
    _sweep(base)
    probe = os.path.join(base, f"whileai-{os.getpid()}-probe")
    try:
        os.mkdir(probe)
        try:
            Path(probe, _LIMIT_FILES[controller][v2]).write_text(_PROBE_LIMITS[controller])
        finally:
            os.rmdir(probe)
    except OSError as exc:
        return f"cannot make a {controller} cgroup under {base} ({exc.strerror})"
    return None


def _sweep(base: str) -> None:
    """Remove the empty groups a grader that was killed left behind."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            m = re.fullmatch(r"whileai-(\d+)-\w+", name)
            if m and not pid_alive(int(m.group(1))):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(base, name))


_SEQ = itertools.count()


class RunGroups:
    """One run's groups: every process the run makes counts against their limits.

    `limits` maps a controller to its limit (pids, or bytes of memory); `notes` says, for
    a controller that has no group, why."""

    def __init__(self, limits: dict[str, int]) -> None:
        name = f"whileai-{os.getpid()}-{next(_SEQ)}"
        self.paths: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        for controller, limit in limits.items():
            base, v2, note = controller_base(controller)
            if base is None:
                self.notes[controller] = note
                continue
            path = os.path.join(base, name)
            try:
                os.mkdir(path)
                self.paths[controller] = path
                Path(path, _LIMIT_FILES[controller][v2]).write_text(str(limit))
            except OSError as exc:
                self.notes[controller] = f"{controller} cgroup failed: {exc.strerror}"
                self.paths.pop(controller, None)
                with contextlib.suppress(OSError):
                    os.rmdir(path)

    def add(self, pid: int) -> None:
        for path in self.paths.values():
            Path(path, "cgroup.procs").write_text(str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.paths.values():
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in Path(path, "cgroup.procs").read_text().split())
        return found

    def kill(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left in the groups and remove them (noted if one would not go)."""
        deadline = time.monotonic() + 5
        for controller, path in list(self.paths.items()):
            while True:
                self.kill()
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        self.notes[controller] = f"{controller} cgroup {path} would not empty"
                        break
                    time.sleep(0.001)
            del self.paths[controller]
